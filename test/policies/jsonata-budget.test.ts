/**
 * JSONata at the gateway is bounded (src/policies/jsonata-budget.ts): a provider expression that
 * consumer input makes quadratic, a range sized by a query parameter, deep recursion and `$eval`
 * of request text each fail with `RuntimeError` (`GW_EXPRESSION_BUDGET`) within the budget, and a
 * simple call to the same gateway is answered while one runs; a big but linear map still works.
 * Through a real gateway (startPlatform), as a consumer calls it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform } from '../../src/platform.ts';
import { compileExpression } from '../../src/policies/conditions.ts';
import { ExpressionBudgetError, jsonataLimits } from '../../src/policies/jsonata-budget.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import { makeContext } from './helpers.ts';

const answer = (value: string) => ({
  'set-variable': { version: '2.0.0', actions: [{ set: 'message.body', value }] },
});
const ifThen = (condition: string) => ({
  if: { version: '1.0.0', title: 'hostile-if', condition, execute: [answer('matched')] },
});
const switchOn = (condition: string) => ({
  switch: { version: '2.0.0', title: 'hostile-switch', case: [{ condition, execute: [answer('matched')] }] },
});
const mapValue = (actions: unknown[]) => ({
  map: {
    version: '2.0.0',
    title: 'hostile-map',
    inputs: { req: { variable: 'request.body', content: 'application/json' } },
    outputs: { out: { variable: 'message.body', content: 'application/json' } },
    actions,
  },
});

const quadratic = '$count(req.items[($x := $; $count($$.req.items[v = $x.v]) > 0)])';
const recursion = "($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f($number($queryParameter('n')))) > 0";
// The consumer's own program, quadratic: 4,000,000 steps.
const evalText = '$count([1..2000].($x := $; [1..2000][$ = $x]))';

const operations: Record<string, { method: 'get' | 'post'; execute: unknown[] }> = {
  simple: { method: 'get', execute: [ifThen("$httpVerb() = 'GET'")] },
  quadratic: { method: 'post', execute: [mapValue([{ set: 'out.count', value: quadratic }])] },
  range: { method: 'get', execute: [switchOn("$sum([1..$number($queryParameter('n'))]) > 0")] },
  recursion: { method: 'get', execute: [ifThen(recursion)] },
  evaluated: { method: 'get', execute: [switchOn("$eval($queryParameter('e')) > 0")] },
  linear: {
    method: 'post',
    execute: [
      mapValue([
        { create: 'out.items', foreach: 'req.items', value: '{ "id": v, "label": $uppercase(name) }' },
        { set: 'out.total', value: '$sum(req.items.v)' },
      ]),
    ],
  },
};

function document(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [id, operation] of Object.entries(operations))
    paths[`/${id}`] = { [operation.method]: { operationId: id, responses: { 200: { description: 'ok' } } } };
  return {
    swagger: '2.0',
    info: { title: 'budget', version: '1.0.0', 'x-ibm-name': 'budget' },
    basePath: '/budget',
    paths,
    'x-ibm-configuration': {
      assembly: {
        execute: [
          {
            'operation-switch': {
              version: '1.0.0',
              title: 'by operation',
              case: Object.entries(operations).map(([id, operation]) => ({
                operations: [id],
                execute: operation.execute,
              })),
            },
          },
        ],
      },
    },
  };
}

const items = (count: number) => Array.from({ length: count }, (_, v) => ({ v, name: `item ${v}` }));

describe('JSONata evaluation at the gateway is bounded', () => {
  let platform: Platform;
  let dataDir: string;
  let base: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'portico-jsonata-'));
    const settings = loadSettings(
      { PORTICO_GATEWAY_PORT: '0', PORTICO_MANAGEMENT_PORT: '0', PORTICO_PORTAL_PORT: '0' },
      { dataDir },
    );
    platform = await startPlatform(settings, pino({ level: 'silent' }), 'gateway');
    const services = platform.services;
    const org = await services.ensureOrg('budget-org', 'Budget Org');
    const imported = await services.importApi(org.orgId, {
      text: JSON.stringify(document()),
      file: 'api.json',
      replace: true,
    });
    await services.setApiState(org.orgId, imported.api.name, imported.api.version, 'online');
    const product = [
      'product: 1.0.0',
      'info: { name: budget-product, title: Budget, version: 1.0.0 }',
      'visibility: { view: { type: public, enabled: true }, subscribe: { type: authenticated, enabled: true } }',
      'plans: { default: { title: Default, approval: false } }',
      `apis: { api: { name: 'budget:1.0.0' } }`,
    ].join('\n');
    await services.putProduct(org.orgId, 'sandbox', { text: product, file: 'product.yaml', state: 'published' });
    await platform.gateway!.reload();
    base = `${platform.urls.gateway}/budget-org/sandbox/budget`;
    assert.equal(await (await fetch(`${base}/simple`)).text(), 'matched');
  });

  after(async () => {
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Sends the hostile call, and 50 ms later a simple one: the simple one is answered in under
   * 500 ms, the hostile one with the budget's error within a few seconds.
   */
  async function hostile(path: string, init: RequestInit = {}): Promise<void> {
    const started = performance.now();
    const pending = fetch(`${base}${path}`, init).then(async (response) => ({
      status: response.status,
      text: await response.text(),
      ms: performance.now() - started,
    }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const simpleStarted = performance.now();
    const simple = await fetch(`${base}/simple`);
    const simpleMs = performance.now() - simpleStarted;
    assert.equal(await simple.text(), 'matched');
    const outcome = await pending;
    assert.ok(simpleMs < 500, `the simple call took ${simpleMs.toFixed(0)} ms while ${path} ran`);
    assert.equal(outcome.status, 500, outcome.text);
    const body = JSON.parse(outcome.text) as Record<string, string>;
    assert.equal(body.httpCode, '500');
    assert.equal(body.httpMessage, 'Internal Server Error');
    assert.match(body.moreInformation, /^The JSONata expression \S+ was stopped: it /);
    assert.ok(outcome.ms < 5_000, `${path} was answered after ${outcome.ms.toFixed(0)} ms`);
  }

  test('a filter inside a filter over 20,000 items (map value) fails within the budget', async () => {
    await hostile('/quadratic', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: items(20_000) }),
    });
  });

  test('a range sized by a query parameter (switch condition) fails within the budget', async () => {
    await hostile('/range?n=10000000');
  });

  test('a recursion 100,000 deep (if condition) fails within the budget', async () => {
    await hostile('/recursion?n=100000');
  });

  test('$eval of a quadratic program sent in a query parameter fails within the budget', async () => {
    await hostile(`/evaluated?e=${encodeURIComponent(evalText)}`);
  });

  test('$eval of a program that rebinds the budget variable itself still fails within the budget', async () => {
    // Found by a review: the budget sat in a variable an expression can assign ($__porticoBudget),
    // so a consumer's $eval text switched off every limit and held the event loop for seconds.
    const rebinding = `[$__porticoBudget := {"steps": -18014398509481988}, ${evalText}][1]`;
    await hostile(`/evaluated?e=${encodeURIComponent(rebinding)}`);
  });

  test('a map of 10,000 items, linear, still succeeds', async () => {
    const sent = items(10_000);
    const response = await fetch(`${base}/linear`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: sent }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { items: Array<{ id: number; label: string }>; total: number };
    assert.equal(body.items.length, 10_000);
    assert.deepEqual(body.items[9_999], { id: 9_999, label: 'ITEM 9999' });
    assert.equal(body.total, (9_999 * 10_000) / 2);
  });
});

