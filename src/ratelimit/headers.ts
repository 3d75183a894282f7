/**
 * Rate-limit response headers from a LimitDecision, in two dialects:
 *
 * - API Connect / DataPower: `X-RateLimit-Limit: name=default,100;` and
 *   `X-RateLimit-Remaining: name=default,99;`, one `name=<limit>,<n>;` entry per limit in one
 *   value (ibm-apiconnect/policy-apigw `user-defined-policies/ratelimit-basic/README.md`; IBM
 *   support https://ibm.com/support/pages/node/1128651).
 * - IETF draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy` (§3, a List of quota policy
 *   Items `"<name>";q=<quota>;w=<window seconds>`) and `RateLimit` (§4, service limit Items
 *   `"<name>";r=<available>;t=<seconds>`), both RFC 8941 structured fields.
 *
 * Plus `Retry-After` (RFC 9110 §10.2.3, delay-seconds) on a rejection. Everything that depends
 * only on the rule set is computed once per rule set and cached by identity.
 */

import { toDelaySeconds } from './decision.ts';
import type { LimitDecision, LimitRule, RuleResult } from './types.ts';

/** The header values fixed by one rule. */
interface RuleParts {
  /** `name=<name>,` (API Connect entry prefix). */
  apicPrefix: string;
  /** `"<name>"` as an RFC 8941 sf-string. */
  sfName: string;
  /** `"<name>";q=<limit>;w=<seconds>` (draft §3.1). */
  policyItem: string;
}

/** The header values fixed by one rule set. */
interface RuleSetParts {
  limitValue: string;
  policyValue: string;
}

const ruleParts = new WeakMap<LimitRule, RuleParts>();
const ruleSetParts = new WeakMap<readonly LimitRule[], RuleSetParts>();

/**
 * Response headers for a decision: `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
 * `RateLimit-Policy`, `RateLimit` and, when rejected, `Retry-After`.
 *
 * @example
 * rateLimitHeaders(decision)
 * // [['X-RateLimit-Limit', 'name=default,100;'], ['X-RateLimit-Remaining', 'name=default,99;'],
 * //  ['RateLimit-Policy', '"default";q=100;w=3600'], ['RateLimit', '"default";r=99;t=3412']]
 */
export function rateLimitHeaders(decision: LimitDecision): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const results = decision.results;
  if (results.length > 0) {
    const fixed = partsOfRuleSet(decision.rules, results);
    let remaining = '';
    for (let i = 0; i < results.length; i++) {
      remaining += partsOf(results[i].rule).apicPrefix + results[i].remaining + ';';
    }
    const shown = mostRestrictive(decision.allowed, results);
    headers.push(
      ['X-RateLimit-Limit', fixed.limitValue],
      ['X-RateLimit-Remaining', remaining],
      ['RateLimit-Policy', fixed.policyValue],
      ['RateLimit', `${partsOf(shown.rule).sfName};r=${shown.remaining};t=${Math.ceil(shown.resetMs / 1000)}`],
    );
  }
  if (!decision.allowed) headers.push(['Retry-After', String(decision.retryAfterSeconds ?? 1)]);
  return headers;
}

/**
 * The policy the `RateLimit` field reports: on a rejection, the hard limit that blocks longest
 * (so `Retry-After` is not earlier than the end of its effective window, draft §6); otherwise
 * the one with the least available quota, the longer reset breaking ties.
 */
function mostRestrictive(allowed: boolean, results: readonly RuleResult[]): RuleResult {
  let shown = results[0];
  let shownBlocks = !allowed && shown.rule.hard && shown.exceeded;
  for (let i = 1; i < results.length; i++) {
    const r = results[i];
    const blocks = !allowed && r.rule.hard && r.exceeded;
    if (blocks !== shownBlocks) {
      if (blocks) {
        shown = r;
        shownBlocks = true;
      }
      continue;
    }
    if (r.remaining < shown.remaining || (r.remaining === shown.remaining && r.resetMs > shown.resetMs)) shown = r;
  }
  return shown;
}

function partsOfRuleSet(rules: readonly LimitRule[] | undefined, results: readonly RuleResult[]): RuleSetParts {
  let parts = rules === undefined ? undefined : ruleSetParts.get(rules);
  if (parts === undefined) {
    parts = { limitValue: '', policyValue: '' };
    for (let i = 0; i < results.length; i++) {
      const rule = results[i].rule;
      const own = partsOf(rule);
      parts.limitValue += own.apicPrefix + rule.limit + ';';
      parts.policyValue += (i === 0 ? '' : ', ') + own.policyItem;
    }
    if (rules !== undefined) ruleSetParts.set(rules, parts);
  }
  return parts;
}

function partsOf(rule: LimitRule): RuleParts {
  let parts = ruleParts.get(rule);
  if (parts === undefined) {
    const sfName = toSfString(rule.name);
    parts = {
      apicPrefix: `name=${rule.name.replace(/[^\x20-\x7e]|[,;]/g, '_')},`,
      sfName,
      policyItem: `${sfName};q=${rule.limit};w=${toDelaySeconds(rule.windowMs)}`,
    };
    ruleParts.set(rule, parts);
  }
  return parts;
}

/** RFC 8941 §3.3.3: printable ASCII in quotes, `"` and `\` escaped; anything else becomes `_`. */
function toSfString(value: string): string {
  return '"' + value.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&') + '"';
}
