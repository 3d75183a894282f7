/**
 * The redact policy's path reader and evaluator: what each path selects and what remove and
 * redact leave, what it refuses at import (and the gateway refuses the same way), and the content
 * it will not pass through unredacted (RedactionError).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../../src/gateway/context.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { maxRedactDepth, maxRedactVisits } from '../../src/policies/redact/select.ts';
import { AssemblyError, PolicyCompileError, RawBody } from '../../src/policies/types.ts';
import { apiInput, compile, makeContext } from './helpers.ts';

const at = '$.x-ibm-configuration.assembly.execute[0].redact';
const stars = '******';

type Redaction = { action?: 'redact' | 'remove'; path: string };

function redact(redactions: Redaction[], root?: string): Record<string, unknown> {
  return { redact: { version: '2.0.0', redactions, ...(root === undefined ? {} : { root }) } };
}

function jsonBody(value: unknown, type = 'application/json'): RawBody {
  return new RawBody(Buffer.from(JSON.stringify(value)), type);
}

/** Runs one redact block on a message body given as raw JSON and returns the body after it. */
async function redacted(body: unknown, redactions: Redaction[], root: string | null = 'message.body') {
  const ctx = makeContext({ message: { body: jsonBody(body) } });
  await compile({ execute: [redact(redactions, root ?? undefined)] })(ctx);
  return ctx.get('message.body');
}

const order = {
  customer: { name: 'Ann', password: 'p1', card: { number: '4111111111111111', cvv: 123 } },
  cards: [
    { type: 'visa', number: '4111' },
    { type: 'amex', number: '3782' },
    { type: 'visa', number: '4012' },
  ],
  items: [{ sku: 'a', meta: { password: 'p2', deeper: [{ password: 'p3' }] } }],
};

describe('redact: what a path selects', () => {
  test('redact replaces a field with asterisks, a number too', async () => {
    const body = (await redacted(order, [
      { path: 'customer.card.number' },
      { path: 'customer.card.cvv' },
    ])) as typeof order;
    assert.deepEqual(body.customer.card, { number: stars, cvv: stars });
    assert.equal(body.customer.name, 'Ann');
  });

  test('remove deletes the field and keeps its siblings', async () => {
    const body = (await redacted(order, [{ action: 'remove', path: 'customer.card' }])) as typeof order;
    assert.deepEqual(body.customer, { name: 'Ann', password: 'p1' });
  });

  test('`$` stands for the root', async () => {
    const body = (await redacted(order, [{ action: 'remove', path: '$.customer.password' }])) as typeof order;
    assert.equal('password' in body.customer, false);
  });

  test('`**.password` reaches every depth', async () => {
    const body = (await redacted(order, [{ path: '**.password' }])) as typeof order;
    assert.equal(body.customer.password, stars);
    assert.equal(body.items[0].meta.password, stars);
    assert.equal(body.items[0].meta.deeper[0].password, stars);
    assert.equal(/"p\d"/.test(JSON.stringify(body)), false);
  });

  test('an index selects one item of a list, a negative one from its end', async () => {
    const body = (await redacted(order, [{ path: 'cards[0].number' }, { path: 'cards[-1].type' }])) as typeof order;
    assert.deepEqual(
      body.cards.map((card) => [card.type, card.number]),
      [
        ['visa', stars],
        ['amex', '3782'],
        [stars, '4012'],
      ],
    );
  });

  test("a predicate selects the items it holds for (cards[type='visa'].number)", async () => {
    const body = (await redacted(order, [{ path: "cards[type='visa'].number" }])) as typeof order;
    assert.deepEqual(
      body.cards.map((card) => card.number),
      [stars, '3782', stars],
    );
  });

  test('remove with a predicate takes every matching item out of the list', async () => {
    const body = (await redacted(order, [{ action: 'remove', path: "cards[type='visa']" }])) as typeof order;
    assert.deepEqual(body.cards, [{ type: 'amex', number: '3782' }]);
  });

  test('predicates may compare, combine and call pure functions', async () => {
    const body = (await redacted(order, [
      { path: "cards[$contains(number, '41') and $lowercase(type) in ['visa', 'mc']].type" },
    ])) as typeof order;
    assert.deepEqual(
      body.cards.map((card) => card.type),
      [stars, 'amex', 'visa'],
    );
  });

  test('`*` selects every field of an object', async () => {
    const body = (await redacted(order, [{ path: 'customer.card.*' }])) as typeof order;
    assert.deepEqual(body.customer.card, { number: stars, cvv: stars });
  });

  test('backquoted and quoted names select fields with any characters', async () => {
    const body = await redacted({ 'card number': '4111', 'x-key': 'k', a: { 'b c': 1 } }, [
      { path: '`card number`' },
      { path: '`x-key`' },
      { path: 'a."b c"' },
    ]);
    assert.deepEqual(body, { 'card number': stars, 'x-key': stars, a: { 'b c': stars } });
  });

  test('a list root: steps apply to each item', async () => {
    const body = await redacted(
      [
        { ssn: '1', id: 1 },
        { ssn: '2', id: 2 },
      ],
      [{ action: 'remove', path: 'ssn' }],
    );
    assert.deepEqual(body, [{ id: 1 }, { id: 2 }]);
  });

  test('a path that selects nothing changes nothing; the next redaction still runs', async () => {
    const body = await redacted(order, [{ path: 'nowhere.field' }, { path: 'customer.name' }]);
    assert.deepEqual(body, { ...order, customer: { ...order.customer, name: stars } });
  });

  test('an own `__proto__` field of the data is walked as data, and no prototype changes', async () => {
    const body = JSON.parse('{"__proto__": {"password": "p"}, "a": 1}') as Record<string, unknown>;
    const ctx = makeContext({ message: { body: new RawBody(Buffer.from(JSON.stringify(body)), 'application/json') } });
    await compile({ execute: [redact([{ path: '**.password' }], 'message.body')] })(ctx);
    assert.equal(JSON.stringify(ctx.get('message.body')), `{"__proto__":{"password":"${stars}"},"a":1}`);
    assert.equal(({} as Record<string, unknown>).password, undefined);
  });
});

