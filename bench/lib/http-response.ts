/**
 * A minimal HTTP/1.1 response parser for the latency generator (bench/open-loop.ts, issue 18):
 * it finds where each response ends and reads its status code, and nothing else — no header
 * strings, no body copies, no objects per response. Bodies framed by `Content-Length`, by
 * `Transfer-Encoding: chunked` (extensions and trailers skipped) or, with neither, by the end of
 * the connection; 1xx interim responses (103 Early Hints…) are skipped; 204 and 304 have no body.
 * A response may arrive split over any number of reads, and one read may hold several responses.
 * Anything it cannot frame (a bad status line, a header without a colon, a non-numeric length, a
 * bad chunk size, a line over 8 KiB) is `MALFORMED`: the caller closes the connection.
 */

/** `execute` found no complete response in the bytes it was given (it consumed all of them). */
export const NEED_MORE = -1;
/** The bytes are not an HTTP/1.1 response this parser can frame. */
export const MALFORMED = -2;

const enum State {
  Status,
  Header,
  Body,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailer,
  UntilClose,
}

const maxLine = 8192;
const lf = 10;
const cr = 13;
const words = {
  http: Buffer.from('http/1.'),
  contentLength: Buffer.from('content-length'),
  transferEncoding: Buffer.from('transfer-encoding'),
  connection: Buffer.from('connection'),
  chunked: Buffer.from('chunked'),
  close: Buffer.from('close'),
};

export class ResponseParser {
  /** Status code of the response last completed (or being parsed). */
  status = 0;
  /** Whether the response last completed was chunked. */
  chunked = false;
  /** Whether the response last completed asked to close the connection (`Connection: close`). */
  close = false;
  private state = State.Status;
  private readonly line = Buffer.allocUnsafe(maxLine);
  private lineLength = 0;
  private contentLength = -1;
  private otherCoding = false;
  private remaining = 0;

  /** Whether a response has started and not completed (bytes would be lost if the connection closed). */
  get inResponse(): boolean {
    return this.state !== State.Status || this.lineLength > 0;
  }

  /**
   * Parses `buf[offset, end)`: the index just past the end of the first response to complete
   * in it (call again from there for the next one), `NEED_MORE` when all of it was consumed
   * without completing one, or `MALFORMED`.
   */
  execute(buf: Buffer, offset: number, end = buf.length): number {
    let at = offset;
    while (at < end) {
      switch (this.state) {
        case State.Body:
        case State.ChunkData: {
          const take = Math.min(this.remaining, end - at);
          at += take;
          this.remaining -= take;
          if (this.remaining > 0) return NEED_MORE;
          if (this.state === State.Body) return this.complete(at);
          this.state = State.ChunkEnd;
          break;
        }
        case State.UntilClose:
          return NEED_MORE;
        default: {
          let newline = buf.indexOf(lf, at);
          if (newline >= end) newline = -1;
          const stop = newline === -1 ? end : newline;
          if (this.lineLength + stop - at > maxLine) return MALFORMED;
          buf.copy(this.line, this.lineLength, at, stop);
          this.lineLength += stop - at;
          if (newline === -1) return NEED_MORE;
          at = newline + 1;
          let length = this.lineLength;
          if (length > 0 && this.line[length - 1] === cr) length--;
          this.lineLength = 0;
          const done = this.onLine(length);
          if (done === MALFORMED) return MALFORMED;
          if (done === 1) return this.complete(at);
        }
      }
    }
    return NEED_MORE;
  }

  /** The connection ended: true when that completes a response framed by the connection's end. */
  finish(): boolean {
    if (this.state !== State.UntilClose) return false;
    this.complete(0);
    return true;
  }

  private complete(at: number): number {
    this.state = State.Status;
    return at;
  }

