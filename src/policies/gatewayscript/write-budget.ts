/**
 * What one run's writes may carry to the gateway thread (`PORTICO_SCRIPT_WRITE_BYTES`,
 * engine-limits.ts). The engine's memory limit bounds what a script holds inside QuickJS, not
 * what it hands over: eight writes of 8 MiB left 64 MiB on the gateway's heap for one run (a
 * review), more with every run at once. The script worker (worker.ts) and the inline tier
 * (inline.ts) charge every write before it leaves them, so the write past the budget never
 * reaches the gateway thread; the run then fails and the writes before it are undone (write-journal.ts).
 *
 * Writes count cumulatively, not by the size the context ends up holding: a value replaced stays
 * on the heap until the collector runs, `add` appends, every name is a new variable, and only the
 * gateway thread knows what a name already holds. A value counts as the gateway holds it, parsed:
 * its JSON text in UTF-8 bytes, plus {@link bytesPerValue} for each object, array, member and
 * element (an empty object is some 64 bytes of V8 heap against 3 characters of JSON text).
 */

/**
 * Bytes charged per `{`, `[`, `,` and `:` of a value, beyond its text. V8 holds 40–140 bytes per
 * parsed object or array and 8 per small number (measured): so charged, what a run adds to the
 * gateway's heap stays within about 2.5× its charge, while a typical JSON body counts 2–4× its text.
 */
export const bytesPerValue = 16;

const quote = 0x22;
const backslash = 0x5c;

/** JSON values in `json` besides itself, counted by the `{`, `[`, `,` and `:` outside its strings. */
function valuesIn(json: string): number {
  // A string (a text body) holds no other value.
  if (json.charCodeAt(0) === quote) return 0;
  let values = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === quote) {
      // To the string's end in one native search (a character at a time was twice as slow).
      let end = i;
      do {
        end = json.indexOf('"', end + 1);
        if (end < 0) return values;
      } while (escaped(json, end));
      i = end;
    } else if (code === 0x7b || code === 0x5b || code === 0x2c || code === 0x3a) values++;
  }
  return values;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(json: string, at: number): boolean {
  let before = at - 1;
  while (json.charCodeAt(before) === backslash) before--;
  return (at - 1 - before) % 2 === 1;
}

/** What `host(op, a, b)` costs the gateway: its text, and for a variable's JSON value its parsed values. */
export function writeCost(op: string, a: string | undefined, b: string | undefined): number {
  let cost = (a === undefined ? 0 : Buffer.byteLength(a)) + (b === undefined ? 0 : Buffer.byteLength(b));
  if (b !== undefined && (op === 'set' || op === 'add')) cost += bytesPerValue * valuesIn(b);
  return cost;
}

/** One run's account of its writes; reset for each run. */
export class WriteBudget {
  private spent = 0;
  /** The failure's message once a write went past the budget; every later write is refused too. */
  exceeded: string | undefined;

  constructor(private limit: number) {}

  /** Starts a run with `limit` bytes. */
  reset(limit: number): void {
    this.limit = limit;
    this.spent = 0;
    this.exceeded = undefined;
  }

  /**
   * Charges a write (any op but a read): false once the run is past its budget, and for every
   * write after; {@link exceeded} then says why.
   */
  charge(op: string, a: string | undefined, b: string | undefined): boolean {
    if (this.exceeded !== undefined) return false;
    this.spent += writeCost(op, a, b);
    if (this.spent <= this.limit) return true;
    this.exceeded = `the script's writes carried more than ${this.limit} bytes to the gateway in one run; none of them was applied`;
    return false;
  }
}
