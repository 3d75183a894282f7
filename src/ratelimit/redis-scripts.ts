/**
 * The Redis counter store's Lua scripts (docs/rate-limits.md, "Leases") and the per-rule-set
 * arguments they take. Both go through ioredis' `defineCommand` (`EVALSHA`, `EVAL` on `NOSCRIPT`).
 */
import type { Cluster, Redis } from 'ioredis';
import type { LimitRule } from './types.ts';

/**
 * Grants a lease. KEYS[i]: the window key of rule i without its window index. ARGV[1]: the
 * caller's deadline in ms on Redis's clock (past it, nothing is counted: reply { -1, now });
 * ARGV[2]: most hits to grant; then limit, windowMs, hard (1/0) per rule. A hard rule at its
 * limit blocks (granted 0, nothing counted); else the grant is at most 1/8 of the smallest hard
 * remainder (at least 1), so the batch shrinks as the window fills. Returns
 * { granted, now, count_1, resetMs_1, window_1, … } with the counts after the grant; `now` (ms,
 * Redis's `TIME`) keeps the node's reckoning of Redis's clock current.
 */
const GRANT_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = tonumber(ARGV[1])
if deadline > 0 and now > deadline then return { -1, now } end
local n = #KEYS
local keys, counts, resets, windows = {}, {}, {}, {}
local room = nil
for i = 1, n do
  local limit = tonumber(ARGV[i * 3])
  local windowMs = tonumber(ARGV[i * 3 + 1])
  windows[i] = math.floor(now / windowMs)
  keys[i] = KEYS[i] .. ':' .. string.format('%d', windows[i])
  counts[i] = tonumber(redis.call('GET', keys[i]) or '0')
  resets[i] = (windows[i] + 1) * windowMs - now
  if ARGV[i * 3 + 2] == '1' and (room == nil or limit - counts[i] < room) then room = limit - counts[i] end
end
local granted = tonumber(ARGV[2])
if room ~= nil then
  if room <= 0 then granted = 0 else granted = math.min(granted, math.max(1, math.floor(room / 8))) end
end
if granted > 0 then
  for i = 1, n do
    counts[i] = redis.call('INCRBY', keys[i], granted)
    if counts[i] == granted then redis.call('PEXPIRE', keys[i], resets[i] + 1000) end
  end
end
local reply = { granted, now }
for i = 1, n do
  reply[i * 3] = counts[i]
  reply[i * 3 + 1] = resets[i]
  reply[i * 3 + 2] = windows[i]
end
return reply
`;

/** Gives back unused hits. KEYS: exact window keys; ARGV[1]: hits. Never below 0, never creates a key. */
const GIVE_BACK_SCRIPT = `
local n = tonumber(ARGV[1])
for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count > 0 then redis.call('DECRBY', KEYS[i], math.min(n, count)) end
end
return 0
`;

const GRANT = 'porticoRateLimitGrant';
const GIVE_BACK = 'porticoRateLimitGiveBack';

type ScriptCommand = (numberOfKeys: number, ...args: string[]) => Promise<number[]>;

/** The two scripts as calls on one client. */
export interface CounterScripts {
  /** `grant(keys, deadline, leaseMax, argv)`: the grant reply `{ granted, now, count_1, resetMs_1, window_1, … }`. */
  grant(keys: string[], deadline: number, leaseMax: string, argv: readonly string[]): Promise<number[]>;
  /** Takes `hits` off each of the exact window keys (never below 0). */
  giveBack(windowKeys: string[], hits: number): Promise<unknown>;
}

/** Defines both scripts on `client`. */
export function defineScripts(client: Redis | Cluster): CounterScripts {
  client.defineCommand(GRANT, { lua: GRANT_SCRIPT });
  client.defineCommand(GIVE_BACK, { lua: GIVE_BACK_SCRIPT });
  const commands = client as unknown as Record<typeof GRANT | typeof GIVE_BACK, ScriptCommand>;
  const grant = commands[GRANT].bind(client);
  const giveBack = commands[GIVE_BACK].bind(client);
  return {
    grant: (keys, deadline, leaseMax, argv) => grant(keys.length, ...keys, String(deadline), leaseMax, ...argv),
    giveBack: (windowKeys, hits) => giveBack(windowKeys.length, ...windowKeys, String(hits)),
  };
}

/** What is fixed per rule set: the key suffixes and the grant script's per-rule ARGV. */
export interface CompiledRules {
  keySuffixes: string[];
  argv: string[];
}

/** Compiles a rule set once (cached by its identity, as `rulesFromPlan` gives it). */
export function ruleCompiler(): (rules: readonly LimitRule[]) => CompiledRules {
  const compiledRules = new WeakMap<readonly LimitRule[], CompiledRules>();
  return function compile(rules) {
    let compiled = compiledRules.get(rules);
    if (compiled === undefined) {
      compiled = {
        keySuffixes: rules.map((rule) => `}:${rule.name}:${rule.windowMs}`),
        argv: rules.flatMap((rule) => [String(rule.limit), String(rule.windowMs), rule.hard ? '1' : '0']),
      };
      compiledRules.set(rules, compiled);
    }
    return compiled;
  };
}
