/**
 * `validate` (IBM "validate"): checks a message body against a JSON schema compiled with ajv
 * at publish time. `validate-against` picks the schema: `definition` (a `$ref` in the API
 * document), `body-param` (the operation's request body schema), `response-param` (the
 * operation's response schema for the current status) or `url` (parameters: already checked by
 * the gateway's router before the assembly runs, so nothing is left to do here). v5's
 * `definition: request | response` mean body-param / response-param. A failure raises
 * `ValidateError` with status 422 (IBM support "Validate policy returns status code 422").
 */
import { oneOfStrings, policy, str } from './schema-kit.ts';
import { definePolicy, problemsOf } from './policy.ts';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, JSONSchema, PolicyProblem, PolicyType, Step } from './types.ts';
import { refResolves, unresolvedReason } from '../definitions/check-refs.ts';
import { ajvPatternEngine, PatternRefusal } from '../definitions/linear-pattern.ts';
import { urlFormat } from './url-format.ts';
import { inlineRefs, optionalString, readBlock, refFor, resolveRef, resolveRefAt, titleOf } from './policy-config.ts';
import type { DocumentOnly, PolicyBlock } from './policy-config.ts';

export interface ValidateConfig {
  version?: string;
  title?: string;
  'validate-against'?: 'definition' | 'body-param' | 'response-param' | 'url';
  definition?: string;
  input?: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const targets = ['definition', 'body-param', 'response-param', 'url'];
const verbs = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The validate policy. */
export const validatePolicy: PolicyType = definePolicy<ValidateConfig>({
  name: 'validate',
  versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0'],
  description: 'Validates a message body against a JSON schema; a failure raises ValidateError (422).',
  schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0'], {
    definition: str(
      'Schema in this document: a JSON pointer (#/definitions/x), a definition name, or v5 request/response.',
    ),
    schema: { type: 'object', default: {}, description: 'Inline JSON schema.' },
    'validate-against': oneOfStrings(
      ['body-param', 'response-param', 'url', 'definition', 'wsdl', 'graphql'],
      "What the body is checked against; default: definition (which needs `definition`; v5's `definition: request`/`response` mean body-param/response-param).",
    ),
    url: str('URL of a schema (validate-against: url).'),
    input: str('Message validated.', 'message'),
    output: str('Message receiving the validated result.'),
    'compile-settings': { type: 'object', default: {}, description: 'Schema compile settings (DataPower).' },
  }),
  check(config: ValidateConfig, scope: CheckScope, path: string) {
    const problems = targetProblems(config, scope, path);
    // With a known target and a definition that resolves, the schemas are compiled as at publish.
    return problems.length > 0
      ? problems
      : problemsOf(() =>
          readValidation(readBlock(config, validatePolicy, path), scope, path, (_ajv, schema) => schema),
        );
  },
  compile(config: ValidateConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, validatePolicy, path);
    const title = titleOf(block, 'validate');
    const bodyVariable = `${optionalString(block, 'input', path) || 'message'}.body`;
    const validation = readValidation(block, api, path, compileSchema);
    if (validation.against === 'url') return function validateUrlStep() {};
    if (validation.against === 'definition') {
      const { check } = validation;
      return function validateStep(ctx: FlowContext) {
        runCheck(check, ctx.get(bodyVariable), title);
      };
    }
    const { against, checks } = validation;
    return function validateStep(ctx: FlowContext) {
      const { id, verb, path: operationPath } = ctx.operation;
      const byOperation =
        checks.get(`${verb.toUpperCase()} ${operationPath}`) ?? (id === undefined ? undefined : checks.get(`id ${id}`));
      if (byOperation === undefined) return;
      const check =
        against === 'body-param'
          ? byOperation.get('request')
          : pickResponse(byOperation, ctx.get('message.status.code'));
      if (check !== undefined) runCheck(check, ctx.get(bodyVariable), title);
    };
  },
});