describe('redact: root omitted (paths start at the context)', () => {
  test('message.body.<field> is the same field as root message.body with <field>', async () => {
    const withRoot = await redacted(order, [{ path: 'customer.card.number' }], 'message.body');
    const withoutRoot = await redacted(order, [{ path: 'message.body.customer.card.number' }], null);
    assert.deepEqual(withoutRoot, withRoot);
    assert.equal((withoutRoot as typeof order).customer.card.number, stars);
  });

  test('a header of message is redacted or removed, its name without case', async () => {
    const ctx = makeContext({
      message: { headers: { authorization: 'Bearer secret', 'x-api-key': 'k', accept: 'a' } as Record<string, string> },
    });
    await compile({
      execute: [
        redact([{ path: 'message.headers.Authorization' }, { action: 'remove', path: 'message.headers.`X-Api-Key`' }]),
      ],
    })(ctx);
    assert.equal(ctx.get('message.headers.authorization'), stars);
    assert.equal(ctx.get('message.headers.x-api-key'), undefined);
    assert.equal(ctx.get('message.headers.accept'), 'a');
  });

  test('an invoke output variable is reached by its name', async () => {
    const ctx = makeContext({ vars: { vendor_response: { headers: {}, body: jsonBody({ token: 't', ok: true }) } } });
    await compile({ execute: [redact([{ action: 'remove', path: 'vendor_response.body.token' }])] })(ctx);
    assert.deepEqual(ctx.get('vendor_response.body'), { ok: true });
  });
});

