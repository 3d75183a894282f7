/**
 * Helpers the policies share while compiling: reading fields of a block (already checked by its
 * schema in policy.ts; the helpers still name the field's assembly path) and resolving `$ref`s
 * against the API document.
 */
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, JSONSchema } from './types.ts';
import { setOwn } from './variable-names.ts';

/** A policy block as read from YAML. */
export type PolicyBlock = Record<string, unknown>;

/** Checks the block is an object and its `version` is one the policy supports. */
export function readBlock(
  config: unknown,
  policy: { name: string; versions: readonly string[] },
  path: string,
): PolicyBlock {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new PolicyCompileError(path, 'type', `the ${policy.name} policy must be an object`);
  }
  const block = config as PolicyBlock;
  if (block.version !== undefined && !policy.versions.includes(String(block.version))) {
    throw new PolicyCompileError(
      `${path}.version`,
      'unsupported-version',
      `${policy.name} version ${String(block.version)} is not supported (supported: ${policy.versions.join(', ')})`,
    );
  }
  return block;
}

/** The title used in errors: the block's `title`, else the policy name. */
export function titleOf(block: PolicyBlock, name: string): string {
  return typeof block.title === 'string' && block.title !== '' ? block.title : name;
}

/** A required non-empty string field. */
export function requireString(block: PolicyBlock, key: string, path: string): string {
  const value = block[key];
  if (typeof value !== 'string' || value === '') {
    throw new PolicyCompileError(
      `${path}.${key}`,
      value === undefined ? 'required' : 'type',
      `\`${key}\` must be a non-empty string`,
    );
  }
  return value;
}

/** An optional string field (numbers are accepted and stringified, as YAML writes `name: 404`). */
export function optionalString(block: PolicyBlock, key: string, path: string): string | undefined {
  const value = block[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new PolicyCompileError(`${path}.${key}`, 'type', `\`${key}\` must be a string`);
}

/** An optional list field; absent → []. */
export function optionalArray(block: PolicyBlock, key: string, path: string): unknown[] {
  const value = block[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new PolicyCompileError(`${path}.${key}`, 'type', `\`${key}\` must be a list`);
  return value;
}

/** An optional object field; absent → {}. */
export function optionalObject(block: PolicyBlock, key: string, path: string): PolicyBlock {
  const value = block[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new PolicyCompileError(`${path}.${key}`, 'type', `\`${key}\` must be an object`);
  return value as PolicyBlock;
}

/**
 * Resolves a local `$ref` (`#/definitions/shipping`,
 * `#/x-ibm-configuration/targets/financingService/definitions/financingInput`) against the API
 * document, following chained refs; an unknown ref is an `unresolved-ref` compile error.
 */
export function resolveRef(ref: string, api: CompiledApiInfo, path: string): JSONSchema {
  const seen = new Set<string>();
  let current = ref;
  for (;;) {
    if (seen.has(current)) throw new PolicyCompileError(path, 'unresolved-ref', `$ref cycle at ${current}`);
    seen.add(current);
    const target = readPointer(api.document, current);
    if (target === undefined)
      throw new PolicyCompileError(path, 'unresolved-ref', `$ref ${current} does not resolve in the API document`);
    const next = (target as JSONSchema).$ref;
    if (typeof next !== 'string') return target;
    current = next;
  }
}

/** A bare definition name (`shipping`) is read as `#/definitions/shipping`, as the API Connect editor writes it. */
export function refFor(name: string): string {
  return name.startsWith('#') ? name : `#/definitions/${name}`;
}

function readPointer(document: Record<string, unknown>, ref: string): JSONSchema | undefined {
  if (!ref.startsWith('#')) return undefined;
  const tokens = ref
    .slice(1)
    .split('/')
    .slice(1)
    .map((token) => decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = document;
  for (const token of tokens) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as JSONSchema) : undefined;
}

/**
 * Inlines every local `$ref` in a schema (deep copy) so ajv can compile it alone, and returns
 * the copy; a ref that does not resolve is an `unresolved-ref` compile error.
 */
export function inlineRefs(schema: JSONSchema, api: CompiledApiInfo, path: string, depth = 0): JSONSchema {
  if (depth > 32)
    throw new PolicyCompileError(
      path,
      'unresolved-ref',
      'schema $refs nest deeper than 32 levels (recursive definition?)',
    );
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node !== 'object' || node === null) return node;
    const object = node as JSONSchema;
    if (typeof object.$ref === 'string') return inlineRefs(resolveRef(object.$ref, api, path), api, path, depth + 1);
    const copy: JSONSchema = {};
    for (const [key, value] of Object.entries(object)) setOwn(copy, key, visit(value));
    return copy;
  };
  return visit(schema) as JSONSchema;
}
