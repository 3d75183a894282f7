/**
 * The subscription index of a snapshot: what each plan's subscriptions share (limits, names),
 * every product's subscribers by app, and the lookup the security phase makes per request
 * (DESIGN §3.3). Built with the snapshot, off the request path; a lookup is a Map read per
 * product that contains the API.
 */
import { parseRateLimit } from '../definitions/parse-rate-limit.ts';
import type { RateLimitDef } from '../definitions/types.ts';
import type { CallerLimits } from '../policies/types.ts';
import { rulesFromPlan } from '../ratelimit/index.ts';
import type { LimitRule } from '../ratelimit/types.ts';
import type { SnapshotData } from '../store/snapshot-data.ts';
import { wholly } from '../time-slices.ts';
import type { TimeSlices } from '../time-slices.ts';
import type { CompiledApi } from './snapshot.ts';

/** What every subscription to one plan shares: built once per plan, not per subscription. */
export interface PlanShared {
  planId: string;
  planName: string;
  planTitle: string;
  planVersion: string;
  productName: string;
  productVersion: string;
  productTitle: string;
  rules: readonly LimitRule[];
  /** `plan.rate-limit` as API Connect writes it, e.g. `100/1hour`, or `unlimited`. */
  rateLimitText: string;
  /** The plan's assembly-rate-limits by name. */
  named: Record<string, readonly LimitRule[]>;
  /** The product `apis` keys the plan covers (its `apis:` list); undefined: every API of the product. */
  apis: ReadonlySet<string> | undefined;
}

/**
 * One live subscription: its id and state, and the plan's shared facts. Three fields per
 * subscription, so a catalog with 100 000 subscriptions stays small.
 */
export class SubscriptionInfo {
  constructor(
    readonly id: string,
    readonly state: 'active' | 'pending',
    readonly plan: PlanShared,
  ) {}
  get planId() {
    return this.plan.planId;
  }
  get planName() {
    return this.plan.planName;
  }
  get planTitle() {
    return this.plan.planTitle;
  }
  get planVersion() {
    return this.plan.planVersion;
  }
  get productName() {
    return this.plan.productName;
  }
  get productVersion() {
    return this.plan.productVersion;
  }
  get productTitle() {
    return this.plan.productTitle;
  }
  get rules() {
    return this.plan.rules;
  }
  get rateLimitText() {
    return this.plan.rateLimitText;
  }
  /** What an assembly `ratelimit` policy counts against for this subscription. */
  get limits(): CallerLimits {
    return { key: this.id, plan: this.plan.rules, named: this.plan.named };
  }
}

type PlanDocument = Record<string, unknown> | undefined;
type ProductDocument = { plans?: Record<string, PlanDocument> };

/**
 * A plan's `assembly-rate-limits` / `assembly-burst-limits` as rules, read from the product
 * document. Null-prototype: a limit named `constructor` must not find `Object`, which threw here
 * and failed the snapshot of every organization.
 */
export function assemblyLimitsOf(plan: PlanDocument): Record<string, readonly LimitRule[]> {
  const out: Record<string, LimitRule[]> = Object.create(null) as Record<string, LimitRule[]>;
  if (!plan) return out;
  for (const [field, hard] of [
    ['assembly-rate-limits', false],
    ['assembly-burst-limits', true],
  ] as const) {
    const written = plan[field];
    if (typeof written !== 'object' || written === null) continue;
    for (const [name, value] of Object.entries(written as Record<string, unknown>)) {
      // A name the plan defines is own even when unlimited (no rule): the policy refuses only a name it lacks.
      const rules = (out[name] ??= []);
      for (const item of Array.isArray(value) ? value : [value]) {
        const limit = item as { value?: string; 'hard-limit'?: boolean };
        const parsed = parseRateLimit(String(limit.value));
        if (parsed.unlimited) continue;
        rules.push({
          name,
          limit: parsed.count,
          windowMs: parsed.windowMs,
          hard: hard || limit['hard-limit'] === true,
        });
      }
    }
  }
  return out;
}

/**
 * The product API keys a plan's `apis:` list covers; undefined when it has none (all of them);
 * none for a plan the product's document no longer has.
 * An entry that names `operations` covers nothing: the import refuses it (`plan-operations`), so
 * only a product stored before that rule has one, and the gateway cannot cover part of an API.
 */
export function coveredApis(plan: PlanDocument): ReadonlySet<string> | undefined {
  // A plan the product's document no longer has (dropped by a republish; its row stays for its
  // subscriptions' history) covers nothing, whatever a subscription to it still says.
  if (plan === undefined) return new Set();
  const apis = plan.apis;
  if (typeof apis !== 'object' || apis === null) return undefined;
  const covered = new Set<string>();
  for (const [key, entry] of Object.entries(apis as Record<string, unknown>)) {
    const operations = typeof entry === 'object' && entry !== null && 'operations' in entry;
    if (!operations) covered.add(key);
  }
  return covered;
}

