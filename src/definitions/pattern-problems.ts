/**
 * The import rule for the regular expressions of an API document: every JSON Schema `pattern`
 * and `patternProperties` key (in schemas, and in Swagger 2 parameters, headers and items) must
 * compile for the linear engine that matches them against consumer data (linear-pattern.ts).
 * One the gateway could only run with backtracking is refused here, with the path of the field,
 * rather than left to stall the gateway or to drop the API from its snapshot.
 */
import type { DefinitionProblem } from '../errors.ts';
import { appendPath, isRecord } from './json-path.ts';
import { patternRefusal } from './linear-pattern.ts';

// Values that are data, not schemas: a `pattern` inside an example is text.
const dataKeys = new Set(['example', 'examples', 'default', 'enum', 'const']);
// Objects whose keys are names (of properties, definitions, paths, statuses, media types), never keywords.
const nameMaps = new Set([
  'properties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
  'schemas',
  'parameters',
  'requestBodies',
  'responses',
  'headers',
  'content',
  'encoding',
  'paths',
  'callbacks',
]);

/** Every pattern of the document the linear engine refuses, at the JSON path of its field. */
export function patternProblems(document: Record<string, unknown>): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  walk(document, '$', false, problems);
  return problems;
}

function walk(value: unknown, path: string, keysAreNames: boolean, problems: DefinitionProblem[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, appendPath(path, index), false, problems));
    return;
  }
  if (!isRecord(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const at = appendPath(path, key);
    if (keysAreNames) walk(child, at, false, problems);
    else if (key === 'pattern' && typeof child === 'string') check(child, at, problems);
    else if (key === 'patternProperties' && isRecord(child)) {
      for (const [source, schema] of Object.entries(child)) {
        check(source, appendPath(at, source), problems);
        walk(schema, appendPath(at, source), false, problems);
      }
    } else if (!dataKeys.has(key) && !key.startsWith('x-')) walk(child, at, nameMaps.has(key), problems);
  }
}

function check(source: string, path: string, problems: DefinitionProblem[]): void {
  const refusal = patternRefusal(source);
  if (refusal !== undefined) problems.push({ path, rule: refusal.rule, reason: refusal.reason });
}
