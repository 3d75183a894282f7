/**
 * Checks an `x-ibm-configuration.assembly` policy by policy: each entry names one known policy,
 * its fields match the policy's schema, its version is accepted, operation-switch cases name
 * operations of the API, conditions and scripts parse, and nested execute lists (cases, catch
 * blocks, finally) get the same checks. The assembly's outer shape (`execute`, `catch`,
 * `finally`) is checked by the `x-ibm-configuration` schema.
 */
import { Script } from 'node:vm';
import jsonata from 'jsonata';
import type { DefinitionProblem } from '../errors.ts';
import { refResolves, unresolvedReason } from './check-refs.ts';
import { appendPath, isRecord } from './json-path.ts';
import { policySchemas } from './policy-schemas.ts';
import { describe, schemaProblems } from './schema-validator.ts';
import { userSecurityProblems } from './user-security-support.ts';

/** An operation of the API, as operation-switch cases may name it. */
export interface OperationKey {
  id: string | undefined;
  verb: string;
  path: string;
}

interface Walk {
  document: Record<string, unknown>;
  operations: readonly OperationKey[];
  problems: DefinitionProblem[];
}

// IBM "operation-switch": it cannot be nested inside if, switch or another operation-switch.
const branchingPolicies = new Set(['if', 'switch', 'operation-switch']);

/** Problems of every policy in the assembly found at `path` (default `$.x-ibm-configuration.assembly`). */
export function assemblyProblems(
  assembly: Record<string, unknown>,
  document: Record<string, unknown>,
  operations: readonly OperationKey[],
  path = '$.x-ibm-configuration.assembly',
): DefinitionProblem[] {
  const walk: Walk = { document, operations, problems: [] };
  checkList(walk, assembly.execute, appendPath(path, 'execute'), []);
  if (Array.isArray(assembly.catch)) {
    assembly.catch.forEach((block, index) => {
      if (!isRecord(block)) return;
      const blockPath = appendPath(appendPath(path, 'catch'), index);
      checkList(walk, block.execute, appendPath(blockPath, 'execute'), []);
      checkList(walk, block.default, appendPath(blockPath, 'default'), []);
    });
  }
  checkList(walk, assembly.finally, appendPath(path, 'finally'), []);
  return walk.problems;
}

function checkList(walk: Walk, list: unknown, path: string, enclosing: readonly string[]): void {
  if (!Array.isArray(list)) return;
  list.forEach((entry, index) => checkEntry(walk, entry, appendPath(path, index), enclosing));
}

function checkEntry(walk: Walk, entry: unknown, path: string, enclosing: readonly string[]): void {
  if (!isRecord(entry)) return; // the enclosing schema reports the type
  const keys = Object.keys(entry);
  if (keys.length !== 1) {
    const found = keys.length === 0 ? 'none' : keys.join(', ');
    walk.problems.push({ path, rule: 'policy-shape', reason: `an assembly entry names exactly one policy (e.g. "- invoke: {...}"); found keys: ${found}` });
    return;
  }
  const name = keys[0];
  const policyPath = appendPath(path, name);
  const spec = policySchemas[name];
  if (spec === undefined) {
    walk.problems.push({ path: policyPath, rule: 'unknown-policy', reason: `unknown policy ${name}; known policies: ${Object.keys(policySchemas).join(', ')}` });
    return;
  }
  const body = entry[name];
  if (!isRecord(body)) {
    walk.problems.push({ path: policyPath, rule: 'type', reason: `must be object (the ${name} policy's fields), got ${describe(body)}` });
    return;
  }
  walk.problems.push(...schemaProblems(spec.schema, body, policyPath));
  if (typeof body.version === 'string' && !spec.versions.includes(body.version)) {
    walk.problems.push({
      path: appendPath(policyPath, 'version'),
      rule: 'unsupported-version',
      reason: `${name} version ${body.version} is not supported; accepted versions: ${spec.versions.join(', ')}`,
    });
  }
  checkPolicy(walk, name, body, policyPath, enclosing);
}

function checkPolicy(walk: Walk, name: string, body: Record<string, unknown>, path: string, enclosing: readonly string[]): void {
  const inner = [...enclosing, name];
  switch (name) {
    case 'operation-switch':
      if (enclosing.some((outer) => branchingPolicies.has(outer))) {
        walk.problems.push({ path, rule: 'invalid-nesting', reason: `operation-switch cannot be nested inside ${enclosing.filter((outer) => branchingPolicies.has(outer)).join(', ')}` });
      }
      eachCase(body, path, (item, casePath) => {
        checkOperations(walk, item.operations, appendPath(casePath, 'operations'));
        checkList(walk, item.execute, appendPath(casePath, 'execute'), inner);
      });
      checkList(walk, body.otherwise, appendPath(path, 'otherwise'), inner);
      return;
    case 'switch':
      eachCase(body, path, (item, casePath) => {
        checkCondition(walk, item.condition, appendPath(casePath, 'condition'), body.version);
        checkList(walk, item.execute, appendPath(casePath, 'execute'), inner);
        checkList(walk, item.otherwise, appendPath(casePath, 'otherwise'), inner);
      });
      return;
    case 'if':
      checkCondition(walk, body.condition, appendPath(path, 'condition'), body.version);
      checkList(walk, body.execute, appendPath(path, 'execute'), inner);
      return;
    case 'gatewayscript':
      checkScript(walk, body.source, appendPath(path, 'source'));
      return;
    case 'validate':
      checkValidateDefinition(walk, body.definition, appendPath(path, 'definition'));
      return;
    case 'user-security':
      for (const problem of userSecurityProblems(body)) {
        walk.problems.push({ path: appendPath(path, problem.field), rule: problem.rule, reason: problem.reason });
      }
      return;
    default:
      return;
  }
}