/** The target named and the definition resolving, each problem listed (the compile stops at the first). */
function targetProblems(config: ValidateConfig, scope: CheckScope, path: string): PolicyProblem[] {
  const { definition } = config;
  const problems: PolicyProblem[] = [];
  const against = config['validate-against'];
  if (against !== undefined && !targets.includes(against)) {
    problems.push({
      path: `${path}.validate-against`,
      rule: 'enum',
      reason: `validate-against must be one of ${targets.join(', ')}`,
    });
  }
  // v5 writes `definition: request | response` for the operation's own schemas.
  if (definition === undefined || definition === 'request' || definition === 'response') return problems;
  const ref = refFor(definition);
  if (!refResolves([scope.document], ref))
    problems.push({ path: `${path}.definition`, rule: 'unresolved-ref', reason: unresolvedReason(ref) });
  return problems;
}

/** What a block validates against, with each schema made into a `T` (per operation for the operation's own). */
type Validation<T> =
  | { against: 'url' }
  | { against: 'definition'; check: T }
  | { against: 'body-param' | 'response-param'; checks: Map<string, Map<string, T>> };

/**
 * The block's target and its schemas read as the gateway reads them (refs inlined, valid for
 * ajv's meta-schema), each then passed to `finish`: the compiler makes it an ajv validator, the
 * import check keeps it as it is. ajv's code is generated at publish only (its compile time grows
 * with the schema); a pattern it would refuse there is refused at import where it is written
 * (pattern-problems.ts). A schema named again (a definition many operations share) is read once.
 * @throws PolicyCompileError `enum`, `required`, `unresolved-ref`, `schema-too-large`, `invalid-schema`.
 */
function readValidation<T>(
  block: PolicyBlock,
  api: DocumentOnly,
  path: string,
  finish: (ajv: Ajv, schema: JSONSchema, path: string) => T,
): Validation<T> {
  const definition = optionalString(block, 'definition', path);
  let against =
    optionalString(block, 'validate-against', path) ??
    (definition === 'request' ? 'body-param' : definition === 'response' ? 'response-param' : 'definition');
  if (definition === 'request' && against === 'definition') against = 'body-param';
  if (definition === 'response' && against === 'definition') against = 'response-param';
  if (against === 'url') return { against };
  const ajv = newAjv();
  const done = new Map<string, T>();
  const read = (schema: JSONSchema, at: string, base = ''): T => {
    const key = `${base} ${JSON.stringify(schema)}`;
    let made = done.get(key);
    if (made === undefined) {
      made = finish(ajv, readSchema(ajv, schema, api, at, base), at);
      done.set(key, made);
    }
    return made;
  };
  if (against === 'definition') {
    if (definition === undefined)
      throw new PolicyCompileError(
        `${path}.definition`,
        'required',
        'validate-against: definition needs a `definition` $ref',
      );
    const { schema, base } = resolveRefAt(refFor(definition), api, `${path}.definition`);
    return { against, check: read(schema, `${path}.definition`, base) };
  }
  if (against === 'body-param' || against === 'response-param') {
    return { against, checks: operationSchemas(api, against === 'body-param' ? 'request' : 'response', read, path) };
  }
  throw new PolicyCompileError(
    `${path}.validate-against`,
    'enum',
    `validate-against must be one of ${targets.join(', ')}`,
  );
}

function newAjv(): Ajv {
  // strict: false because OpenAPI schemas carry `example`, `xml`, `x-*` and `format: float`.
  // Patterns run on the linear engine, and so does `format: url`, whose ajv-formats expression
  // backtracks (linear-pattern.ts, url-format.ts).
  const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: true, code: { regExp: ajvPatternEngine } });
  return addFormats(ajv).addFormat('url', urlFormat);
}

/** A schema with its refs inlined, checked against ajv's meta-schema as ajv's compile checks it first. */
function readSchema(ajv: Ajv, schema: JSONSchema, api: DocumentOnly, path: string, base: string): JSONSchema {
  const inlined = inlineRefs(schema, api, path, base);
  let valid: boolean;
  try {
    valid = ajv.validateSchema(inlined) === true;
  } catch (error) {
    throw new PolicyCompileError(path, 'invalid-schema', `the schema cannot be compiled: ${(error as Error).message}`);
  }
  if (!valid) {
    const reason = `the schema cannot be compiled: schema is invalid: ${ajv.errorsText(ajv.errors)}`;
    throw new PolicyCompileError(path, 'invalid-schema', reason);
  }
  return inlined;
}

