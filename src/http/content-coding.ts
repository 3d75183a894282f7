/**
 * Content codings (RFC 9110 §8.4) of bodies the gateway reads whole: a consumer's request and a
 * backend's answer. Policies read and rewrite bodies, so a body still coded would be opaque to
 * them (a schema or a script checks bytes the backend reads otherwise) and one they rewrite would
 * go out under a `Content-Encoding` that no longer describes it. Decoding is bounded by the
 * decoded size, so a small compressed body cannot expand past the limit its plain form has.
 * It lives outside gateway/ and policies/ because both use it.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, inflateRaw } from 'node:zlib';
import type { ZlibOptions } from 'node:zlib';

type Decoder = (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>;

const gunzipAsync = promisify(gunzip) as Decoder;
const inflateAsync = promisify(inflate) as Decoder;
const inflateRawAsync = promisify(inflateRaw) as Decoder;
const brotliAsync = promisify(brotliDecompress) as Decoder;

/** `deflate` is zlib-wrapped (RFC 9110 §8.4.1.2); some servers send it raw, as browsers accept. */
const inflateEither: Decoder = (bytes, options) =>
  inflateAsync(bytes, options).catch((error: unknown) => {
    if (isTooLarge(error)) throw error;
    return inflateRawAsync(bytes, options);
  });

const decoders: Record<string, Decoder> = {
  gzip: gunzipAsync,
  'x-gzip': gunzipAsync,
  deflate: inflateEither,
  br: brotliAsync as Decoder,
};

/** More codings stacked than this are refused: real clients and servers apply one. */
const maxCodings = 2;

/**
 * The codings of a `Content-Encoding` value, in the order they were applied, `identity` left out;
 * undefined when one of them cannot be decoded here (or there are too many).
 */
export function contentCodings(field: string | string[] | undefined): string[] | undefined {
  if (field === undefined) return [];
  const text = Array.isArray(field) ? field.join(',') : field;
  const codings = text
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > maxCodings || codings.some((coding) => decoders[coding] === undefined)) return undefined;
  return codings;
}

export interface DecodeOptions {
  /** Decoded bytes allowed; one more rejects with `tooLarge()`. */
  limit: number;
  tooLarge(): Error;
  /** The error for bytes that are not what their coding says, given the coding. */
  corrupt(coding: string): Error;
}

/**
 * Undoes `codings` (as {@link contentCodings} gives them) on `bytes`, last applied first.
 *
 * @example
 * const plain = await decodeContent(bytes, ['gzip'], { limit: 1 << 20, tooLarge, corrupt });
 */
export async function decodeContent(
  bytes: Buffer,
  codings: readonly string[],
  options: DecodeOptions,
): Promise<Buffer> {
  let decoded = bytes;
  for (let i = codings.length - 1; i >= 0 && decoded.length > 0; i--) {
    try {
      // One byte over the limit is enough to know the body is too large.
      decoded = await decoders[codings[i]](decoded, { maxOutputLength: options.limit + 1 });
    } catch (error) {
      throw isTooLarge(error) ? options.tooLarge() : options.corrupt(codings[i]);
    }
    if (decoded.length > options.limit) throw options.tooLarge();
  }
  return decoded;
}

function isTooLarge(error: unknown): boolean {
  return (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
}
