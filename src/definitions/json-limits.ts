/**
 * Depth and size of a JSON text, scanned before `JSON.parse` builds anything: a 10 MiB text of
 * `[` or of `0,` would otherwise become a value no walk can finish.
 */
import { documentLimits, TextProblem, tooDeep, tooManyNodes } from './document-limits.ts';

const quote = 0x22;
const backslash = 0x5c;

/** Throws a {@link TextProblem} at the first bracket past the depth limit or the first value or key past the count. */
export function checkJsonLimits(text: string): void {
  let depth = 0;
  let nodes = 0;
  let inString = false;
  let inLiteral = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === backslash) index++;
      else if (code === quote) inString = false;
      continue;
    }
    switch (text[index]) {
      case '{':
      case '[':
        if (++depth > documentLimits.maxDepth) throw new TextProblem(tooDeep, index);
        nodes++;
        inLiteral = false;
        break;
      case '}':
      case ']':
        depth--;
        inLiteral = false;
        break;
      case '"':
        inString = true;
        nodes++;
        inLiteral = false;
        break;
      case ',':
      case ':':
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        inLiteral = false;
        break;
      default:
        // A number, true, false or null: one value however many characters it takes.
        if (!inLiteral) nodes++;
        inLiteral = true;
    }
    if (nodes > documentLimits.maxNodes) throw new TextProblem(tooManyNodes, index);
  }
}
