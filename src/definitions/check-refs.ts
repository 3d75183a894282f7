/**
 * `$ref` resolution inside one document. Portico keeps an API as one document, so every
 * reference must be a local JSON pointer (`#/definitions/x`, `#/components/schemas/x`,
 * `#/x-ibm-configuration/targets/financingService/definitions/financingInput`). Inside a
 * target service (`x-ibm-configuration.targets.<name>`), which API Connect generates as a
 * sub-document, a pointer is looked up in the target first and then in the whole document.
 */
import type { DefinitionProblem } from '../errors.ts';
import { appendPath, isRecord, pointerTokens } from './json-path.ts';

const missing = Symbol('missing');

/** Follows a local JSON pointer (`#/a/b`) from `root`; undefined when it leads nowhere. */
export function resolvePointer(root: unknown, ref: string): unknown {
  const found = follow(root, ref);
  return found === missing ? undefined : found;
}

function follow(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return missing;
  let tokens: string[];
  try {
    tokens = pointerTokens(decodeURIComponent(ref.slice(1)));
  } catch {
    return missing;
  }
  let current: unknown = root;
  for (const token of tokens) {
    if (Array.isArray(current) && /^\d+$/.test(token) && Number(token) < current.length)
      current = current[Number(token)];
    else if (isRecord(current) && Object.hasOwn(current, token)) current = current[token];
    else return missing;
  }
  return current;
}

/** Whether `ref` resolves in any of the scopes (innermost first). */
export function refResolves(scopes: readonly unknown[], ref: string): boolean {
  return scopes.some((scope) => follow(scope, ref) !== missing);
}

/** Why `ref` cannot be followed, for a problem's reason. */
export function unresolvedReason(ref: string): string {
  if (!ref.startsWith('#'))
    return `${ref} is not a local reference: an API is one document, so refer to #/definitions/… or #/components/… inside it`;
  return `${ref} does not resolve to anything in the document`;
}

/** Every `$ref` in the document that does not resolve, as `unresolved-ref` problems. */
export function refProblems(document: Record<string, unknown>): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  walk(document, '$', [document], problems);
  return problems;
}

function walk(node: unknown, path: string, scopes: readonly unknown[], problems: DefinitionProblem[]): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => walk(item, appendPath(path, index), scopes, problems));
    return;
  }
  if (!isRecord(node)) return;
  for (const [key, value] of Object.entries(node)) {
    const childPath = appendPath(path, key);
    if (key === '$ref' && typeof value === 'string') {
      if (!refResolves(scopes, value))
        problems.push({ path: childPath, rule: 'unresolved-ref', reason: unresolvedReason(value) });
    } else if (path === '$.x-ibm-configuration.targets' && isRecord(value)) {
      walk(value, childPath, [value, ...scopes], problems);
    } else {
      walk(value, childPath, scopes, problems);
    }
  }
}