describe('the budget of one evaluation', () => {
  test('covers the steps of $eval: the error is the budget’s, not $eval’s D3121', async () => {
    const evaluate = compileExpression("$eval($header('x'))", '$.value');
    const ctx = makeContext({ headers: { x: evalText } });
    await assert.rejects(
      async () => evaluate(undefined, ctx),
      (error) => error instanceof ExpressionBudgetError && error.code === 'GW_EXPRESSION_BUDGET',
    );
  });

  test('bounds a sequence: a range one value past the limit is refused, one at it is not', async () => {
    const evaluate = compileExpression('$count([1..$])', '$.value');
    assert.equal(await evaluate(jsonataLimits.sequence, makeContext()), jsonataLimits.sequence);
    await assert.rejects(
      async () => evaluate(jsonataLimits.sequence + 1, makeContext()),
      (error) => error instanceof ExpressionBudgetError && /more than 100000 values/.test(error.message),
    );
  });

  test('a run-time JSONata error (a type error on consumer data) is RuntimeError naming the expression, not a defect', async () => {
    const evaluate = compileExpression("$header('x') + 1", '$.assembly.execute[0].map.actions[0].value');
    await assert.rejects(
      async () => evaluate(undefined, makeContext({ headers: { x: 'text' } })),
      (error) =>
        error instanceof AssemblyError &&
        error.errorName === 'RuntimeError' &&
        error.status === 500 &&
        error.message.includes('$.assembly.execute[0].map.actions[0].value') &&
        /T2001/.test(error.message),
    );
  });

  test('lets a recursion 400 calls deep finish', async () => {
    const evaluate = compileExpression('($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f($))', '$.value');
    assert.equal(await evaluate(400, makeContext()), 400);
  });
});