describe('redact: content it cannot redact raises RedactionError (500), never passes through', () => {
  const cases: Array<[string, RawBody | string | number, string | undefined, string]> = [
    [
      'an XML body',
      new RawBody(Buffer.from('<card><number>4111</number></card>'), 'application/xml'),
      'message.body',
      'number',
    ],
    ['an XML body, root omitted', new RawBody(Buffer.from('<a>4111</a>'), 'text/xml'), undefined, 'message.body.a'],
    [
      'a body that does not parse as JSON',
      new RawBody(Buffer.from('{"card": '), 'application/json'),
      'message.body',
      'card',
    ],
    ['a JSON scalar body', jsonBody(4111), 'message.body', 'card'],
    ['a text body', 'card=4111', 'message.body', 'card'],
    ['binary bytes', new RawBody(Buffer.from([0xff, 0xfe, 0x00]), 'application/octet-stream'), 'message.body', 'a'],
  ];
  for (const [what, body, root, path] of cases) {
    test(what, async () => {
      const ctx = makeContext({ message: { body } });
      await assert.rejects(
        async () => compile({ execute: [redact([{ path }], root)] })(ctx),
        (error: unknown) =>
          error instanceof AssemblyError && error.errorName === 'RedactionError' && error.status === 500,
      );
    });
  }

  test('an empty body has nothing to redact (no error); a JSON one set later is redacted', async () => {
    const ctx = makeContext({ message: { body: undefined } });
    const step = compile({ execute: [redact([{ path: 'card' }], 'message.body')] });
    await step(ctx);
    assert.equal(ctx.get('message.body'), undefined);
    ctx.set('message.body', { card: '4111' });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), { card: stars });
  });

  test('a catch block names RedactionError', async () => {
    const ctx = makeContext({ message: { body: new RawBody(Buffer.from('<a/>'), 'application/xml') } });
    await compile({
      execute: [redact([{ path: 'a' }], 'message.body')],
      catch: [
        { errors: ['RedactionError'], execute: [{ 'set-variable': { actions: [{ set: 'caught', value: 'yes' }] } }] },
      ],
    })(ctx);
    assert.equal(ctx.get('caught'), 'yes');
  });

  test(`\`**\` over content nested deeper than ${maxRedactDepth} levels is refused, not half done`, async () => {
    const deep = JSON.parse(`${'{"a":'.repeat(maxRedactDepth + 10)}{"password":"p"}${'}'.repeat(maxRedactDepth + 10)}`);
    const ctx = makeContext({ message: { body: jsonBody(deep) } });
    await assert.rejects(
      async () => compile({ execute: [redact([{ path: '**.password' }], 'message.body')] })(ctx),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'RedactionError',
    );
  });

  test(`a walk over more than ${maxRedactVisits} values is refused, and the body is left as it was`, async () => {
    // Wide, not deep: 2,001 lists of 2,001 numbers, and one password the walk would reach last.
    const wide: unknown[] = Array.from({ length: 2001 }, () => new Array<number>(2001).fill(0));
    wide.push({ password: 'p' });
    const ctx = makeContext({ message: { body: { wide } } });
    await assert.rejects(
      async () => compile({ execute: [redact([{ path: '**.password' }], 'message.body')] })(ctx),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'RedactionError' &&
        /more than 4000000/.test(error.message),
    );
    assert.deepEqual(wide.at(-1), { password: 'p' }, 'nothing redacted half way');
  });

  test('a predicate run over more values than the JSONata budget allows stops with GW_EXPRESSION_BUDGET', async () => {
    const ctx = makeContext({ message: { body: { list: Array.from({ length: 100_001 }, (_, n) => ({ n })) } } });
    await assert.rejects(
      async () => compile({ execute: [redact([{ path: 'list[n > 5].n' }], 'message.body')] })(ctx),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'RuntimeError' &&
        (error as AssemblyError & { code?: string }).code === 'GW_EXPRESSION_BUDGET',
    );
  });
});

describe('redact: what every request shares is never changed by one request', () => {
  // The snapshot's `api` tree and a parameter's default value are one object for every request of
  // the operation (gateway/context.ts freezes them): a path into them must not reach the next call.
  const shared = { name: 'shared-api', properties: { secret: 's3cret' }, operation: { id: 'op', path: '/' } };
  const defaults = { filter: { password: 'default-pass', page: 1 } };
  const contextOf = () =>
    new GatewayContext({
      request: {
        verb: 'POST',
        uri: 'http://127.0.0.1/org/sandbox/api/',
        path: '/',
        search: '',
        headers: {},
        parameters: { filter: defaults.filter },
        body: undefined,
        'content-type': '',
      },
      message: emptyMessage(),
      api: shared,
      properties: {},
      log: pino({ level: 'silent' }),
      operation: { id: 'op', path: '/', verb: 'POST' },
      signal: new AbortController().signal,
    });

  for (const [what, redaction] of [
    ['remove api.name', { action: 'remove', path: 'api.name' }],
    ['redact api.properties.secret', { path: 'api.properties.secret' }],
    ['remove the whole api.properties', { action: 'remove', path: 'api.properties' }],
    ['redact a parameter default', { path: 'request.parameters.filter.password' }],
    ['remove every field of a parameter default', { action: 'remove', path: 'request.parameters.filter.*' }],
  ] as Array<[string, Redaction]>) {
    test(`${what}: RedactionError, and the next request sees the shared value unchanged`, async () => {
      await assert.rejects(
        async () => {
          await compile({ execute: [redact([redaction])] })(contextOf());
        },
        (error: unknown) => error instanceof AssemblyError && error.errorName === 'RedactionError',
      );
      const next = contextOf();
      assert.equal(next.get('api.name'), 'shared-api');
      assert.equal(next.get('api.properties.secret'), 's3cret');
      assert.deepEqual(next.get('request.parameters.filter'), { password: 'default-pass', page: 1 });
      assert.deepEqual(shared.properties, { secret: 's3cret' });
      assert.deepEqual(defaults.filter, { password: 'default-pass', page: 1 });
    });
  }
});

