/**
 * Reads an API Connect product document (`product: 1.0.0`): info, visibility, plans with their
 * rate and burst limits and approval, and the APIs it bundles (by `name: api:version` or by
 * `$ref` to a file). Every problem is collected before failing.
 */
import { DefinitionError } from '../errors.ts';
import type { DefinitionProblem } from '../errors.ts';
import type { PlanDef, ProductDefinition, RateLimitDef, VisibilityType } from './types.ts';
import { appendPath, isRecord } from './json-path.ts';
import { parseRateLimit } from './parse-rate-limit.ts';
import { parseText } from './parse-text.ts';
import { productSchema } from './product-schema.ts';
import { describe, schemaProblems } from './schema-validator.ts';

type Document = Record<string, unknown>;

// API Connect plan names: a letter or digit, then letters, digits, `-` or `_`.
const planName = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const apiReference = /^([^:\s]+):([^:\s]+)$/;

/**
 * Parses and fully validates a product document.
 * @throws PorticoError `DEF_PARSE` when the text is not YAML/JSON; {@link DefinitionError} with every problem otherwise.
 * @example parseProductDocument(text, 'accessories.yaml').plans.map((plan) => plan.name) // ['silver', 'gold']
 */
export function parseProductDocument(text: string, file: string): ProductDefinition {
  const { value } = parseText(text, file);
  if (!isRecord(value)) {
    throw new DefinitionError(file, [
      {
        path: '$',
        rule: 'type',
        reason: `a product document is an object with product: 1.0.0, got ${describe(value)}`,
      },
    ]);
  }
  const problems = [...schemaProblems(productSchema, value, '$'), ...planProblems(value), ...apiProblems(value)];
  if (problems.length > 0) throw new DefinitionError(file, problems);
  return normaliseProduct(value);
}

function planProblems(document: Document): DefinitionProblem[] {
  if (!isRecord(document.plans)) return [];
  const apiKeys = new Set(isRecord(document.apis) ? Object.keys(document.apis) : []);
  const problems: DefinitionProblem[] = [];
  for (const [name, plan] of Object.entries(document.plans)) {
    const path = appendPath('$.plans', name);
    if (!planName.test(name)) {
      problems.push({
        path,
        rule: 'plan-name',
        reason: `plan name ${JSON.stringify(name)} must start with a letter or digit and hold only letters, digits, - and _`,
      });
    }
    if (!isRecord(plan)) continue;
    for (const field of ['rate-limits', 'burst-limits', 'assembly-rate-limits', 'assembly-burst-limits']) {
      if (!isRecord(plan[field])) continue;
      for (const [limitName, limit] of Object.entries(plan[field])) {
        const at = appendPath(appendPath(path, field), limitName);
        if (Array.isArray(limit))
          limit.forEach((item, index) =>
            problems.push(...rateLimitProblems(item, appendPath(appendPath(at, index), 'value'))),
          );
        else problems.push(...rateLimitProblems(limit, appendPath(at, 'value')));
      }
    }
    problems.push(...rateLimitProblems(plan['rate-limit'], appendPath(appendPath(path, 'rate-limit'), 'value')));
    if (isRecord(plan.apis)) {
      for (const [key, entry] of Object.entries(plan.apis)) {
        const at = appendPath(appendPath(path, 'apis'), key);
        if (isRecord(entry) && 'operations' in entry) {
          // Fail closed: the gateway enforces which APIs a plan covers, not which of their operations.
          problems.push({
            path: appendPath(at, 'operations'),
            rule: 'plan-operations',
            reason: `the gateway cannot limit a plan to some operations of an API: list ${key} without operations (the plan covers all of it), or put those operations in an API of their own`,
          });
        }
        if (apiKeys.has(key)) continue;
        problems.push({
          path: at,
          rule: 'unknown-api',
          reason: `${key} is not one of the product's apis (${[...apiKeys].join(', ') || 'none'})`,
        });
      }
    }
  }
  return problems;
}

function rateLimitProblems(limit: unknown, path: string): DefinitionProblem[] {
  if (!isRecord(limit) || typeof limit.value !== 'string') return [];
  try {
    parseRateLimit(limit.value);
    return [];
  } catch (error) {
    return [{ path, rule: 'rate-limit-syntax', reason: (error as Error).message }];
  }
}

function apiProblems(document: Document): DefinitionProblem[] {
  if (!isRecord(document.apis)) return [];
  const problems: DefinitionProblem[] = [];
  for (const [key, entry] of Object.entries(document.apis)) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || apiReference.test(entry.name)) continue;
    problems.push({
      path: appendPath(appendPath('$.apis', key), 'name'),
      rule: 'api-reference',
      reason: `${JSON.stringify(entry.name)} must be name:version, e.g. financing:1.0.0`,
    });
  }
  return problems;
}