  /** One line of the head, of a chunk size or of the trailers: 1 = the response is complete, 0 = go on. */
  private onLine(length: number): number {
    const line = this.line;
    switch (this.state) {
      case State.Status: {
        // HTTP/1.x SSS[ reason]
        if (length < 12 || !matches(line, 0, words.http) || line[8] !== 32) return MALFORMED;
        if (length > 12 && line[12] !== 32) return MALFORMED;
        const status = digits(line, 9, 12);
        if (status < 100) return MALFORMED;
        this.status = status;
        this.contentLength = -1;
        this.chunked = false;
        this.otherCoding = false;
        this.close = false;
        this.state = State.Header;
        return 0;
      }
      case State.Header:
        return length === 0 ? this.endOfHead() : this.header(length);
      case State.ChunkSize: {
        let size = 0;
        let at = 0;
        for (; at < length; at++) {
          const digit = hex(line[at]);
          if (digit < 0) break;
          size = size * 16 + digit;
        }
        if (at === 0 || size > 2 ** 40) return MALFORMED;
        // What follows the size may only be whitespace or an extension (`;name=value`).
        if (at < length && line[at] !== 59 && line[at] !== 32 && line[at] !== 9) return MALFORMED;
        this.remaining = size;
        this.state = size === 0 ? State.Trailer : State.ChunkData;
        return 0;
      }
      case State.ChunkEnd:
        if (length !== 0) return MALFORMED;
        this.state = State.ChunkSize;
        return 0;
      case State.Trailer:
        return length === 0 ? 1 : 0;
      default:
        return MALFORMED;
    }
  }

  private header(length: number): number {
    const line = this.line;
    let colon = 0;
    while (colon < length && line[colon] !== 58) colon++;
    if (colon === 0 || colon === length) return MALFORMED;
    let from = colon + 1;
    let to = length;
    while (from < to && (line[from] === 32 || line[from] === 9)) from++;
    while (to > from && (line[to - 1] === 32 || line[to - 1] === 9)) to--;
    if (named(line, colon, words.contentLength)) {
      const value = digits(line, from, to);
      if (value < 0 || (this.contentLength >= 0 && this.contentLength !== value)) return MALFORMED;
      this.contentLength = value;
    } else if (named(line, colon, words.transferEncoding)) {
      // Chunked only when it is the last coding applied; another coding is framed by the close.
      this.chunked = to - from >= 7 && matches(line, to - 7, words.chunked);
      this.otherCoding = !this.chunked;
    } else if (named(line, colon, words.connection)) {
      for (let at = from; at + 5 <= to && !this.close; at++) this.close = matches(line, at, words.close);
    }
    return 0;
  }

  private endOfHead(): number {
    const status = this.status;
    // Interim (1xx, not 101): the final response follows.
    if (status < 200 && status !== 101) {
      this.state = State.Status;
      return 0;
    }
    if (status === 204 || status === 304) return 1;
    if (this.chunked) {
      this.state = State.ChunkSize;
      return 0;
    }
    if (this.contentLength === 0 && !this.otherCoding) return 1;
    if (this.contentLength > 0 && !this.otherCoding) {
      this.remaining = this.contentLength;
      this.state = State.Body;
      return 0;
    }
    this.close = true;
    this.state = State.UntilClose;
    return 0;
  }
}

/** The decimal number in `buf[from, to)`, or -1 if it is empty or not all digits. */
function digits(buf: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let value = 0;
  for (let at = from; at < to; at++) {
    const digit = buf[at] - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function hex(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  const lower = byte | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** Whether the header name `line[0, colon)` is `name` (lowercase), ignoring case. */
function named(line: Buffer, colon: number, name: Buffer): boolean {
  return colon === name.length && matches(line, 0, name);
}

/** Whether `line` holds `word` (written in lowercase) at `at`, ignoring the case of ASCII letters. */
function matches(line: Buffer, at: number, word: Buffer): boolean {
  for (let i = 0; i < word.length; i++) {
    const byte = line[at + i];
    if ((byte >= 65 && byte <= 90 ? byte + 32 : byte) !== word[i]) return false;
  }
  return true;
}
