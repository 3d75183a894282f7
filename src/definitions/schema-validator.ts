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
import type { PathSegment } from './json-path.ts';
import { markedDefinition, splitSchema } from './split-refs.ts';

// strict:false because the schemas carry OpenAPI-style annotations (`example`) next to ajv's
// keywords; verbose:true gives each error its parent schema, used to word the reasons.
const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });

// Per schema, its split parts (split-refs.ts): '' the schema itself, else a definition's name.
const compiled = new WeakMap<JSONSchema, Map<string, ValidateFunction>>();

// A second instance fills in defaults; it only ever sees copies, never a stored document.
const defaulting = new Ajv({ strict: false, useDefaults: true });
const compiledDefaults = new WeakMap<JSONSchema, ValidateFunction>();

/**
 * Validates `data` against `schema` (compiled once per schema object) and returns problems at
 * `basePath`, in ajv's order, each value checked once: time linear in the data and the problems.
 */
export function schemaProblems(schema: JSONSchema, data: unknown, basePath: string): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  collectProblems(schema, undefined, data, basePath, problems);
  return distinct(problems);
}

function collectProblems(
  schema: JSONSchema,
  definition: string | undefined,
  data: unknown,
  basePath: string,
  problems: DefinitionProblem[],
): void {
  const validate = compiledPart(schema, definition);
  if (validate(data)) return;
  for (const error of reportedErrors(validate.errors ?? [])) {
    const marked = markedDefinition(error.parentSchema);
    if (marked === undefined) {
      problems.push(toProblem(error, data, basePath));
      continue;
    }
    // A marked $ref: its value is validated on its own, its problems put where ajv put them.
    const segments = pointerSegments(error.instancePath, data);
    collectProblems(schema, marked, valueAt(data, segments), jsonPath(segments, basePath), problems);
  }
}

function compiledPart(schema: JSONSchema, definition: string | undefined): ValidateFunction {
  let parts = compiled.get(schema);
  if (parts === undefined) {
    parts = new Map();
    compiled.set(schema, parts);
  }
  let validate = parts.get(definition ?? '');
  if (validate === undefined) {
    validate = ajv.compile(splitSchema(schema, definition));
    parts.set(definition ?? '', validate);
  }
  return validate;
}

function valueAt(data: unknown, segments: readonly PathSegment[]): unknown {
  let current = data;
  for (const segment of segments) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (isRecord(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
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

/** The errors worth a problem: not the echo errors of `if`, nor those of failed `anyOf`/`oneOf` branches. */
function reportedErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  // One entry per branching keyword of the schema, however many values failed it.
  const branchParents = [
    ...new Set(
      errors
        .filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf')
        .map((error) => error.schemaPath + '/'),
    ),
  ];
  return errors.filter(
    (error) => error.keyword !== 'if' && !branchParents.some((parent) => error.schemaPath.startsWith(parent)),
  );
}

/** The problems without repeats (ajv reports some twice, through `allOf` and its parent), first seen first. */
function distinct(problems: readonly DefinitionProblem[]): DefinitionProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.rule}\u0000${problem.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
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