function normaliseProduct(document: Document): ProductDefinition {
  const info = document.info as Document;
  const name = String(info.name);
  const product: ProductDefinition = {
    name,
    version: String(info.version),
    title: typeof info.title === 'string' ? info.title : name,
    visibility: visibility(document.visibility),
    plans: Object.entries(document.plans as Document).map(([key, plan]) => toPlan(key, isRecord(plan) ? plan : {})),
    apis: Object.entries(isRecord(document.apis) ? document.apis : {}).map(([key, entry]) =>
      toApiEntry(key, entry as Document),
    ),
    document,
  };
  if (typeof info.description === 'string') product.description = info.description;
  if (typeof info.summary === 'string') product.summary = info.summary;
  if (isRecord(info.contact)) product.contact = info.contact as ProductDefinition['contact'];
  if (isRecord(info.license)) product.license = info.license as ProductDefinition['license'];
  return product;
}

// API Connect's defaults: anyone may view, any signed-in consumer may subscribe.
function visibility(value: unknown): ProductDefinition['visibility'] {
  const written = isRecord(value) ? value : {};
  return { view: audience(written.view, 'public'), subscribe: audience(written.subscribe, 'authenticated') };
}

function audience(value: unknown, defaultType: VisibilityType): ProductDefinition['visibility']['view'] {
  const written = isRecord(value) ? value : {};
  return {
    type: (written.type as VisibilityType | undefined) ?? defaultType,
    enabled: written.enabled !== false,
    orgs: Array.isArray(written.orgs) ? written.orgs.map(String) : [],
    tags: Array.isArray(written.tags) ? written.tags.map(String) : [],
  };
}

function toPlan(key: string, plan: Document): PlanDef {
  const def: PlanDef = {
    name: key,
    title: typeof plan.title === 'string' ? plan.title : key,
    approval: plan.approval === true,
    rateLimits: planRateLimits(plan),
    burstLimits: limitDefs(plan['burst-limits'], true),
  };
  if (typeof plan.description === 'string') def.description = plan.description;
  if (isRecord(plan.apis)) def.apis = Object.keys(plan.apis);
  const assembly = assemblyLimits(plan);
  if (Object.keys(assembly).length > 0) def.assemblyLimits = assembly;
  return def;
}

/**
 * `assembly-rate-limits` and `assembly-burst-limits` by name; a name may hold one limit or a list.
 * Names are the provider's: `constructor` or `__proto__` is a limit, so no prototype to meet.
 */
function assemblyLimits(plan: Document): Record<string, RateLimitDef[]> {
  const out: Record<string, RateLimitDef[]> = Object.create(null) as Record<string, RateLimitDef[]>;
  for (const [field, alwaysHard] of [
    ['assembly-rate-limits', false],
    ['assembly-burst-limits', true],
  ] as const) {
    const written = plan[field];
    if (!isRecord(written)) continue;
    for (const [name, value] of Object.entries(written)) {
      const items = Array.isArray(value) ? value : [value];
      const defs = limitDefs(Object.fromEntries(items.map((item, index) => [String(index), item])), alwaysHard).map(
        (def) => ({ ...def, name }),
      );
      (out[name] ??= []).push(...defs);
    }
  }
  return out;
}

// A plan without rate limits is unlimited (IBM lab: "Delete the default rate-limit to make this
// plan unlimited"); it gets one explicit unlimited limit so the portal can show "Unlimited".
function planRateLimits(plan: Document): RateLimitDef[] {
  const written = isRecord(plan['rate-limits'])
    ? plan['rate-limits']
    : isRecord(plan['rate-limit'])
      ? { default: plan['rate-limit'] }
      : {};
  const limits = limitDefs(written, false);
  return limits.length > 0
    ? limits
    : [{ name: 'default', unlimited: true, count: 0, windowMs: 0, value: 'unlimited', hardLimit: false }];
}

// IBM "Understanding rate limits for APIs and Plans": burst limits are always hard.
function limitDefs(value: unknown, alwaysHard: boolean): RateLimitDef[] {
  if (!isRecord(value)) return [];
  return Object.entries(value).map(([name, written]) => {
    const limit = written as Document;
    const parsed = parseRateLimit(String(limit.value));
    return {
      name,
      ...parsed,
      value: String(limit.value),
      hardLimit: alwaysHard || limit['hard-limit'] === true,
    };
  });
}

function toApiEntry(key: string, entry: Document): ProductDefinition['apis'][number] {
  if (typeof entry.name === 'string') {
    const [, name, version] = apiReference.exec(entry.name) as RegExpExecArray;
    return { key, name, version };
  }
  return { key, ref: String(entry.$ref) };
}
