/**
 * Issue 17, item 2: the import check and the gateway read a policy block through the same
 * registry, so a block the gateway's flow compiler refuses is refused at import, naming its
 * path. Each case below was "created" at import before (it landed in the snapshot's failures).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { apiInput } from './helpers.ts';

// QuickJS, which runs the scripts, stops at a few hundred nesting levels; V8 (the old import check) parses this.
const deepSource = `return ${'['.repeat(1000)}${']'.repeat(1000)};`;

const cases: Array<{ what: string; policy: Record<string, unknown>; path: string }> = [
  {
    what: 'a throw status out of the HTTP range',
    policy: { throw: { name: 'E', 'error-status-code': '999' } },
    path: 'throw.error-status-code',
  },
  {
    what: 'a switch with two otherwise cases',
    policy: { switch: { version: '2.0.0', case: [{ otherwise: [] }, { otherwise: [] }] } },
    path: 'switch.case[1]',
  },
  {
    what: 'validate-against wsdl, which Portico does not run',
    policy: { validate: { 'validate-against': 'wsdl' } },
    path: 'validate.validate-against',
  },
  {
    what: 'a v5 condition the gateway cannot translate',
    policy: { if: { condition: "!(request.verb === 'GET')", execute: [] } },
    path: 'if.condition',
  },
  {
    what: 'a script QuickJS cannot parse',
    policy: { gatewayscript: { version: '2.0.0', source: deepSource } },
    path: 'gatewayscript.source',
  },
  {
    what: 'an invoke timeout over a day',
    policy: { invoke: { 'target-url': 'http://127.0.0.1:9/', timeout: 100_000 } },
    path: 'invoke.timeout',
  },
  {
    what: 'a count limit, which Portico does not count',
    policy: { ratelimit: { 'count-limit': [{ name: 'c' }] } },
    path: 'ratelimit.count-limit',
  },
  {
    what: 'a burst limit operation other than consume',
    policy: { ratelimit: { 'burst-limit': [{ name: 'b', operation: 'check' }] } },
    path: 'ratelimit.burst-limit[0].operation',
  },
];

function document(policy: Record<string, unknown>, name: string): string {
  return JSON.stringify({
    swagger: '2.0',
    info: { title: name, version: '1.0.0', 'x-ibm-name': name },
    basePath: `/${name}`,
    paths: { '/x': { get: { responses: { 200: { description: 'ok' } } } } },
    'x-ibm-configuration': { assembly: { execute: [policy] } },
  });
}

describe('a policy block the gateway refuses is refused at import', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
  });
  after(() => t.close());

  cases.forEach(({ what, policy, path }, index) => {
    test(what, async () => {
      const at = `$.x-ibm-configuration.assembly.execute[0].${path}`;
      assert.throws(
        () => compileAssembly({ execute: [policy] }, apiInput({}), policyRegistry),
        (error: unknown) => error instanceof PolicyCompileError && error.path.startsWith(at),
        'the gateway refuses it',
      );
      const answer = await t.call('POST', '/api/apis', {
        document: document(policy, `agree${index}`),
        file: 'agree.json',
      });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.ok(JSON.stringify(answer.body).includes(at), `the import names ${at}: ${JSON.stringify(answer.body)}`);
    });
  });
});
