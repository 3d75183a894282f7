/**
 * Helpers the policies share while compiling: reading fields of a block (already checked by its
 * schema in policy.ts; the helpers still name the field's assembly path) and resolving `$ref`s
 * against the API document.
 */
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, JSONSchema } from './types.ts';
import { setOwn } from './variable-names.ts';
import { resolveSchemaRef, SchemaRefError } from '../soap/xml-schema-node.ts';

/** A policy block as read from YAML. */
export type PolicyBlock = Record<string, unknown>;

/** What resolving `$ref`s needs of the API: its document (known at import as at publish). */
export type DocumentOnly = Pick<CompiledApiInfo, 'document'>;

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
 * document, following chained refs. A ref met inside a target service (`base`, the target's
 * pointer) is looked up in that target first, as the import's ref check and the XML codec read
 * it (API Connect generates a target as a sub-document); the answer says which target the schema
 * found lives in, for the refs inside it. An unknown ref, or refs that loop, are an
 * `unresolved-ref` compile error.
 */
export function resolveRefAt(
  ref: string,
  api: DocumentOnly,
  path: string,
  base = '',
): { schema: JSONSchema; base: string } {
  try {
    return resolveSchemaRef(api.document, ref, base);
  } catch (error) {
    if (error instanceof SchemaRefError) throw new PolicyCompileError(path, 'unresolved-ref', error.message);
    // A pointer whose escapes do not decode (`#/definitions/%zz`) leads nowhere either.
    if (error instanceof URIError)
      throw new PolicyCompileError(path, 'unresolved-ref', `$ref ${ref}: ${error.message}`);
    throw error;
  }
}

/** The schema a `$ref` written outside any target resolves to (see {@link resolveRefAt}). */
export function resolveRef(ref: string, api: DocumentOnly, path: string): JSONSchema {
  return resolveRefAt(ref, api, path).schema;
}

/** A bare definition name (`shipping`) is read as `#/definitions/shipping`, as the API Connect editor writes it. */
export function refFor(name: string): string {
  return name.startsWith('#') ? name : `#/definitions/${name}`;
}

// The most nodes (objects, lists and values) a schema may have once its $refs are inlined: ajv's
// compile time grows faster than the schema (5 s for 23,000 nodes, measured), and a handful of
// definitions that each name the next ten times inline to millions of nodes.
const maxInlinedNodes = 10_000;

/**
 * Inlines every local `$ref` in a schema (a copy) so ajv can compile it alone; each ref is
 * inlined once and its copy shared where the schema names it again. A ref that does not resolve,
 * refs nesting deeper than 32 levels (a recursive definition) are an `unresolved-ref` compile
 * error, and a result of more than 10,000 nodes a `schema-too-large` one.
 */
export function inlineRefs(schema: JSONSchema, api: DocumentOnly, path: string, base = ''): JSONSchema {
  const inlined = new Map<string, Inlined>();
  const visit = (node: unknown, at: string, depth: number): Inlined => {
    if (typeof node !== 'object' || node === null) return { copy: node, nodes: 1 };
    const ref = (node as JSONSchema).$ref;
    if (!Array.isArray(node) && typeof ref === 'string') {
      if (depth >= 32)
        throw new PolicyCompileError(
          path,
          'unresolved-ref',
          'schema $refs nest deeper than 32 levels (recursive definition?)',
        );
      const key = `${at} ${ref}`;
      let found = inlined.get(key);
      if (found === undefined) {
        const target = resolveRefAt(ref, api, path, at);
        found = visit(target.schema, target.base, depth + 1);
        inlined.set(key, found);
      }
      return found;
    }
    const copy: unknown[] | JSONSchema = Array.isArray(node) ? [] : {};
    let nodes = 1;
    for (const [key, value] of Object.entries(node)) {
      const child = visit(value, at, depth);
      nodes += child.nodes;
      if (nodes > maxInlinedNodes)
        throw new PolicyCompileError(
          path,
          'schema-too-large',
          `the schema has more than ${maxInlinedNodes} nodes once its $refs are inlined`,
        );
      if (Array.isArray(copy)) copy.push(child.copy);
      else setOwn(copy, key, child.copy);
    }
    return { copy, nodes };
  };
  return visit(schema, base, 0).copy as JSONSchema;
}

/** A schema's copy with its refs inlined, and how many nodes it holds with every shared copy counted. */
interface Inlined {
  copy: unknown;
  nodes: number;
}
