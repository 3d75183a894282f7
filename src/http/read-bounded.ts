/**
 * One bounded body reader for every body Portico reads whole: a consumer's request (the gateway,
 * 413 past `PORTICO_MAX_REQUEST_BYTES`) and a backend's answer (invoke, 502 past the backend body
 * limit). Chunks are collected through `data` events, not an async iterator: one promise per body,
 * not per chunk. It lives outside gateway/ and policies/ because both use it.
 */
import type { Readable } from 'node:stream';

export interface BoundedReadOptions {
  /** Bytes allowed; one more is too many. */
  limit: number;
  /** The error the read rejects with when the body is larger than `limit`. */
  tooLarge(): Error;
  /**
   * What becomes of the rest of a body that is too large: `drain` reads and drops it while the
   * error answer is written (a consumer that is still sending is not reset before it reads the
   * answer, which then closes the connection: response.ts), `destroy` closes the stream (a
   * backend's pooled connection is not worth reading gigabytes for).
   */
  rest: 'drain' | 'destroy';
}

/**
 * Reads `source` to its end into one Buffer, up to `options.limit` bytes.
 *
 * @example
 * const bytes = await readBounded(req, { limit: 1 << 20, tooLarge: () => new Error('413'), rest: 'drain' });
 */
export function readBounded(source: Readable, options: BoundedReadOptions): Promise<Buffer> {
  const { limit } = options;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        source.off('data', onData);
        if (options.rest === 'destroy') source.destroy();
        else source.resume();
        reject(options.tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    source.on('data', onData);
    source.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    source.once('error', reject);
  });
}
