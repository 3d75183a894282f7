/**
 * Which plans leave out a limit an API's assembly counts against by name. An assembly
 * `ratelimit` with `source: plan-named` counts each call against the caller's plan's
 * `assembly-rate-limits`/`assembly-burst-limits` of that name; a plan covering the API that does
 * not define the name cannot be enforced, so publishing it is refused (`unknown-plan-limit`,
 * DESIGN §6 "Fail closed"), and the gateway refuses such a call of a document stored before.
 */
import { rawOperations } from '../definitions/api-operations.ts';
import { appendPath, isRecord } from '../definitions/json-path.ts';
import { assemblyProblems } from './check-assembly.ts';
import { assemblyLimitsOf, coveredApis } from '../gateway/subscriptions.ts';
import { policyRegistry } from './registry.ts';
import type { PolicyRegistry } from './registry.ts';
import type { PolicyType } from './types.ts';

/** One name a plan-named `ratelimit` counts against, and the JSON path of that name in the API document. */
export interface PlanLimitReference {
  name: string;
  path: string;
}

/** An API a product bundles: the key the product gives it, its `name:version` and its document. */
export interface BundledApi {
  key: string;
  ref: string;
  document: Record<string, unknown>;
}

/** A plan covering `api` that does not define the limit `reference` names. */
export interface PlanLimitGap {
  plan: string;
  api: BundledApi;
  reference: PlanLimitReference;
}

/**
 * The names the API's assembly counts with `source: plan-named` (`rate-limit` and `burst-limit`
 * lists), wherever they sit: `execute`, switch/if/operation-switch cases, catch blocks, `finally`.
 * The walk is the import check's own (check-assembly.ts), so every nested list it reads is read.
 */
export function planLimitReferences(document: Record<string, unknown>): PlanLimitReference[] {
  // A replace checks one document against every product serving it: the walk runs once.
  let found = walked.get(document);
  if (found === undefined) walked.set(document, (found = walkReferences(document)));
  return found;
}

const walked = new WeakMap<object, PlanLimitReference[]>();

function walkReferences(document: Record<string, unknown>): PlanLimitReference[] {
  const ibm = document['x-ibm-configuration'];
  if (!isRecord(ibm) || !isRecord(ibm.assembly)) return [];
  const found: PlanLimitReference[] = [];
  const ratelimit = policyRegistry.ratelimit;
  const collector: PolicyType = {
    ...ratelimit,
    check(block, scope, path) {
      found.push(...blockReferences(block, path));
      return ratelimit.check(block, scope, path);
    },
  };
  const registry: PolicyRegistry = Object.assign(Object.create(null) as Record<string, PolicyType>, policyRegistry, {
    ratelimit: collector,
  });
  const operations = rawOperations(document).map(({ id, verb, path }) => ({ id, verb, path }));
  // Only the references are wanted: the document's other problems were the import's to report.
  assemblyProblems(ibm.assembly, document, operations, undefined, registry);
  return found;
}

function blockReferences(block: unknown, path: string): PlanLimitReference[] {
  if (!isRecord(block) || block.source !== 'plan-named') return [];
  const references: PlanLimitReference[] = [];
  for (const field of ['rate-limit', 'burst-limit']) {
    const list = block[field];
    if (!Array.isArray(list)) continue;
    list.forEach((entry, index) => {
      if (!isRecord(entry) || typeof entry.name !== 'string') return;
      references.push({ name: entry.name, path: appendPath(appendPath(appendPath(path, field), index), 'name') });
    });
  }
  return references;
}

/**
 * Every plan of the product document that covers one of `apis` (its `apis:` list names the API's
 * key, or it has none: all of the product's APIs) without defining a name that API's assembly
 * counts against. Names are matched as written, own keys only (`constructor` is not `Object`'s).
 */
export function planLimitGaps(productDocument: Record<string, unknown>, apis: readonly BundledApi[]): PlanLimitGap[] {
  const plans = isRecord(productDocument.plans) ? productDocument.plans : {};
  const references = apis.map((api) => ({ api, references: planLimitReferences(api.document) }));
  const gaps: PlanLimitGap[] = [];
  for (const [plan, written] of Object.entries(plans)) {
    const definition = isRecord(written) ? written : {};
    for (const { api, references: named } of references) {
      if (!covers(definition, api.key)) continue;
      for (const reference of named) {
        if (!defines(definition, reference.name)) gaps.push({ plan, api, reference });
      }
    }
  }
  return gaps;
}

/** Whether the plan covers the product's API `key`, read as the gateway reads it (subscriptions.ts). */
function covers(plan: Record<string, unknown>, key: string): boolean {
  const covered = coveredApis(plan);
  return covered === undefined || covered.has(key);
}

/** Whether the plan defines the limit `name` (unlimited included), as the gateway reads it. */
function defines(plan: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(assemblyLimitsOf(plan), name);
}

/** Why a gap is refused, naming the product, the plan, the API, the limit and where the API names it. */
export function gapReason(gap: PlanLimitGap, product: string): string {
  const { plan, api, reference } = gap;
  return (
    `plan ${plan} of product ${product} covers API ${api.ref} (apis key ${api.key}), whose assembly counts ` +
    `against plan limit ${JSON.stringify(reference.name)} at ${reference.path} (ratelimit, source plan-named); ` +
    `the plan defines no assembly-rate-limits or assembly-burst-limits named ${JSON.stringify(reference.name)}: ` +
    'define it in every plan that covers the API (value unlimited for none), or leave the API out of the plan'
  );
}
