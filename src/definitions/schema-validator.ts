/**
 * One ajv instance for every definition schema, and the translation of ajv's errors into
 * {@link DefinitionProblem}s whose `path` is a JSON path into the document and whose `rule`
 * names the broken rule (`type`, `required`, `enum`, `unknown-field`, …).
 */
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { DefinitionProblem } from '../errors.ts';
import type { JSONSchema } from './json-schema.ts';
import { appendPath, isRecord, jsonPath, pointerSegments } from './json-path.ts';

// strict:false because the schemas carry OpenAPI-style annotations (`example`) next to ajv's
// keywords; verbose:true gives each error its parent schema, used to word the reasons.
const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });

const compiled = new WeakMap<JSONSchema, ValidateFunction>();

// A second instance fills in defaults; it only ever sees copies, never a stored document.
const defaulting = new Ajv({ strict: false, useDefaults: true });
const compiledDefaults = new WeakMap<JSONSchema, ValidateFunction>();

/** Validates `data` against `schema` (compiled once per schema object) and returns problems at `basePath`. */
export function schemaProblems(schema: JSONSchema, data: unknown, basePath: string): DefinitionProblem[] {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(data)) return [];
  return ajvProblems(validate.errors ?? [], data, basePath);
}

/** A copy of `data` with the schema's defaults filled in (call on data that passed {@link schemaProblems}). */
export function withDefaults(schema: JSONSchema, data: Record<string, unknown>): Record<string, unknown> {
  let validate = compiledDefaults.get(schema);
  if (validate === undefined) {
    validate = defaulting.compile(schema);
    compiledDefaults.set(schema, validate);
  }
  const copy = structuredClone(data);
  validate(copy);
  return copy;
}

/** Translates ajv errors; drops the echo errors of `if` and of failed `anyOf` branches. */
export function ajvProblems(errors: readonly ErrorObject[], data: unknown, basePath: string): DefinitionProblem[] {
  const branchParents = errors
    .filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf')
    .map((error) => error.schemaPath + '/');
  const problems: DefinitionProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    if (branchParents.some((parent) => error.schemaPath.startsWith(parent))) continue;
    const problem = toProblem(error, data, basePath);
    const key = `${problem.path}\u0000${problem.rule}\u0000${problem.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

function toProblem(error: ErrorObject, data: unknown, basePath: string): DefinitionProblem {
  const path = jsonPath(pointerSegments(error.instancePath, data), basePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return unknownField(path, String(params.additionalProperty), error.parentSchema);
    case 'required':
      return {
        path: appendPath(path, String(params.missingProperty)),
        rule: 'required',
        reason: `${String(params.missingProperty)} is required`,
      };
    case 'type':
      return {
        path,
        rule: 'type',
        reason: `must be ${listWords(params.type, ' or ')}, got ${describe(error.data)}`,
      };
    case 'enum':
      return {
        path,
        rule: 'enum',
        reason: `must be one of ${listWords(params.allowedValues, ', ')}; got ${describe(error.data)}`,
      };
    case 'const':
      return {
        path,
        rule: 'enum',
        reason: `must be ${describe(params.allowedValue)}, got ${describe(error.data)}`,
      };
    case 'anyOf':
    case 'oneOf':
      return { path, rule: 'required', reason: alternativesReason(error) };
    default:
      return { path, rule: error.keyword, reason: error.message ?? `breaks the ${error.keyword} rule` };
  }
}

function unknownField(path: string, field: string, parentSchema: unknown): DefinitionProblem {
  const known = isRecord(parentSchema) && isRecord(parentSchema.properties) ? Object.keys(parentSchema.properties) : [];
  return {
    path: appendPath(path, field),
    rule: 'unknown-field',
    reason: `unknown field ${field}${knownFieldHint(field, known)}`,
  };
}

// A likely typo gets "did you mean"; a short list of fields is shown whole.
function knownFieldHint(field: string, known: string[]): string {
  const closest = known
    .map((name) => ({ name, distance: editDistance(field.toLowerCase(), name.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance)[0];
  if (closest !== undefined && closest.distance <= Math.max(1, Math.floor(field.length / 3)))
    return ` (did you mean ${closest.name}?)`;
  if (known.length > 0 && known.length <= 12) return ` (known fields: ${known.join(', ')})`;
  return '';
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

// `anyOf: [{required: [set]}, {required: [create]}]` reads as "needs one of set, create".
function alternativesReason(error: ErrorObject): string {
  const branches = Array.isArray(error.schema) ? error.schema : [];
  const names = branches.flatMap((branch: unknown) =>
    isRecord(branch) && Array.isArray(branch.required) ? [branch.required.join(' and ')] : [],
  );
  if (names.length === branches.length && names.length > 0) return `needs one of: ${names.join('; ')}`;
  return error.message ?? 'matches none of the accepted forms';
}

function listWords(value: unknown, joiner: string): string {
  const items = Array.isArray(value) ? value : String(value).split(',');
  return items.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join(joiner);
}

/** A short description of a value for a reason: `string "sixty"`, `number 60`, `null`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)}`;
  return `${typeof value} ${String(value)}`;
}
