/**
 * Reads a definition file's text as JSON (when it starts with `{` or `[`) or YAML, with the
 * parser's line and column in the error. Text past {@link documentLimits} (size, nesting, values
 * and keys, YAML aliases expanded) is refused as it is read, so no later walk meets it.
 */
import { parseDocument } from 'yaml';
import { PorticoError } from '../errors.ts';
import { nulField } from '../nul.ts';
import { documentLimits, TextProblem } from './document-limits.ts';
import { checkJsonLimits } from './json-limits.ts';
import { readYaml } from './yaml-value.ts';

export type TextFormat = 'JSON' | 'YAML';

/** Parses YAML or JSON text; throws `PorticoError('DEF_PARSE')` with line and column when malformed or past a limit. */
export function parseText(text: string, file: string): { value: unknown; format: TextFormat } {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  const format: TextFormat = trimmed.startsWith('{') || trimmed.startsWith('[') ? 'JSON' : 'YAML';
  if (text.length > documentLimits.maxChars) {
    const size = `${text.length.toLocaleString('en-US')} characters`;
    throw parseError(file, format, `${size}, more than ${documentLimits.maxChars.toLocaleString('en-US')}`, undefined);
  }
  const value = format === 'JSON' ? parseJson(text, file) : parseYaml(text, file);
  // Written `\u0000` (JSON) or `\0` (YAML), it parses; no store could keep the name or title it is in.
  const nul = nulField(value, '$');
  if (nul !== undefined) throw parseError(file, format, `${nul} contains U+0000 (NUL)`, undefined);
  return { value, format };
}

function parseJson(text: string, file: string): unknown {
  withinLimits(text, file, 'JSON', () => checkJsonLimits(text));
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // V8 quotes a snippet of the text after the reason (`, "{..." is not valid JSON`): keep the reason.
    const reason = message.replace(/, ".*$/s, '');
    throw parseError(file, 'JSON', reason, jsonErrorPosition(text, message));
  }
}

function parseYaml(text: string, file: string): unknown {
  return withinLimits(text, file, 'YAML', () => readYaml(text));
}

/** `read()`'s value; a limit it crossed or a syntax error it met is DEF_PARSE at that offset. */
function withinLimits<T>(text: string, file: string, format: TextFormat, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof TextProblem)) throw error;
    const at = error.offset === undefined ? undefined : lineColumn(text, error.offset);
    throw parseError(file, format, error.reason, at);
  }
}

function parseError(
  file: string,
  format: TextFormat,
  reason: string,
  where: { line: number; column: number } | undefined,
): PorticoError {
  const located = where ? `line ${where.line}, column ${where.column}: ${reason}` : reason;
  return new PorticoError('DEF_PARSE', {
    file,
    format,
    reason: located,
    line: where?.line,
    column: where?.column,
  });
}

// V8 names the offset for some JSON errors only; the YAML parser (JSON is YAML 1.2) locates the
// rest, on text within the limits, without its unique-key check (quadratic in a map's keys).
function jsonErrorPosition(text: string, message: string): { line: number; column: number } | undefined {
  const position = /position (\d+)/.exec(message);
  if (position) return lineColumn(text, Number(position[1]));
  if (/end of JSON input/.test(message)) return lineColumn(text, text.length);
  const at = parseDocument(text, { prettyErrors: true, uniqueKeys: false }).errors[0]?.linePos?.[0];
  return at ? { line: at.line, column: at.col } : undefined;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
