import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

const productText = readFileSync(
  new URL('../../examples/accessories/accessories-product.yaml', import.meta.url),
  'utf8',
);

describe('snapshot swap under load', () => {
  let t: TestDemo;
  const agent = new Agent({ connections: 1000 });
  before(async () => {
    t = await startTestDemo();
  });
  after(async () => {
    await agent.close();
    await t.close();
  });

  test('publishing while 1000 requests are in flight fails none of them', async () => {
    const headers = { 'X-IBM-Client-Id': t.handle.clientId };
    const gateway = t.handle.platform.gateway!;
    const before = gateway.current!.change;
    const calls = Array.from({ length: 1000 }, (_, i) =>
      fetch(`${t.base}/logistics/${i % 2 ? 'stores' : 'shipping'}?zip=90210`, {
        headers,
        dispatcher: agent,
      } as RequestInit).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    const services = t.handle.platform.services;
    for (let n = 1; n <= 5; n++) {
      await services.putProduct(t.orgId, 'sandbox', {
        text: productText.replace(/summary: .*/, `summary: Reload ${n}`),
        file: 'accessories-product.yaml',
        state: 'published',
        attachments: {},
      });
      await new Promise((r) => setTimeout(r, 20));
    }
    const statuses = await Promise.all(calls);
    const failures = statuses.filter((s) => s !== 200);
    assert.deepEqual(failures, []);
    await gateway.reload();
    assert.ok(gateway.current!.change > before, 'the snapshot was swapped during the load');
  });

  test('an API unchanged by a publish is not recompiled', async () => {
    const gateway = t.handle.platform.gateway!;
    const find = () => gateway.current!.catalogs.get('demo/sandbox')!.apis.find((a) => a.name === 'logistics')!;
    const first = find();
    await t.handle.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText.replace(/summary: .*/, 'summary: Once more'),
      file: 'p.yaml',
      state: 'published',
    });
    await gateway.reload();
    assert.equal(find().flow, first.flow);
  });
});
