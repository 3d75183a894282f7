/** The output bound of every XML conversion (DESIGN §6: output bounded by a small multiple of the input). */
import { XmlError } from './xml-error.ts';

/**
 * A conversion (XML → JSON, JSON → XML, the map's XML reading) writes at most this many
 * characters per byte of its input: BadgerFish repeats every namespace in scope on every
 * element, so without a bound a few hundred prefixes over many small elements turn 87 KB into
 * 110 MB. Real SOAP and WSDL documents convert to about 4 characters per byte.
 */
export const CONVERSION_OUTPUT_FACTOR = 16;

/** …but never less than this many characters, so a small document is never refused for its namespaces. */
export const CONVERSION_OUTPUT_FLOOR = 1024 * 1024;

/** The characters a conversion may still write; refuses the document the moment it would write more. */
export class ConversionBudget {
  /** Most characters the conversion may write. */
  readonly limit: number;
  private spent = 0;

  constructor(readonly inputBytes: number) {
    this.limit = Math.max(CONVERSION_OUTPUT_FLOOR, CONVERSION_OUTPUT_FACTOR * inputBytes);
  }

  /** Characters counted so far. */
  get used(): number {
    return this.spent;
  }

  /** Counts `characters` of output. @throws XmlError `too-expansive` past the limit. */
  spend(characters: number): void {
    this.spent += characters;
    if (this.spent > this.limit) {
      throw new XmlError(
        'too-expansive',
        `converting this ${this.inputBytes}-byte document would write more than ${this.limit} characters ` +
          `(${CONVERSION_OUTPUT_FACTOR} per input byte, at least ${CONVERSION_OUTPUT_FLOOR}): ` +
          'refused as an amplification',
      );
    }
  }
}
