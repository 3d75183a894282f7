/**
 * The assembly `ratelimit` policy (DataPower API Gateway): counts the call against named
 * limits at its place in the flow, and raises `AssemblyRateLimitError` (429, "Assembly Rate
 * Limit exceeded") when a hard one is exhausted (IBM "Rate Limit" policy).
 *
 * Where the limits come from (`source`): `plan-default` — the plan's own limits, counted
 * separately from the gateway's automatic plan check; `plan-named` — the plan's
 * `assembly-rate-limits`/`assembly-burst-limits` by name, counted per subscription;
 * `catalog-named`/`gateway-named` — limits from the gateway's settings
 * (`PORTICO_NAMED_RATE_LIMITS`), counted across all callers of the catalog, or of the gateway.
 */
import { oneOfStrings, policy, str } from './schema-kit.ts';
import type { JSONSchema } from './types.ts';
import { definePolicy } from './policy.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { CounterStore, LimitRule } from '../ratelimit/types.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, PolicyProblem, PolicyType, Step } from './types.ts';

interface LimitReference {
  name: string;
  operation: 'consume' | 'replenish' | 'check' | 'inc' | 'dec';
}

export interface RateLimitConfig {
  version?: string;
  title?: string;
  description?: string;
  source: 'plan-default' | 'plan-named' | 'catalog-named' | 'gateway-named';
  'rate-limit': LimitReference[];
  'burst-limit': LimitReference[];
  'count-limit': LimitReference[];
}

/** What Portico does not count yet, refused at import and publish alike. */
function unsupported(config: RateLimitConfig, _scope: CheckScope, path: string): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  if (config['count-limit'].length > 0) {
    const reason = 'count limits are not supported by Portico yet; use rate-limit or burst-limit';
    problems.push({ path: `${path}.count-limit`, rule: 'unsupported', reason });
  }
  for (const field of ['rate-limit', 'burst-limit'] as const) {
    config[field].forEach((ref, index) => {
      if (ref.operation === 'consume') return;
      const reason = `operation ${ref.operation} is not supported; only consume`;
      problems.push({ path: `${path}.${field}[${index}].operation`, rule: 'unsupported', reason });
    });
  }
  return problems;
}

/** The names the policy references, each once (a name in both lists is one limit, counted once). */
function names(config: RateLimitConfig): string[] {
  return [...new Set([...config['rate-limit'], ...config['burst-limit']].map((ref) => ref.name))];
}

/** A limit the policy names, and its counter key after the caller's part (fixed at publish time). */
interface NamedCounter {
  name: string;
  key: string;
}

/**
 * Counts one hit against each named limit under `callerKey + key`, so every policy that names
 * the same limit in the same scope counts the same counter whatever other names it lists. The
 * rule arrays are the definitions' own (stable per snapshot), so stores can reuse per-rule-set
 * state (Redis leases). Only a name `rulesByName` holds as its own counts: a limit named
 * `constructor` is not `Object`. Stops at the first rejection: limits checked before it have
 * counted the hit.
 */
async function hitEach(
  counters: CounterStore,
  title: string,
  callerKey: string,
  named: readonly NamedCounter[],
  rulesByName: Readonly<Record<string, readonly LimitRule[]>>,
): Promise<void> {
  for (const { name, key } of named) {
    if (!Object.hasOwn(rulesByName, name) || rulesByName[name].length === 0) continue;
    // `'' + key` is `key` itself, hash cached: limits counted across all callers build no string.
    const decision = await counters.hit(callerKey + key, rulesByName[name]);
    if (!decision.allowed) throw exceeded(title, rateLimitHeaders(decision));
  }
}

function exceeded(title: string, headers: Array<[string, string]>): AssemblyError {
  return new AssemblyError('AssemblyRateLimitError', 'Assembly Rate Limit exceeded', {
    status: 429,
    policy: title,
    headers: Object.fromEntries(headers),
  });
}

/**
 * The catalog part of a catalog-named counter key, one per catalog whatever its names hold:
 * JSON keeps `a/b` + `c` apart from `a` + `b/c` (an organization name is the operator's choice).
 */
function catalogScope(catalog: CompiledApiInfo['catalog']): string {
  return JSON.stringify([catalog.orgName, catalog.name]);
}

