import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError, ConsumerClosedError, PolicyCompileError, RawBody } from '../../src/policies/types.ts';
import type { PolicySettings } from '../../src/policies/types.ts';
import { leftResponse, makeContext } from './helpers.ts';
import { writeLoopbackCertificate } from '../helpers/tls.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

const baseSettings: PolicySettings = {
  maxBackendBodyBytes: 1 << 20,
  tlsProfiles: {},
  script: { timeoutMs: 200, memoryBytes: 1 << 24 },
};

function compile(
  invoke: Record<string, unknown>,
  settings: PolicySettings = baseSettings,
  properties: Record<string, string> = {},
) {
  return compileAssembly(
    { execute: [{ invoke: { version: '2.0.0', title: 'call', ...invoke } }] },
    {
      name: 'api',
      version: '1.0.0',
      document: {},
      properties,
      catalog: { name: 'sandbox', orgName: 'org' },
      settings,
    },
    policyRegistry,
  );
}

describe('invoke', () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  const stalled: ServerResponse[] = [];
  const held: ServerResponse[] = [];
  // For each held answer, whether its connection closed before the answer was sent.
  const closedEarly: boolean[] = [];
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.url?.startsWith('/slow')) return void setTimeout(() => res.end('late'), 3000);
        if (req.url?.startsWith('/stall')) {
          // The head and half the body, then nothing for longer than the policy's timeout.
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '20' });
          res.write('{"half":');
          stalled.push(res);
          return;
        }
        if (req.url?.startsWith('/hold')) {
          held.push(res);
          res.on('close', () => closedEarly.push(!res.writableEnded));
          return;
        }
        if (req.url?.startsWith('/large')) {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return void res.end(Buffer.alloc(64 * 1024, 'x'));
        }
        if (req.url?.startsWith('/redirect')) {
          res.writeHead(302, { location: '/moved?from=redirect' });
          return void res.end();
        }
        if (req.url?.startsWith('/loop')) {
          res.writeHead(307, { location: '/loop' });
          return void res.end();
        }
        if (req.url?.startsWith('/hop/')) {
          res.writeHead(302, { location: `/hop/${Number(req.url.slice('/hop/'.length)) + 1}` });
          return void res.end();
        }
        if (req.url?.startsWith('/fail')) {
          res.writeHead(503, { 'content-type': 'application/json' });
          return void res.end('{"down":true}');
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-backend': 'yes' });
        res.end(JSON.stringify({ ok: true, method: req.method }));
      });
    });
    base = `http://127.0.0.1:${await listen(server)}`;
  });
  after(() => {
    for (const res of [...stalled, ...held]) res.destroy();
    // The redirect tests leave the gateway's pool connections it opened and never used (a
    // redirect's second request found the first connection free again); the backend would wait
    // for them until the pool's 30 s keep-alive.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    return closed;
  });

  it('sends the message with verb keep, drops consumer credentials and hop-by-hop headers, and stores the answer in message', async () => {
    const step = compile({ 'target-url': `${base}/items` });
    const ctx = makeContext({
      verb: 'POST',
      headers: {
        'x-ibm-client-id': 'id',
        'x-ibm-client-secret': 's',
        connection: 'keep-alive',
        'x-custom': 'c',
        'content-type': 'application/json',
      },
    });
    ctx.message.headers = { ...ctx.request.headers };
    ctx.message.body = new RawBody(Buffer.from('{"a":1}'), 'application/json');
    await step(ctx);
    const last = seen.at(-1)!;
    assert.equal(last.method, 'POST');
    assert.equal(last.body, '{"a":1}');
    assert.equal(last.headers['x-custom'], 'c');
    assert.equal(last.headers['x-ibm-client-id'], undefined);
    assert.equal(last.headers['x-ibm-client-secret'], undefined);
    assert.equal(ctx.message.status.code, 200);
    assert.equal(ctx.message.headers['x-backend'], 'yes');
    assert.deepEqual(ctx.get('message.body'), { ok: true, method: 'POST' });
  });

  it('substitutes properties and parameters, encoding a parameter so it cannot add a query parameter', async () => {
    const step = compile({ 'target-url': '$(svc)/q?to={zip}', verb: 'GET', output: 'out' }, baseSettings, {
      svc: base,
    });
    const ctx = makeContext({ parameters: { zip: '1&admin=true' } });
    await step(ctx);
    assert.equal(seen.at(-1)!.url, '/q?to=1%26admin%3Dtrue');
    assert.deepEqual(ctx.get('out.body'), { ok: true, method: 'GET' });
  });

  it('honours header-control allowlists and parameter-control', async () => {
    const step = compile({
      'target-url': `${base}/h`,
      verb: 'GET',
      'header-control': { type: 'allowlist', values: ['x-keep'] },
      'parameter-control': { type: 'allowlist', values: ['page'] },
    });
    const ctx = makeContext({ search: '?page=2&secret=x', headers: { 'x-keep': '1', 'x-drop': '2' } });
    ctx.message.headers = { ...ctx.request.headers };
    await step(ctx);
    const last = seen.at(-1)!;
    assert.equal(last.url, '/h?page=2');
    assert.equal(last.headers['x-keep'], '1');
    assert.equal(last.headers['x-drop'], undefined);
  });

  it("treats API Connect's older whitelist / blacklist names as allowlist / blocklist", async () => {
    const step = compile({
      'target-url': `${base}/h`,
      verb: 'GET',
      'header-control': { type: 'whitelist', values: ['x-keep'] },
      'parameter-control': { type: 'whitelist', values: ['page'] },
    });
    const ctx = makeContext({ search: '?page=2&secret=x', headers: { 'x-keep': '1', 'x-drop': '2' } });
    ctx.message.headers = { ...ctx.request.headers };
    await step(ctx);
    assert.equal(seen.at(-1)!.url, '/h?page=2');
    assert.equal(seen.at(-1)!.headers['x-keep'], '1');
    assert.equal(seen.at(-1)!.headers['x-drop'], undefined, 'a whitelist forwards only what it names');
    const blocked = compile({
      'target-url': `${base}/h`,
      verb: 'GET',
      'header-control': { type: 'blacklist', values: ['x-drop'] },
    });
    const other = makeContext({ headers: { 'x-keep': '1', 'x-drop': '2' } });
    other.message.headers = { ...other.request.headers };
    await blocked(other);
    assert.equal(seen.at(-1)!.headers['x-keep'], '1');
    assert.equal(seen.at(-1)!.headers['x-drop'], undefined);
  });

  it('sends basic credentials from username and password', async () => {
    await compile({ 'target-url': `${base}/auth`, verb: 'GET', username: 'u', password: 'p' })(makeContext());
    assert.equal(seen.at(-1)!.headers.authorization, `Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('raises OperationError on a 5xx only when stop-on-error lists it; otherwise the answer flows on', async () => {
    const lenient = makeContext();
    await compile({ 'target-url': `${base}/fail`, verb: 'GET', output: 'r', 'stop-on-error': [] })(lenient);
    assert.equal(lenient.get('r.status.code'), 503);
    await assert.rejects(
      async () =>
        compile({ 'target-url': `${base}/fail`, verb: 'GET', 'stop-on-error': ['OperationError'] })(makeContext()),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'OperationError',
    );
  });

  it('a refused connection is ConnectionError 502; into an output variable with stop-on-error empty the flow goes on', async () => {
    await assert.rejects(
      async () => compile({ 'target-url': 'http://127.0.0.1:1/x', verb: 'GET' })(makeContext()),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'ConnectionError' && error.status === 502,
    );
    const ctx = makeContext();
    await compile({ 'target-url': 'http://127.0.0.1:1/x', verb: 'GET', output: 'r' })(ctx);
    assert.equal(ctx.get('r.status.code'), 502);
  });

  it('a backend slower than timeout is ConnectionError 504', async () => {
    const started = Date.now();
    await assert.rejects(
      async () => compile({ 'target-url': `${base}/slow`, verb: 'GET', timeout: 1 })(makeContext()),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'ConnectionError' && error.status === 504,
    );
    assert.ok(Date.now() - started < 2500);
  });

  it('a backend that stalls in the middle of its body for longer than timeout is ConnectionError 504', async () => {
    const started = Date.now();
    await assert.rejects(
      async () => compile({ 'target-url': `${base}/stall`, verb: 'GET', timeout: 1 })(makeContext()),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'ConnectionError' && error.status === 504,
    );
    assert.ok(Date.now() - started < 2500);
  });

  it('refuses a backend body larger than the backend body limit with ConnectionError 502', async () => {
    const settings = { ...baseSettings, maxBackendBodyBytes: 1024 };
    await assert.rejects(
      async () => compile({ 'target-url': `${base}/large`, verb: 'GET', output: 'r' }, settings)(makeContext()),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'ConnectionError' &&
        error.status === 502 &&
        /larger than 1024 bytes/.test(error.message),
    );
    const ctx = makeContext();
    await compile({ 'target-url': `${base}/large`, verb: 'GET', output: 'r' })(ctx);
    assert.equal((ctx.get('r.body') as Buffer).length, 64 * 1024);
  });

  it("ends the backend call when the gateway's signal aborts (a stop past its grace) with ConnectionError 499", async () => {
    const stop = new AbortController();
    const started = Date.now();
    const call = compile({ 'target-url': `${base}/hold`, verb: 'GET', timeout: 30 })(
      makeContext({ signal: stop.signal }),
    );
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    await assert.rejects(
      async () => call,
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'ConnectionError' && error.status === 499,
    );
    assert.ok(Date.now() - started < 2500);
    while (closedEarly.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(closedEarly, [true], 'the backend saw its connection closed before it answered');
  });

  it('calls no backend once the signal has aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    const before = seen.length;
    await assert.rejects(
      async () => compile({ 'target-url': `${base}/ok`, verb: 'GET' })(makeContext({ signal: stop.signal })),
      (error: unknown) => error instanceof AssemblyError && error.status === 499,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(seen.length, before);
  });

  it("leaves no listener on the gateway's stop signal, whatever way a call ends", async () => {
    const stop = new AbortController();
    const ok = compile({ 'target-url': `${base}/ok`, verb: 'GET' });
    const large = compile(
      { 'target-url': `${base}/large`, verb: 'GET' },
      { ...baseSettings, maxBackendBodyBytes: 1024 },
    );
    const refused = compile({ 'target-url': 'http://127.0.0.1:1/x', verb: 'GET' });
    const badHeader = compile({ 'target-url': `${base}/ok`, verb: 'GET' });
    for (let i = 0; i < 20; i++) {
      await ok(makeContext({ signal: stop.signal }));
      await Promise.resolve(large(makeContext({ signal: stop.signal }))).catch(() => undefined);
      await Promise.resolve(refused(makeContext({ signal: stop.signal }))).catch(() => undefined);
      const ctx = makeContext({ signal: stop.signal });
      ctx.set('message.headers.x-bad', 'a\r\nx-injected: 1');
      await Promise.resolve(badHeader(ctx)).catch(() => undefined);
    }
    // One listener serves every call on the signal; none is added per call.
    assert.equal(getEventListeners(stop.signal, 'abort').length, 1);
    assert.ok(!seen.some((call) => call.headers['x-injected'] !== undefined), 'no header was injected');
  });

  it('issue-18: calls in flight add no listener each to the stop signal, and its abort ends them all', async () => {
    // A listener added and removed per call on the long-lived signal stayed linked to its
    // neighbours in Node's EventTarget: every call's objects lived through scavenges.
    const stop = new AbortController();
    const slow = compile({ 'target-url': `${base}/slow`, verb: 'GET' });
    const calls = Array.from({ length: 20 }, () => {
      const ctx = makeContext({ signal: stop.signal });
      return Promise.resolve(slow(ctx)).then(
        () => ctx.message.status.code,
        (error: unknown) => error,
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(getEventListeners(stop.signal, 'abort').length, 1, 'one listener for 20 calls in flight');
    const started = Date.now();
    stop.abort();
    const outcomes = await Promise.all(calls);
    assert.ok(Date.now() - started < 1000, 'every call ended at the abort, not at the backend answer (3 s)');
    for (const outcome of outcomes)
      assert.ok(outcome instanceof AssemblyError && outcome.status === 499, `ended with ${String(outcome)}`);
  });

  it('follows a redirect when follow-redirects is on, and passes the 3xx on when it is off', async () => {
    const following = makeContext();
    await compile({ 'target-url': `${base}/redirect`, 'follow-redirects': true })(following);
    assert.equal(following.message.status.code, 200);
    assert.equal(seen.at(-1)?.url, '/moved?from=redirect');
    const passing = makeContext();
    await compile({ 'target-url': `${base}/redirect` })(passing);
    assert.equal(passing.message.status.code, 302);
    assert.equal(passing.message.headers.location, '/moved?from=redirect');
  });

  it('follows at most 5 redirects and passes the sixth answer on; a redirect loop is ConnectionError 502', async () => {
    const before = seen.length;
    const chained = makeContext();
    await compile({ 'target-url': `${base}/hop/0`, 'follow-redirects': true })(chained);
    assert.equal(chained.message.status.code, 302);
    assert.deepEqual(
      seen.slice(before).map((call) => call.url),
      ['/hop/0', '/hop/1', '/hop/2', '/hop/3', '/hop/4', '/hop/5'],
    );
    const loop = compile({ 'target-url': `${base}/loop`, 'follow-redirects': true });
    await assert.rejects(async () => loop(makeContext()), {
      name: 'AssemblyError',
      errorName: 'ConnectionError',
      status: 502,
      message: /redirect loop/i,
    });
  });

  it('refuses an invalid constant target-url and a timeout out of range at publish time', () => {
    assert.throws(
      () => compile({ 'target-url': 'not a url' }),
      (e: unknown) => e instanceof PolicyCompileError && e.path.endsWith('invoke.target-url'),
    );
    assert.throws(
      () => compile({ 'target-url': base, timeout: -1 }),
      (e: unknown) => e instanceof PolicyCompileError && e.path.endsWith('invoke.timeout'),
    );
  });
});

/** How one call of the consumer-facing test server ended. */
interface Outcome {
  error: unknown;
  /** 'close' listeners the step left on the consumer's response. */
  listenersLeft: number;
}

describe('invoke, when the consumer goes away', () => {
  // The backend answers after 2 s; `closed` holds, per request, when its connection closed unanswered.
  let backend: Server;
  let backendBase: string;
  const arrived: number[] = [];
  const closedUnanswered: number[] = [];
  // The server the consumer talks to: it runs one invoke over a context on its real response.
  let front: Server;
  let frontPort: number;
  const stop = new AbortController();
  const outcomes: Outcome[] = [];
  let step = compile({ 'target-url': 'http://127.0.0.1:1/unset' });

  before(async () => {
    backend = createServer((req, res) => {
      arrived.push(Date.now());
      res.on('close', () => {
        if (!res.writableEnded) closedUnanswered.push(Date.now());
      });
      req.resume();
      const timer = setTimeout(() => res.end('{"late":true}'), 2000);
      res.on('close', () => clearTimeout(timer));
    });
    backendBase = `http://127.0.0.1:${await listen(backend)}`;
    front = createServer((_req, res) => {
      const listeners = res.listenerCount('close');
      const ctx = makeContext({ signal: stop.signal, response: res });
      Promise.resolve(step(ctx)).then(
        () => {
          outcomes.push({ error: undefined, listenersLeft: res.listenerCount('close') - listeners });
          res.end(ctx.message.body instanceof RawBody ? ctx.message.body.bytes : '');
        },
        (error: unknown) => {
          outcomes.push({ error, listenersLeft: res.listenerCount('close') - listeners });
          if (!res.destroyed) res.end();
        },
      );
    });
    frontPort = await listen(front);
  });
  after(async () => {
    backend.closeAllConnections();
    front.closeAllConnections();
    await Promise.all([
      new Promise((resolve) => backend.close(resolve)),
      new Promise((resolve) => front.close(resolve)),
    ]);
  });

  /** Sends a GET on a raw connection and destroys the connection once the backend has the call. */
  async function leaveDuringTheCall(): Promise<number> {
    const before = arrived.length;
    const socket = connect(frontPort, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET /item HTTP/1.1\r\nHost: gateway\r\n\r\n');
    while (arrived.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    return Date.now();
  }

  async function nextOutcome(count: number): Promise<Outcome> {
    while (outcomes.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
    return outcomes[count - 1];
  }

  it('ends the backend call when the consumer closes its connection, with ConsumerClosedError 499', async () => {
    step = compile({ 'target-url': `${backendBase}/slow`, verb: 'GET', timeout: 30 });
    const closedBefore = closedUnanswered.length;
    const count = outcomes.length + 1;
    const left = await leaveDuringTheCall();
    const outcome = await nextOutcome(count);
    assert.ok(
      outcome.error instanceof ConsumerClosedError && outcome.error.status === 499,
      `ended with ${String(outcome.error)}`,
    );
    while (closedUnanswered.length === closedBefore) await new Promise((resolve) => setTimeout(resolve, 10));
    const closedAfterMs = closedUnanswered.at(-1)! - left;
    assert.ok(closedAfterMs < 1000, `the backend's connection closed ${closedAfterMs} ms after the consumer left`);
    assert.equal(outcome.listenersLeft, 0, "no listener left on the consumer's response");
    assert.ok(
      getEventListeners(stop.signal, 'abort').length <= 1,
      "no listener left per call on the gateway's stop signal",
    );
  });

  it('calls no backend for a consumer already gone', async () => {
    const calls = arrived.length;
    const left = await leftResponse();
    try {
      await assert.rejects(
        async () =>
          compile({ 'target-url': `${backendBase}/never`, verb: 'GET' })(makeContext({ response: left.response })),
        (error: unknown) => error instanceof ConsumerClosedError && error.status === 499,
      );
    } finally {
      await left.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(arrived.length, calls);
  });

  it('leaves no listener on the consumer response or the stop signal, and aborts nothing, when the call completes', async () => {
    step = compile({ 'target-url': `${backendBase}/slow`, verb: 'GET', timeout: 30 });
    const closedBefore = closedUnanswered.length;
    const count = outcomes.length;
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        fetch(`http://127.0.0.1:${frontPort}/item`).then(async (response) => await response.text()),
      ),
    );
    assert.deepEqual(answers, ['{"late":true}', '{"late":true}', '{"late":true}']);
    const completed = outcomes.slice(count);
    assert.deepEqual(
      completed.map((outcome) => outcome.error),
      [undefined, undefined, undefined],
    );
    assert.deepEqual(
      completed.map((outcome) => outcome.listenersLeft),
      [0, 0, 0],
    );
    assert.equal(closedUnanswered.length, closedBefore, 'no backend call was ended early');
    assert.ok(getEventListeners(stop.signal, 'abort').length <= 1, 'no listener per call');
  });
});

describe('invoke over TLS profiles', () => {
  let dir: string;
  let server: Server;
  let url: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-tls-'));
    writeLoopbackCertificate(dir);
    server = createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"secure":true}');
      },
    );
    url = `https://127.0.0.1:${await listen(server)}/`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("trusts a backend whose certificate the profile's CA vouches for, named as API Connect writes it", async () => {
    const settings: PolicySettings = {
      ...baseSettings,
      tlsProfiles: {
        'backend-ca': { ca: readFileSync(join(dir, 'cert.pem'), 'utf8'), rejectUnauthorized: true },
      },
    };
    const ctx = makeContext();
    await compile({ 'target-url': url, verb: 'GET', 'tls-profile': 'backend-ca:1.0.0' }, settings)(ctx);
    assert.deepEqual(ctx.get('message.body'), { secure: true });
  });

  it('refuses an unverified certificate without a profile', async () => {
    await assert.rejects(
      async () => compile({ 'target-url': url, verb: 'GET' })(makeContext()),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'ConnectionError',
    );
  });

  it('an unknown profile fails the publish', () => {
    assert.throws(
      () => compile({ 'target-url': url, 'tls-profile': 'nope' }),
      (e: unknown) => e instanceof PolicyCompileError && e.rule === 'unknown-tls-profile',
    );
  });
});