describe('redact: refused at import, and by the gateway the same way', () => {
  const refusals: Array<[string, Record<string, unknown>, string, string, RegExp]> = [
    [
      'version 1.0.0 (the v5 XPath form)',
      { redact: { version: '1.0.0', actions: [{ action: 'redact', from: ['all'], path: '//*[@name="card"]' }] } },
      `${at}.version`,
      'unsupported-version',
      /v5 compatible.*version: 2\.0\.0.*redactions/,
    ],
    [
      'a function call as a step',
      redact([{ path: 'card.$lowercase(number)' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /function call/,
    ],
    ['an operator at the top', redact([{ path: 'a + b' }]), `${at}.redactions[0].path`, 'redact-path', /location path/],
    [
      'a variable other than $',
      redact([{ path: '$secret.card' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /\$secret/,
    ],
    [
      '$$ (the context root)',
      redact([{ path: '$$.card' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /variable \$\$/,
    ],
    ['a positional binding', redact([{ path: 'cards#$i.number' }]), `${at}.redactions[0].path`, 'redact-path', /index/],
    ['a sort step', redact([{ path: 'cards^(number)' }]), `${at}.redactions[0].path`, 'redact-path', /sort/],
    [
      'a path that does not parse',
      redact([{ path: 'cards[' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /not valid JSONata/,
    ],
    [
      '$eval in a predicate',
      redact([{ path: 'cards[$eval(t)].n' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /\$eval/,
    ],
    [
      'a regex in a predicate',
      redact([{ path: 'cards[$contains(t, /x/)].n' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /regex/,
    ],
    ['a path ending in **', redact([{ path: 'a.**' }]), `${at}.redactions[0].path`, 'redact-path', /\*\*/],
    [
      'a path that selects the root',
      redact([{ path: '$' }], 'message.body'),
      `${at}.redactions[0].path`,
      'redact-path',
      /root itself/,
    ],
    [
      'no root and no context variable first',
      redact([{ path: '**.password' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /context variable/,
    ],
    [
      'no root and a whole variable',
      redact([{ path: 'message' }]),
      `${at}.redactions[0].path`,
      'redact-path',
      /not the variable/,
    ],
    [
      'a prototype field',
      redact([{ path: 'a.__proto__' }], 'message.body'),
      `${at}.redactions[0].path`,
      'redact-path',
      /prototype/,
    ],
    [
      'a root that is not a variable name',
      redact([{ path: 'a' }], 'message.body[0]'),
      `${at}.root`,
      'redact-root',
      /plain field names/,
    ],
    [
      'no redactions',
      { redact: { version: '2.0.0', root: 'message.body' } },
      `${at}.redactions`,
      'required',
      /redactions/,
    ],
  ];
  for (const [what, block, path, rule, reason] of refusals) {
    test(what, () => {
      const problems = assemblyProblems({ execute: [block] }, {}, []);
      assert.deepEqual(
        problems.map((p) => [p.path, p.rule]),
        [[path, rule]],
      );
      assert.match(problems[0].reason, reason);
      assert.throws(
        () => compileAssembly({ execute: [block] }, apiInput({}), policyRegistry),
        (error: unknown) => error instanceof PolicyCompileError && error.path === path && error.rule === rule,
      );
    });
  }

  test('every bad path of a block is listed at once', () => {
    const problems = assemblyProblems(
      { execute: [redact([{ path: 'a + b' }, { path: 'ok' }, { path: '$f()' }], 'message.body')] },
      {},
      [],
    );
    assert.deepEqual(
      problems.map((p) => p.path),
      [`${at}.redactions[0].path`, `${at}.redactions[2].path`],
    );
  });

  test('an unknown action is refused by the schema', () => {
    const problems = assemblyProblems(
      { execute: [redact([{ action: 'mask' as 'redact', path: 'a' }], 'message.body')] },
      {},
      [],
    );
    assert.deepEqual(
      problems.map((p) => [p.path, p.rule]),
      [[`${at}.redactions[0].action`, 'enum']],
    );
  });

  test('the subset imports: fields, quotes, *, **, indexes and predicates', () => {
    const paths = [
      'a.b',
      '`a b`.c',
      '*.x',
      '**.password',
      'a[0]',
      'a[-1].b',
      'a[[0, 2]]',
      "cards[type='visa'].number",
      '$[0].a',
    ];
    assert.deepEqual(
      assemblyProblems(
        {
          execute: [
            redact(
              paths.map((path) => ({ path })),
              'message.body',
            ),
          ],
        },
        {},
        [],
      ),
      [],
    );
  });
});
