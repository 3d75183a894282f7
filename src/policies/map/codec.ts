/**
 * How a map input is read and an output written, by `content` type (IBM "map": "`content` is
 * application/xml or application/json; if none is selected the content is treated as JSON").
 *
 * `application/xml` is the XML codec (xml-codec.ts): it decodes an XML body into the tree the
 * actions walk (`input.Envelope.Body.financingResult.paymentAmount`) and encodes the built
 * tree back into XML, guided by the port's schema (bound once per publish by `forPort`).
 */
import type { CompiledApiInfo, FlowContext, JSONSchema, PolicySettings } from '../types.ts';
import type { MapSource } from './origin.ts';
import { xmlCodec } from './xml-codec.ts';

/**
 * What reading a map needs of the API: its document (`$ref`s) and the gateway's body limits (an
 * XML codec's bounds). At import, where the map is read only to be checked, the limits are a stand-in.
 */
export type MapApi = Pick<CompiledApiInfo, 'document'> & {
  settings: Pick<PolicySettings, 'maxRequestBytes' | 'maxBackendBodyBytes'>;
};

/** What a codec may know about the input or output it serves, at publish time. */
export interface MapPort {
  /** The port's schema as written (a `$ref` kept unresolved, so refs inside a target resolve there first). */
  schema: JSONSchema | undefined;
  api: MapApi;
  /** Assembly path of the port, for compile errors. */
  path: string;
  /** The map policy's title, for runtime errors. */
  title: string;
  /** The context variable read or written. */
  variable: string;
  /** The map policy's `options` (includeEmptyXMLElements, namespaceInheritance, …). */
  options: Record<string, unknown>;
}

/** Reads and writes one content type for the map policy. */
export interface MapCodec {
  /** Media type this codec handles, e.g. `application/json`. */
  readonly contentType: string;
  /**
   * The tree the actions read, from the input variable's value (`ctx` for codecs that look at the
   * variable's message; `source` says whether the value is still the consumer's request).
   */
  decode(value: unknown, ctx?: FlowContext, source?: MapSource): unknown;
  /**
   * The value written to the output variable, from the tree the actions built; `source` describes
   * the map's inputs (whose size bounds an XML output, and whose origin names the fault).
   */
  encode(tree: unknown, source?: MapSource): unknown;
  /** A codec bound to one port's schema and options; absent when the codec needs neither. */
  forPort?(port: MapPort): MapCodec;
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

/** Codecs by media type. */
export const mapCodecs: Record<string, MapCodec> = {
  'application/json': jsonCodec,
  'application/xml': xmlCodec,
  'text/xml': xmlCodec,
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