describe('invoke target URLs (issue-12, finding 6)', () => {
  let server: Server;
  let base: string;
  const paths: string[] = [];
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      paths.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    });
    base = `http://127.0.0.1:${await listen(server)}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function flow(execute: unknown[]) {
    const catalog = { name: 'sandbox', orgName: 'org' };
    const input = {
      name: 'api',
      version: '1.0.0',
      document: {},
      properties: {},
      catalog,
      settings: baseSettings,
    };
    return compileAssembly({ execute }, input, policyRegistry);
  }

  type Context = ReturnType<typeof makeContext>;
  async function refusedBeforeTheBackend(step: ReturnType<typeof compile>, ctx: Context): Promise<AssemblyError> {
    const before = paths.length;
    let caught: unknown;
    try {
      await step(ctx);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof AssemblyError, `expected a refusal, the backend saw ${paths.slice(before).join(', ')}`);
    assert.deepEqual(paths.slice(before), [], 'the backend was not called');
    return caught;
  }

  it('refuses a path parameter holding ../ (decoded from ..%2f) with 400 BadRequestError', async () => {
    const step = compile({ 'target-url': `${base}/echo/{seg}/end`, verb: 'GET' });
    const error = await refusedBeforeTheBackend(step, makeContext({ parameters: { seg: '../../secret/admin' } }));
    assert.equal(error.errorName, 'BadRequestError');
    assert.equal(error.status, 400);
    assert.match(error.message, /\{seg\} cannot be used in the backend URL: it contains a dot segment/);
  });

  it('refuses %2E%2E in a path parameter: new URL() resolves it as ..', async () => {
    const step = compile({ 'target-url': `${base}/echo/{seg}/end`, verb: 'GET' });
    const ctx = makeContext({ parameters: { seg: '%2E%2E/%2E%2E/secret/admin' } });
    const error = await refusedBeforeTheBackend(step, ctx);
    assert.equal(error.status, 400);
  });

  it('refuses $(request.parameters.v) holding ../../secret/admin', async () => {
    const step = compile({ 'target-url': `${base}/echo/$(request.parameters.v)/end`, verb: 'GET' });
    const error = await refusedBeforeTheBackend(step, makeContext({ parameters: { v: '../../secret/admin' } }));
    assert.equal(error.status, 400);
  });

  it('refuses $(request.path) holding backslashes', async () => {
    const step = compile({ 'target-url': `${base}/echo$(request.path)`, verb: 'GET' });
    const error = await refusedBeforeTheBackend(step, makeContext({ path: '/..\\..\\secret\\admin' }));
    assert.equal(error.status, 400);
    assert.match(error.message, /backslash/);
  });

  it('keeps a query or fragment value a value: the path does not change', async () => {
    const ctx = makeContext({ parameters: { v: '../../secret&admin=1' } });
    await compile({ 'target-url': `${base}/q?to={v}#{v}`, verb: 'GET' })(ctx);
    assert.equal(paths.at(-1), '/q?to=..%2F..%2Fsecret%26admin%3D1');
  });

  it('routes to a target-url set by set-variable (dynamic routing)', async () => {
    const ctx = makeContext();
    await flow([
      {
        'set-variable': {
          version: '2.0.0',
          actions: [{ set: 'target-url', value: `${base}/dynamic/orders` }],
        },
      },
      { invoke: { version: '2.0.0', title: 'route', 'target-url': '$(target-url)', verb: 'GET' } },
    ])(ctx);
    assert.equal(paths.at(-1), '/dynamic/orders');
    assert.deepEqual(ctx.get('message.body'), { path: '/dynamic/orders' });
  });

  it("routes to a target-url set by a GatewayScript's context.set, with a path after it", async () => {
    const ctx = makeContext({ parameters: { id: '42' } });
    await flow([
      { gatewayscript: { version: '2.0.0', source: `context.set('target-url', '${base}/scripted');` } },
      {
        invoke: { version: '2.0.0', title: 'route', 'target-url': '$(target-url)/orders/{id}', verb: 'GET' },
      },
    ])(ctx);
    assert.equal(paths.at(-1), '/scripted/orders/42');
  });

  it('appends forwarded query parameters to a dynamic target that has a query', async () => {
    const ctx = makeContext({ search: '?page=2&secret=x', vars: { 'target-url': `${base}/list?sort=asc` } });
    const parameterControl = { type: 'allowlist', values: ['page'] };
    await compile({ 'target-url': '$(target-url)', verb: 'GET', 'parameter-control': parameterControl })(ctx);
    assert.equal(paths.at(-1), '/list?sort=asc&page=2');
  });

  it('refuses a dynamic target that is not http(s) with 502 ConnectionError', async () => {
    for (const target of ['ftp://127.0.0.1/x', 'file:///etc/passwd', '127.0.0.1:80/x', '']) {
      const step = compile({ 'target-url': '$(target-url)', verb: 'GET' });
      const error = await refusedBeforeTheBackend(step, makeContext({ vars: { 'target-url': target } }));
      assert.equal(error.errorName, 'ConnectionError', target);
      assert.equal(error.status, 502, target);
      assert.match(error.message, /^The backend URL is not valid: \$\(target-url\)/, target);
    }
  });
});
