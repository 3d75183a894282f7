/**
 * HTTP/1.1 on a raw socket, for tests of what a client library would hide: the exact status line,
 * when the server closes the connection, a body that never ends.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';

/** One open connection to the server and what came back on it, with when it came. */
export class RawConnection {
  private text = '';
  private readonly waiters: Array<() => void> = [];
  /** `performance.now()` when the server ended or reset the connection; undefined while it is open. */
  closedAt: number | undefined;
  /** Resolves with {@link closedAt} once the server ends or resets the connection. */
  readonly closed: Promise<number>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.text += chunk.toString('latin1');
      for (const wake of this.waiters.splice(0)) wake();
    });
    // A reset (the server closed while the client was still writing) is a close as well.
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.closedAt ??= performance.now();
        for (const wake of this.waiters.splice(0)) wake();
        resolve(this.closedAt);
      };
      socket.once('end', done);
      socket.once('close', done);
    });
  }

  /** Connects to the host and port of `url`. */
  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /** Everything received so far, one character per byte. */
  get received(): string {
    return this.text;
  }

  /** Writes unless the connection is gone; says whether it wrote. */
  write(bytes: Buffer | string): boolean {
    if (this.closedAt !== undefined || this.socket.destroyed || !this.socket.writable) return false;
    this.socket.write(bytes);
    return true;
  }

  /**
   * Resolves with `performance.now()` once what was received matches `pattern`; rejects after
   * `ms`, or when the connection closes without it.
   */
  async until(pattern: RegExp, ms: number): Promise<number> {
    const deadline = performance.now() + ms;
    while (!pattern.test(this.text)) {
      if (this.closedAt !== undefined) throw new Error(`closed before ${pattern}; received: ${this.text}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no ${pattern} within ${ms} ms; received: ${this.text}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return performance.now();
  }

  /** Destroys the client's side (the end of a test). */
  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * Writes `bytes` on a new connection and collects the answer: until the server closes the
 * connection, or a moment after `answers` status lines arrived, or after `waitMs` (long: a first
 * GatewayScript run starts the script workers, slow on a loaded machine).
 */
export async function exchangeRaw(url: string, bytes: Buffer | string, answers = 1, waitMs = 20_000): Promise<string> {
  const connection = await RawConnection.open(url);
  connection.write(bytes);
  const lines = new RegExp(`(HTTP/1\\.1 \\d{3} [^]*){${answers}}`);
  try {
    await connection.until(lines, waitMs);
    await Promise.race([connection.closed, new Promise((resolve) => setTimeout(resolve, 100))]);
  } catch {
    // Closed or timed out: what came is the answer.
  }
  connection.destroy();
  return connection.received;
}

/**
 * Sends `head`, then `piece()` every 50 ms for as long as the connection takes it; resolves with
 * what came back, and how long after the answer's head the server closed the connection
 * (Infinity when it did not within `waitCloseMs`).
 */
export async function slowUpload(
  url: string,
  head: string,
  piece: () => string,
  waitCloseMs: number,
): Promise<{ answer: string; closedAfterMs: number }> {
  const connection = await RawConnection.open(url);
  connection.write(head);
  const writer = setInterval(() => connection.write(piece()), 50);
  let waiting: ReturnType<typeof setTimeout> | undefined;
  try {
    const answered = await connection.until(/HTTP\/1\.1 \d{3} [^]*\r\n\r\n/, 10_000);
    const closed = await Promise.race([
      connection.closed,
      new Promise<undefined>((resolve) => {
        waiting = setTimeout(() => resolve(undefined), waitCloseMs);
      }),
    ]);
    const closedAfterMs = closed === undefined ? Number.POSITIVE_INFINITY : closed - answered;
    return { answer: connection.received, closedAfterMs };
  } finally {
    clearInterval(writer);
    clearTimeout(waiting);
    connection.destroy();
  }
}

/** One chunk of a chunked body: `size` bytes of `x`, framed. */
export const chunk = (size: number) => `${size.toString(16)}\r\n${'x'.repeat(size)}\r\n`;

/** The body of a raw answer (after the head); a chunked body is left as framed. */
export function rawBody(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}
