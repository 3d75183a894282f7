/**
 * How a map input is read and an output written, by `content` type (IBM "map": "`content` is
 * application/xml or application/json; if none is selected the content is treated as JSON").
 *
 * This is the extension point for the SOAP work item: an XML codec decodes an XML body into
 * the tree the actions walk (`input.Envelope.Body.financingResult.paymentAmount`) and encodes
 * the built tree back into XML. Until it lands, `application/xml` passes values through: an
 * input that is already a parsed object is walked as is, and an output is written as the
 * object (or string) the actions built.
 */

/** Reads and writes one content type for the map policy. */
export interface MapCodec {
  /** Media type this codec handles, e.g. `application/json`. */
  readonly contentType: string;
  /** The tree the actions read, from the input variable's value. */
  decode(value: unknown): unknown;
  /** The value written to the output variable, from the tree the actions built. */
  encode(tree: unknown): unknown;
}

/** JSON: strings and bytes are parsed; an unparsable string is walked as a plain string. */
export const jsonCodec: MapCodec = {
  contentType: 'application/json',
  decode(value) {
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    if (typeof text !== 'string' || !/^\s*[[{"]/.test(text)) return text;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  },
  encode(tree) {
    return tree;
  },
};

/** Placeholder until the XML codec arrives with the SOAP work item: values pass through unchanged. */
export const passThroughXmlCodec: MapCodec = {
  contentType: 'application/xml',
  decode(value) {
    return Buffer.isBuffer(value) ? value.toString('utf8') : value;
  },
  encode(tree) {
    return tree;
  },
};

/** Codecs by media type; the SOAP work item replaces the `application/xml` entry. */
export const mapCodecs: Record<string, MapCodec> = {
  'application/json': jsonCodec,
  'application/xml': passThroughXmlCodec,
  'text/xml': passThroughXmlCodec,
};

/** The codec for a `content` field; absent or unknown JSON-like types read as JSON. */
export function codecFor(content: string | undefined): MapCodec | undefined {
  if (content === undefined || content === '' || content === 'none') return jsonCodec;
  const type = content.toLowerCase().split(';')[0].trim();
  if (mapCodecs[type] !== undefined) return mapCodecs[type];
  if (type.endsWith('+json')) return jsonCodec;
  if (type.endsWith('+xml')) return mapCodecs['application/xml'];
  return undefined;
}
