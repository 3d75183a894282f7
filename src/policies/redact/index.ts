/**
 * `redact` (IBM "redact - DataPower API Gateway", policy version 2.0.0): removes fields from, or
 * obfuscates them in, the data `root` names (`message.body`: the request before invoke, the
 * response after), or anywhere in the context when `root` is absent. Each redaction's `path` is a
 * JSONata location path, read at import and by the gateway with the same reader (path.ts).
 *
 * Fail closed: content the policy cannot walk (XML, text, bytes, a scalar, nesting past the
 * bound) raises `RedactionError` (500) rather than passing through unredacted. The v5 form
 * (version 1.0.0: XPath over JSONx, `actions` with `from`) is refused at import.
 */
import { definePolicy, problemsOf } from '../policy.ts';
import { oneOfStrings, policy, str } from '../schema-kit.ts';
import type { CompiledApiInfo, FlowContext, PolicyProblem, PolicyType, Step } from '../types.ts';
import { readRedactionPath, readRoot } from './path.ts';
import type { PathStep } from './path.ts';
import { redactionError, selectLocations } from './select.ts';
import type { Location } from './select.ts';
import { setOwn } from '../variable-names.ts';

export interface RedactConfig {
  version: string;
  title?: string;
  root?: string;
  redactions?: Array<{ action: 'redact' | 'remove'; path: string }>;
  actions?: unknown[];
}

/** What a redacted value becomes, whatever it was (a number too, as API Connect writes it). */
export const redactedValue = '******';

const v5Reason =
  'redact 1.0.0 is the DataPower Gateway (v5 compatible) form (XPath over JSONx, `actions` with `from`), which Portico does not run; ' +
  'write `version: 2.0.0` with `redactions: [{action: redact|remove, path: <JSONata path>}]` and `root: message.body`';

interface Redaction {
  action: 'redact' | 'remove';
  steps: PathStep[];
  path: string;
}

interface RedactPlan {
  root: string | undefined;
  redactions: Redaction[];
}

/**
 * The block as the compiler runs it; every problem, each with its path (the import check lists
 * them all, the gateway throws the first).
 */
function readRedact(config: RedactConfig, path: string): { plan?: RedactPlan; problems: PolicyProblem[] } {
  if (config.version === '1.0.0')
    return { problems: [{ path: `${path}.version`, rule: 'unsupported-version', reason: v5Reason }] };
  const problems: PolicyProblem[] = [];
  if (config.actions !== undefined)
    problems.push({ path: `${path}.actions`, rule: 'unsupported', reason: `\`actions\` is the v5 form: ${v5Reason}` });
  if (config.redactions === undefined)
    problems.push({ path: `${path}.redactions`, rule: 'required', reason: 'redact 2.0.0 needs `redactions`' });
  const rootText = config.root === undefined || config.root.trim() === '' ? undefined : config.root;
  let root: string | undefined;
  problems.push(...problemsOf(() => (root = rootText === undefined ? undefined : readRoot(rootText, `${path}.root`))));
  const redactions: Redaction[] = [];
  for (const [index, entry] of (config.redactions ?? []).entries()) {
    const at = `${path}.redactions[${index}].path`;
    problems.push(
      ...problemsOf(() =>
        redactions.push({
          action: entry.action,
          steps: readRedactionPath(entry.path, rootText !== undefined, at),
          path: at,
        }),
      ),
    );
  }
  return problems.length > 0 ? { problems } : { plan: { root, redactions }, problems };
}

/** The redact policy. */
export const redactPolicy: PolicyType = definePolicy<RedactConfig>({
  name: 'redact',
  versions: ['2.0.0', '1.0.0'],
  description:
    'Removes or obfuscates fields of the request or response body (or any context variable) named by JSONata paths.',
  schema: policy(['2.0.0', '1.0.0'], {
    version: str('Policy version: 2.0.0. 1.0.0 (the v5-compatible XPath form) is refused at import.', '2.0.0'),
    root: str(
      'Context variable holding the content (message.body: the request or response body, by where the policy sits); absent: paths start at the context (message.body.x, request.headers.x).',
    ),
    redactions: {
      type: 'array',
      description: 'Redactions, applied in order; required in 2.0.0.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path'],
        properties: {
          action: oneOfStrings(
            ['redact', 'remove'],
            `redact replaces the value with "${redactedValue}"; remove deletes the field.`,
            'redact',
          ),
          path: str('JSONata location path of the fields, relative to root ($ = root).'),
        },
      },
    },
    actions: {
      type: 'array',
      description: 'The v5 (1.0.0) form: XPath redactions with `from`; refused at import (write `redactions`).',
      items: { type: 'object' },
    },
  }),
  check: (config: RedactConfig, _scope, path: string) => readRedact(config, path).problems,
  compile(config: RedactConfig, _api: CompiledApiInfo, path: string): Step {
    const { plan } = readRedact(config, path);
    const title = config.title || 'redact';
    const { root, redactions } = plan!; // `check` ran first (policy.ts): a plan with problems never compiles
    return async function redact(ctx: FlowContext): Promise<void> {
      const start = startOf(ctx, root, title);
      if (start === undefined) return;
      let changed = false;
      for (const redaction of redactions) {
        const found = await selectLocations(redaction.steps, start, ctx, { path: redaction.path, policy: title });
        changed = apply(redaction.action, found, title) || changed;
      }
      // A root read from a shared (frozen) tree was parsed into a copy: write it where it belongs.
      if (changed && root !== undefined && ctx.get(root) !== start.value) ctx.set(root, start.value);
    };
  },
});

/** Where the paths start: the root's content, or the context; undefined when the root is empty (nothing to redact). */
function startOf(ctx: FlowContext, root: string | undefined, policy: string): Location | undefined {
  if (root === undefined) return { holder: undefined, key: '', value: {}, kind: 'context', depth: 0 };
  const value = ctx.get(root);
  if (value === undefined || value === null || value === '') return undefined;
  const start: Location = { holder: undefined, key: root, value, kind: 'body', depth: 0 };
  if (typeof value !== 'object' || Buffer.isBuffer(value)) {
    const what =
      typeof value === 'string' ? (value.trimStart().startsWith('<') ? 'XML' : 'text') : describeValue(value);
    throw redactionError(`redact reads JSON data only; ${root} holds ${what}`, policy);
  }
  return start;
}

function describeValue(value: unknown): string {
  return Buffer.isBuffer(value) ? 'bytes' : `a ${typeof value}, not an object or a list`;
}

/** Redacts or removes each location; list items are removed from the last, so indexes hold. */
function apply(action: 'redact' | 'remove', found: Location[], policy: string): boolean {
  const removals = new Map<unknown[], number[]>();
  for (const loc of found) {
    const holder = loc.holder;
    if (holder === undefined) throw redactionError('the path selects a whole context variable', policy);
    if (Object.isFrozen(holder))
      throw redactionError(`the field ${String(loc.key)} is read-only (a variable shared by every call)`, policy);
    if (action === 'redact') {
      if (Array.isArray(holder)) holder[loc.key as number] = redactedValue;
      else setOwn(holder, loc.key as string, redactedValue);
    } else if (Array.isArray(holder)) {
      removals.set(holder, [...(removals.get(holder) ?? []), loc.key as number]);
    } else {
      delete (holder as Record<string, unknown>)[loc.key as string];
    }
  }
  for (const [list, indexes] of removals) for (const index of indexes.sort((a, b) => b - a)) list.splice(index, 1);
  return found.length > 0;
}
