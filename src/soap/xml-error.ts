/** The one error every XML parse, conversion and writer throws (src/soap/xml.ts). */

/** Why a document was refused; `code` is stable, `message` says what and where. */
export type XmlErrorCode =
  | 'doctype'
  | 'too-large'
  | 'too-many-nodes'
  | 'too-deep'
  | 'too-many-attributes'
  | 'too-expansive'
  | 'malformed'
  | 'entity'
  | 'namespace';

/** A refused or malformed XML document. */
export class XmlError extends Error {
  constructor(
    readonly code: XmlErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'XmlError';
  }
}
