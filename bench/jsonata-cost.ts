/**
 * What one JSONata evaluation costs at the gateway (src/policies/conditions.ts), run on a real
 * GatewayContext in this process:
 *
 *   node --import tsx bench/jsonata-cost.ts [--calls 100000] [--items 20000]
 *
 * - "hostile": the worst cases a provider expression meets with consumer input (a filter inside
 *   a filter over 20,000 items, a range sized by a query parameter, deep recursion, `$eval` of a
 *   query parameter): wall time of one evaluation, and how it ended (value or error code);
 *   and a linear map of 10,000 items in one expression, which must still succeed;
 * - "simple": `$httpVerb() = 'GET'` evaluated `--calls` times, rounds alternating the expression
 *   as conditions.ts evaluated it before the budget (no hook) and as it does now: µs per
 *   evaluation (process.hrtime), the cost every switch/if condition pays.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { emptyMessage, GatewayContext } from '../src/gateway/context.ts';
import jsonata from 'jsonata';
import { compileCondition, compileExpression, contextView } from '../src/policies/conditions.ts';
import { LinearRegexEngine } from '../src/policies/linear-regex-engine.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '100000' }, items: { type: 'string', default: '20000' } },
});
const calls = Number(values.calls);
const itemCounts = values.items.split(',').map(Number);

function context(search = ''): GatewayContext {
  const request = {
    verb: 'GET',
    uri: `http://127.0.0.1/org/sandbox/api/${search}`,
    path: '/',
    search,
    headers: {},
    parameters: {},
    body: undefined,
    'content-type': '',
  };
  return new GatewayContext({
    request,
    message: emptyMessage(),
    api: { name: 'bench', operation: { id: 'op', path: '/' } },
    properties: {},
    log: pino({ level: 'silent' }),
    operation: { id: 'op', path: '/', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

const linear = { items: Array.from({ length: 10_000 }, (_, v) => ({ v, name: `item ${v}` })) };
const itemsOf = (count: number) => Array.from({ length: count }, (_, index) => ({ v: index }));
const quadratic = `$count(body.items[($x := $; $count($$.body.items[v = $x.v]) > 0)])`;
const heavy = '$count([1..2000].($x := $; [1..2000][$ = $x]))';
const hostile: Array<[string, string, unknown, string]> = [
  // Unbounded, 20,000 items take minutes (n² steps): `--items 1000,2000,4000` shows the growth.
  ...itemCounts.map((count): [string, string, unknown, string] => [
    `quadratic filter, ${count} items`,
    quadratic,
    { body: { items: itemsOf(count) } },
    '',
  ]),
  ['range from a query parameter', `$sum([1..$number($queryParameter('n'))])`, {}, '?n=10000000'],
  ['recursion 100,000 deep', `($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))`, {}, ''],
  ['$eval of a query parameter', `$eval($queryParameter('e'))`, {}, `?e=${encodeURIComponent(heavy)}`],
  ['linear map of 10,000 items, one expression', 'items.{ "id": v, "label": $uppercase(name) }', linear, ''],
];

console.log('| hostile expression | ms | outcome |\n|---|---|---|');
for (const [label, source, input, search] of hostile) {
  const evaluate = compileExpression(source, '$.value');
  const started = process.hrtime.bigint();
  let outcome: string;
  try {
    outcome = `value ${JSON.stringify(await evaluate(input, context(search))).slice(0, 40)}`;
  } catch (error) {
    const code = (error as { code?: string }).code;
    outcome = `error ${code ?? ''} ${(error as Error).message ?? ''}`.slice(0, 100);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(`| ${label} | ${ms.toFixed(0)} | ${outcome} |`);
}

// Before the budget: the same expression parsed and evaluated as conditions.ts did, no hook.
const unbounded = jsonata(`$httpVerb() = 'GET'`, { RegexEngine: LinearRegexEngine });
unbounded.registerFunction('httpVerb', () => 'GET', '<:s>');
const bounded = compileCondition(`$httpVerb() = 'GET'`, '$.condition');
const ctx = context();
const runs: Record<string, () => Promise<unknown>> = {
  'without budget (before)': () => unbounded.evaluate(contextView(ctx), { __porticoFlowContext: ctx }),
  'with budget (now)': () => bounded(ctx),
};
const perCall: Record<string, number[]> = {};
for (let round = 0; round < 6; round++) {
  for (const [label, run] of Object.entries(runs)) {
    for (let i = 0; i < 10_000; i++) await run();
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await run();
    (perCall[label] ??= []).push(Number(process.hrtime.bigint() - started) / 1e3 / calls);
  }
}
console.log(`\n$httpVerb() = 'GET', ${calls} evaluations a round, µs per evaluation (rounds; min, median):`);
for (const [label, rounds] of Object.entries(perCall)) {
  const sorted = [...rounds].sort((a, b) => a - b);
  const median = (sorted[2] + sorted[3]) / 2;
  const shown = rounds.map((us) => us.toFixed(2)).join(', ');
  console.log(`  ${label}: ${shown}; min ${sorted[0].toFixed(2)}, median ${median.toFixed(2)}`);
}
