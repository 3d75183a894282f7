/**
 * Reads a definition file's text as JSON (when it starts with `{` or `[`) or YAML, with the
 * parser's line and column in the error. YAML aliases are capped by the `yaml` library's
 * `maxAliasCount`, so an alias bomb is refused rather than expanded.
 */
import { parseDocument } from 'yaml';
import { PorticoError } from '../errors.ts';
import { nulField } from '../nul.ts';

export type TextFormat = 'JSON' | 'YAML';

/** Parses YAML or JSON text; throws `PorticoError('DEF_PARSE')` with line and column when malformed. */
export function parseText(text: string, file: string): { value: unknown; format: TextFormat } {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  const format: TextFormat = trimmed.startsWith('{') || trimmed.startsWith('[') ? 'JSON' : 'YAML';
  const value = format === 'JSON' ? parseJson(text, file) : parseYaml(text, file);
  // Written `\u0000` (JSON) or `\0` (YAML), it parses; no store could keep the name or title it is in.
  const nul = nulField(value, '$');
  if (nul !== undefined) throw parseError(file, format, `${nul} contains U+0000 (NUL)`, undefined);
  return { value, format };
}

function parseJson(text: string, file: string): unknown {
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
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = document.errors[0];
  if (first !== undefined) {
    const at = first.linePos?.[0];
    const reason = first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw parseError(file, 'YAML', reason, at ? { line: at.line, column: at.col } : undefined);
  }
  return document.toJS({ maxAliasCount: 100 });
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

// V8 names the offset for some JSON errors only; the YAML parser (JSON is YAML 1.2) locates the rest.
function jsonErrorPosition(text: string, message: string): { line: number; column: number } | undefined {
  const position = /position (\d+)/.exec(message);
  if (position) return lineColumn(text, Number(position[1]));
  const at = parseDocument(text).errors[0]?.linePos?.[0];
  return at ? { line: at.line, column: at.col } : undefined;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