/** Compiles a ratelimit policy. */
export function compileRateLimit(config: RateLimitConfig, api: CompiledApiInfo, path: string): Step {
  const counters = api.settings.counters;
  if (counters === undefined)
    throw new PolicyCompileError(path, 'unavailable', 'the gateway has no rate-limit counters');
  const title = config.title ?? 'ratelimit';
  const { source } = config;
  const wanted = names(config);

  if (source === 'catalog-named' || source === 'gateway-named') {
    const namedLimits = api.settings.namedLimits ?? {};
    for (const name of wanted) {
      if (!Object.hasOwn(namedLimits, name))
        throw new PolicyCompileError(
          path,
          'unknown-limit',
          `no ${source.replace('-named', '')} rate limit named ${name} (PORTICO_NAMED_RATE_LIMITS)`,
        );
    }
    // One counter per named limit, shared by every policy that references it: across the whole
    // gateway for gateway-named, per catalog for catalog-named, so one organization's calls never
    // use up the limit another organization's APIs count against.
    const scope = source === 'gateway-named' ? 'gateway-named' : `catalog-named:${catalogScope(api.catalog)}`;
    const named = wanted.map((name) => ({ name, key: `assembly:${scope}:${name}` }));
    return async function ratelimit() {
      await hitEach(counters, title, '', named, namedLimits);
    };
  }

  if (source === 'plan-default') {
    return async function ratelimit(ctx: FlowContext) {
      const limits = ctx.limits;
      // An unidentified caller has no plan: plan-sourced limits have nothing to count against.
      if (limits === undefined || limits.plan.length === 0) return;
      // The plan's own limits, whatever names the policy lists.
      const decision = await counters.hit(`assembly:${limits.key}:plan-default:`, limits.plan);
      if (!decision.allowed) throw exceeded(title, rateLimitHeaders(decision));
    };
  }

  // plan-named: one counter per subscription and name, on the plan's own rule arrays.
  const named = wanted.map((name) => ({ name, key: `plan-named:${name}` }));
  // The plans already logged as lacking a name (their shared `named`, one per plan and snapshot).
  const reported = new WeakSet<object>();
  return async function ratelimit(ctx: FlowContext) {
    const limits = ctx.limits;
    // An unidentified caller has no plan: plan-sourced limits have nothing to count against.
    if (limits === undefined) return;
    // Fail closed: publish refuses a plan without the name (`unknown-plan-limit`), so only a
    // document stored before that rule gets here; its call is refused, never admitted uncounted.
    const missing = wanted.find((name) => !Object.hasOwn(limits.named, name));
    if (missing !== undefined) throw undefinedLimit(ctx, title, path, missing, limits.named, reported);
    await hitEach(counters, title, `assembly:${limits.key}:`, named, limits.named);
  };
}

/** The refusal of a call whose plan does not define a name the policy counts against, logged once per plan. */
function undefinedLimit(
  ctx: FlowContext,
  title: string,
  path: string,
  limit: string,
  named: object,
  reported: WeakSet<object>,
): AssemblyError {
  if (!reported.has(named)) {
    reported.add(named);
    const where = { policy: title, path, limit, plan: ctx.get('plan.name'), product: ctx.get('product.name') };
    ctx.log.error(
      where,
      'ratelimit: the plan does not define the limit this API counts against; its calls are refused',
    );
  }
  return new AssemblyError('RuntimeError', undefinedLimitMessage, { status: 500, policy: title });
}

/** What the consumer reads: not the limit's name (the provider's configuration; the log has it). */
const undefinedLimitMessage =
  "This call is refused: the API counts it against a rate limit the caller's plan does not define";

const rateLimitReference: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Limits applied by name.',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: str('Name of a limit defined by source (plan, catalog or gateway).'),
      operation: oneOfStrings(['consume', 'replenish', 'check'], 'What the step does with the limit.', 'consume'),
    },
  },
};

const countLimitReference: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Count limits applied by name.',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: str('Name of a count limit defined by source.'),
      operation: oneOfStrings(['inc', 'dec'], 'Increment or decrement the count.', 'inc'),
    },
  },
};

export const ratelimitPolicy: PolicyType = definePolicy<RateLimitConfig>({
  name: 'ratelimit',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  description: 'Applies named rate, burst or count limits inside the assembly (AssemblyRateLimitError, 429).',
  schema: policy(['1.0.0', '2.0.0', '2.1.0'], {
    source: oneOfStrings(
      ['plan-default', 'plan-named', 'catalog-named', 'gateway-named'],
      'Where the named limits are defined.',
      'plan-default',
    ),
    'rate-limit': rateLimitReference,
    'burst-limit': rateLimitReference,
    'count-limit': countLimitReference,
  }),
  check: unsupported,
  compile: compileRateLimit,
});