function rateLimitText(limits: RateLimitDef[]): string {
  const limited = limits.filter((l) => !l.unlimited);
  return limited.length === 0 ? 'unlimited' : limited.map((l) => l.value).join(', ');
}

type ProductRow = SnapshotData['products'][number];

/**
 * Plans → what their subscriptions share, once per plan (by plan id), for the products whose
 * subscriptions the loader read (`data.subscriptionsOf`): the others keep the previous snapshot's
 * subscribers, built from the same rows (their stamps did not change).
 */
export function planShares(data: SnapshotData, productsById: ReadonlyMap<string, ProductRow>): Map<string, PlanShared> {
  const shares = new Map<string, PlanShared>();
  const read = data.subscriptionsOf ?? 'all';
  // Each product's document, parsed once for all its plans.
  const documents = new Map<string, ProductDocument>();
  for (const plan of data.plans) {
    const product = productsById.get(plan.product_id);
    if (!product || (read !== 'all' && !read.has(product.id))) continue;
    let document = documents.get(product.id);
    if (document === undefined) {
      document = JSON.parse(product.document) as ProductDocument;
      documents.set(product.id, document);
    }
    // Own plans only: a dropped plan named `toString` must not find a function that covers every API.
    const plans = document.plans;
    const written = plans !== undefined && Object.hasOwn(plans, plan.name) ? plans[plan.name] : undefined;
    const rateLimits = JSON.parse(plan.rate_limits) as RateLimitDef[];
    const burstLimits = JSON.parse(plan.burst_limits) as RateLimitDef[];
    shares.set(plan.id, {
      planId: plan.id,
      planName: plan.name,
      planTitle: plan.title,
      planVersion: product.version,
      productName: product.name,
      productVersion: product.version,
      productTitle: product.title,
      rules: rulesFromPlan(rateLimits, burstLimits),
      rateLimitText: rateLimitText(rateLimits),
      named: assemblyLimitsOf(written),
      apis: coveredApis(written),
    });
  }
  return shares;
}

/**
 * Products → their subscribers (app id → subscription); an active subscription wins over a
 * pending one for the same app. `one` keeps one copy of each repeated string (app ids). When the
 * loader read the subscriptions of some products only (`data.subscriptionsOf`), the other
 * products' maps are the `previous` snapshot's: nothing since changed them.
 */
export async function subscribersByProduct(
  data: SnapshotData,
  shares: ReadonlyMap<string, PlanShared>,
  one: (value: string) => string,
  previous?: ReadonlyMap<string, Map<string, SubscriptionInfo>>,
  slices: TimeSlices = wholly(),
): Promise<Map<string, Map<string, SubscriptionInfo>>> {
  const subscribersOf = new Map<string, Map<string, SubscriptionInfo>>();
  for (const subscription of data.subscriptions) {
    if (slices.tick()) await slices.next();
    const shared = shares.get(subscription.plan_id);
    if (!shared) continue;
    let subscribers = subscribersOf.get(subscription.product_id);
    if (!subscribers) subscribersOf.set(subscription.product_id, (subscribers = new Map()));
    const info = new SubscriptionInfo(subscription.id, subscription.state === 'active' ? 'active' : 'pending', shared);
    const appId = one(subscription.app_id);
    const current = subscribers.get(appId);
    if (!current || (current.state === 'pending' && info.state === 'active')) subscribers.set(appId, info);
  }
  const read = data.subscriptionsOf ?? 'all';
  if (read === 'all' || previous === undefined) return subscribersOf;
  for (const product of data.products) {
    const kept = read.has(product.id) ? undefined : previous.get(product.id);
    if (kept) subscribersOf.set(product.id, kept);
  }
  return subscribersOf;
}

/**
 * The subscription that lets `appId` call `api`: an active one over a pending one. A subscription
 * to a plan whose `apis:` list leaves the API out (by the key the product gives it) is none at all.
 */
export function subscriptionFor(api: CompiledApi, appId: string): SubscriptionInfo | undefined {
  let found: SubscriptionInfo | undefined;
  for (const { key, subscribers } of api.productSubscriptions) {
    const info = subscribers.get(appId);
    if (info === undefined) continue;
    const covered = info.plan.apis;
    if (covered !== undefined && !covered.has(key)) continue;
    if (info.state === 'active') return info;
    found ??= info;
  }
  return found;
}