// v5 writes `definition: request | response` for the operation's own schemas, and the editor
// writes a bare definition name (`shipping`) for `#/definitions/shipping`.
function checkValidateDefinition(walk: Walk, definition: unknown, path: string): void {
  if (typeof definition !== 'string' || definition === 'request' || definition === 'response') return;
  const ref = definition.startsWith('#') ? definition : `#/definitions/${definition}`;
  if (!refResolves([walk.document], ref)) walk.problems.push({ path, rule: 'unresolved-ref', reason: unresolvedReason(ref) });
}

function eachCase(body: Record<string, unknown>, path: string, visit: (item: Record<string, unknown>, casePath: string) => void): void {
  if (!Array.isArray(body.case)) return;
  body.case.forEach((item, index) => {
    if (isRecord(item)) visit(item, appendPath(appendPath(path, 'case'), index));
  });
}

function checkOperations(walk: Walk, operations: unknown, path: string): void {
  if (!Array.isArray(operations)) return;
  operations.forEach((reference, index) => {
    const found = findOperation(walk.operations, reference);
    if (found !== false) return;
    walk.problems.push({ path: appendPath(path, index), rule: 'unknown-operation', reason: `${operationLabel(reference)} is not an operation of this API (${knownOperations(walk.operations)})` });
  });
}

// undefined = the reference is malformed (the schema reports it); false = no such operation.
function findOperation(operations: readonly OperationKey[], reference: unknown): boolean | undefined {
  if (typeof reference === 'string') return operations.some((operation) => operation.id === reference);
  if (isRecord(reference) && typeof reference.verb === 'string' && typeof reference.path === 'string') {
    const verb = reference.verb.toLowerCase();
    return operations.some((operation) => operation.verb === verb && operation.path === reference.path);
  }
  return undefined;
}

function operationLabel(reference: unknown): string {
  if (typeof reference === 'string') return `operation ${reference}`;
  const { verb, path } = reference as { verb: string; path: string };
  return `operation ${verb.toUpperCase()} ${path}`;
}

function knownOperations(operations: readonly OperationKey[]): string {
  if (operations.length === 0) return 'it has none';
  return 'known: ' + operations.map((operation) => operation.id ?? `${operation.verb.toUpperCase()} ${operation.path}`).join(', ');
}

// Conditions are JSONata on DataPower API Gateway (2.x) and JavaScript expressions on v5 (1.0.0);
// a 1.0.0 condition may be either, since API Gateway also runs some 1.0.0 policies.
function checkCondition(walk: Walk, condition: unknown, path: string, version: unknown): void {
  if (typeof condition !== 'string') return;
  const jsonataError = jsonataSyntaxError(condition);
  if (jsonataError === undefined) return;
  const v5 = version === undefined || version === '1.0.0';
  if (v5 && javaScriptSyntaxError(`(${condition}\n)`) === undefined) return;
  walk.problems.push({ path, rule: 'condition-syntax', reason: `the condition does not parse as ${v5 ? 'JavaScript or ' : ''}JSONata: ${jsonataError}` });
}

function checkScript(walk: Walk, source: unknown, path: string): void {
  if (typeof source !== 'string') return;
  // Scripts run as a function body (like a CommonJS module), so a top-level return is legal.
  const reason = javaScriptSyntaxError(`(function () {\n${source}\n})`, -1);
  if (reason !== undefined) walk.problems.push({ path, rule: 'script-syntax', reason: `the script does not parse: ${reason}` });
}

/** Compiles (never runs) `code`; returns the syntax error with its line, if any. */
function javaScriptSyntaxError(code: string, lineOffset = 0): string | undefined {
  try {
    new Script(code, { filename: 'policy' });
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = error instanceof Error ? /^policy:(\d+)/.exec(error.stack ?? '') : null;
    return line ? `line ${Number(line[1]) + lineOffset}: ${message}` : message;
  }
}

function jsonataSyntaxError(expression: string): string | undefined {
  try {
    jsonata(expression);
    return undefined;
  } catch (error) {
    const detail = error as { message?: string; position?: number };
    return detail.position === undefined ? String(detail.message) : `position ${detail.position}: ${String(detail.message)}`;
  }
}