/** The validator of a schema {@link readSchema} read: ajv's generated code. */
function compileSchema(ajv: Ajv, schema: JSONSchema, path: string): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    if (error instanceof PatternRefusal)
      throw new PolicyCompileError(path, error.rule, `a schema pattern: ${error.reason}`);
    throw new PolicyCompileError(path, 'invalid-schema', `the schema cannot be compiled: ${(error as Error).message}`);
  }
}

function runCheck(check: ValidateFunction, body: unknown, title: string): void {
  if (check(body)) return;
  const error = check.errors?.[0];
  const where = error === undefined || error.instancePath === '' ? 'body' : `body${error.instancePath}`;
  const detail =
    error === undefined
      ? 'invalid'
      : `${where} ${error.message ?? 'is invalid'} (${error.keyword}: ${error.schemaPath})`;
  throw new AssemblyError('ValidateError', detail, {
    status: 422,
    reason: 'Unprocessable Entity',
    policy: title,
  });
}

function pickResponse(checks: Map<string, ValidateFunction>, status: unknown): ValidateFunction | undefined {
  return checks.get(`response ${String(status)}`) ?? checks.get('response default');
}

/** Every operation's request and response schemas (OpenAPI 2 and 3), each made once by `read`. */
function operationSchemas<T>(
  api: DocumentOnly,
  kind: 'request' | 'response',
  read: (schema: JSONSchema, path: string) => T,
  path: string,
): Map<string, Map<string, T>> {
  const out = new Map<string, Map<string, T>>();
  const paths = (api.document.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const [operationPath, item] of Object.entries(paths)) {
    for (const verb of verbs) {
      const operation = item?.[verb] as Record<string, unknown> | undefined;
      if (operation === undefined) continue;
      const checks = new Map<string, T>();
      const where = `${path} (${verb.toUpperCase()} ${operationPath})`;
      for (const [key, schema] of schemasOf(operation, kind, api, where)) checks.set(key, read(schema, where));
      if (checks.size === 0) continue;
      out.set(`${verb.toUpperCase()} ${operationPath}`, checks);
      if (typeof operation.operationId === 'string') out.set(`id ${operation.operationId}`, checks);
    }
  }
  return out;
}

function schemasOf(
  operation: Record<string, unknown>,
  kind: 'request' | 'response',
  api: DocumentOnly,
  path: string,
): Array<[string, JSONSchema]> {
  if (kind === 'request') {
    const parameters = (operation.parameters ?? []) as Array<Record<string, unknown>>;
    for (const raw of parameters) {
      const parameter = typeof raw.$ref === 'string' ? resolveRef(raw.$ref, api, path) : raw;
      if (parameter.in === 'body' && typeof parameter.schema === 'object')
        return [['request', parameter.schema as JSONSchema]];
    }
    const body = operation.requestBody as Record<string, unknown> | undefined;
    const schema =
      body === undefined
        ? undefined
        : jsonSchemaOf(typeof body.$ref === 'string' ? resolveRef(body.$ref, api, path) : body);
    return schema === undefined ? [] : [['request', schema]];
  }
  const responses = (operation.responses ?? {}) as Record<string, Record<string, unknown>>;
  const out: Array<[string, JSONSchema]> = [];
  for (const [status, raw] of Object.entries(responses)) {
    const response = typeof raw?.$ref === 'string' ? resolveRef(raw.$ref, api, path) : raw;
    const schema = (response?.schema as JSONSchema | undefined) ?? jsonSchemaOf(response);
    if (schema !== undefined) out.push([`response ${status}`, schema]);
  }
  return out;
}

/** OpenAPI 3: the JSON media type's schema. */
function jsonSchemaOf(holder: Record<string, unknown> | undefined): JSONSchema | undefined {
  const content = holder?.content as Record<string, { schema?: JSONSchema }> | undefined;
  if (content === undefined) return undefined;
  const type = Object.keys(content).find((name) => name.includes('json'));
  return type === undefined ? undefined : content[type].schema;
}
