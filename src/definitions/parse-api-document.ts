/**
 * Reads an API document (Swagger 2.0 or OpenAPI 3.0/3.1, with or without API Connect's
 * `x-ibm-configuration`), validates all of it and returns the normalised {@link ApiDefinition}.
 * Validation collects every problem before failing, so a provider fixes a file in one pass.
 */
import { DefinitionError } from '../errors.ts';
import type { DefinitionProblem } from '../errors.ts';
import type { JSONSchema } from './json-schema.ts';
import type { ApiDefinition } from './types.ts';
import { rawOperations, resolveLocal } from './api-operations.ts';
import type { RawOperation } from './api-operations.ts';
import { refProblems } from './check-refs.ts';
import { appendPath, isRecord, jsonPath } from './json-path.ts';
import { normaliseApi } from './normalise-api.ts';
import { ibmConfigurationSchema, openApi30Schema, openApi31Schema, swagger2Schema } from './openapi-schemas.ts';
import { parseText } from './parse-text.ts';
import { patternProblems } from './pattern-problems.ts';
import { apiSecurityRefusal, declaredSchemes, securityLists, securityPlan } from './security-support.ts';
import { describe, schemaProblems } from './schema-validator.ts';

type OpenApiVersion = ApiDefinition['openapi'];

/**
 * The check of an assembly's policies. Policies own their rules (src/policies/check-assembly.ts
 * walks the gateway's registry); definitions only parse, so the caller passes the check in. It
 * gets `undefined` for a document without an assembly (the gateway runs a default one).
 */
export type AssemblyCheck = (
  assembly: Record<string, unknown> | undefined,
  document: Record<string, unknown>,
  operations: ReadonlyArray<{ id: string | undefined; verb: string; path: string }>,
) => DefinitionProblem[];

const structureSchemas: Record<OpenApiVersion, JSONSchema> = {
  '2.0': swagger2Schema,
  '3.0': openApi30Schema,
  '3.1': openApi31Schema,
};

/**
 * Parses and fully validates an API document.
 * @throws PorticoError `DEF_PARSE` when the text is not YAML/JSON; {@link DefinitionError} with every problem otherwise.
 * @example parseApiDocument(readFileSync('logistics.yaml', 'utf8'), 'logistics.yaml', assemblyProblems).operations[0].id // 'shipping.calc'
 */
export function parseApiDocument(text: string, file: string, checkAssembly: AssemblyCheck): ApiDefinition {
  const { value } = parseText(text, file);
  if (!isRecord(value)) {
    throw new DefinitionError(file, [
      {
        path: '$',
        rule: 'type',
        reason: `an API document is an object (Swagger 2.0 or OpenAPI 3), got ${describe(value)}`,
      },
    ]);
  }
  const openapi = openApiVersion(value);
  if (typeof openapi !== 'string') throw new DefinitionError(file, [openapi]);
  const problems = apiProblems(value, openapi, checkAssembly);
  if (problems.length > 0) throw new DefinitionError(file, problems);
  return normaliseApi(value, openapi);
}

/** Which OpenAPI version the document declares, or the problem with its declaration. */
function openApiVersion(document: Record<string, unknown>): OpenApiVersion | DefinitionProblem {
  if ('swagger' in document) {
    if (document.swagger === '2.0' || document.swagger === 2) return '2.0';
    return { path: '$.swagger', rule: 'enum', reason: `must be "2.0", got ${describe(document.swagger)}` };
  }
  if ('openapi' in document) {
    const match = typeof document.openapi === 'string' ? /^3\.([01])\.\d+$/.exec(document.openapi) : null;
    if (match) return match[1] === '0' ? '3.0' : '3.1';
    return {
      path: '$.openapi',
      rule: 'enum',
      reason: `must be 3.0.x or 3.1.x, got ${describe(document.openapi)}`,
    };
  }
  return {
    path: '$.swagger',
    rule: 'required',
    reason: 'an API document declares swagger: "2.0" or openapi: 3.0.x / 3.1.x',
  };
}

/** Every problem of the document, in document order of the checks. */
function apiProblems(
  document: Record<string, unknown>,
  openapi: OpenApiVersion,
  checkAssembly: AssemblyCheck,
): DefinitionProblem[] {
  const operations = rawOperations(document);
  const problems = [
    ...schemaProblems(structureSchemas[openapi], document, '$'),
    ...refProblems(document),
    ...duplicateOperationIds(operations),
    ...missingPathParameters(document, operations),
    ...securityProblems(document, operations),
  ];
  const ibm = document['x-ibm-configuration'];
  if (ibm !== undefined) problems.push(...schemaProblems(ibmConfigurationSchema, ibm, '$.x-ibm-configuration'));
  const assembly = isRecord(ibm) ? ibm.assembly : undefined;
  if (assembly === undefined || isRecord(assembly)) problems.push(...checkAssembly(assembly, document, operations));
  return oncePerPathAndRule(problems);
}

// The document's ref check and a policy reading its schema may both find one broken `$ref`: listed once.
function oncePerPathAndRule(problems: DefinitionProblem[]): DefinitionProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.rule} ${problem.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function duplicateOperationIds(operations: readonly RawOperation[]): DefinitionProblem[] {
  const first = new Map<string, RawOperation>();
  const problems: DefinitionProblem[] = [];
  for (const operation of operations) {
    if (operation.id === undefined) continue;
    const earlier = first.get(operation.id);
    if (earlier === undefined) {
      first.set(operation.id, operation);
      continue;
    }
    problems.push({
      path: appendPath(operation.at, 'operationId'),
      rule: 'duplicate-operation-id',
      reason: `operationId ${operation.id} is already used by ${earlier.verb.toUpperCase()} ${earlier.path}`,
    });
  }
  return problems;
}

// OpenAPI: every {name} in a path template has a path parameter of that name.
function missingPathParameters(
  document: Record<string, unknown>,
  operations: readonly RawOperation[],
): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  for (const operation of operations) {
    const declared = new Set(
      [operation.pathItem.parameters, operation.operation.parameters]
        .flatMap((list) => (Array.isArray(list) ? list : []))
        .map((parameter) => resolveLocal(document, parameter))
        .filter((parameter): parameter is Record<string, unknown> => isRecord(parameter) && parameter.in === 'path')
        .map((parameter) => String(parameter.name)),
    );
    for (const match of operation.path.matchAll(/\{([^}]+)\}/g)) {
      if (declared.has(match[1])) continue;
      problems.push({
        path: appendPath(operation.at, 'parameters'),
        rule: 'missing-path-parameter',
        reason: `path parameter ${match[1]} of ${operation.path} is not declared`,
      });
    }
  }
  return problems;
}

/**
 * Security the gateway cannot enforce, refused at import and again at publish (for a document
 * stored before the rule), never served open (see security-support.ts); so are the regular
 * expressions it cannot match in linear time (pattern-problems.ts).
 */
export function securityProblems(
  document: Record<string, unknown>,
  operations = rawOperations(document),
): DefinitionProblem[] {
  const schemes = declaredSchemes(document);
  const problems: DefinitionProblem[] = [];
  for (const { list, at } of securityLists(document, operations)) {
    const plan = securityPlan(list, schemes);
    if (!Array.isArray(plan)) continue;
    // A list or requirement of the wrong shape is the structure schema's to report.
    for (const refusal of plan.filter((r) => r.rule !== 'type')) {
      problems.push({ path: jsonPath(refusal.at, at), rule: refusal.rule, reason: refusal.reason });
    }
  }
  const apiWide = apiSecurityRefusal(document);
  if (apiWide) problems.push({ path: jsonPath(apiWide.at), rule: apiWide.rule, reason: apiWide.reason });
  problems.push(...patternProblems(document));
  return problems;
}
