/**
 * What one jwt-validate call costs in CPU, the policy alone (issue 13): the step compiled as the
 * gateway compiles it, with the bench's `portico-jwt` policy (RS256, a JWKS URL served here,
 * iss and aud patterns), called on a real GatewayContext.
 *
 *   node --import tsx bench/jwt-validate-cost.ts [--calls 3000] [--rounds 3]
 *
 * - "first sight": every call a token never seen before (each has its own jti), so each is
 *   verified by jose — what every call cost before the cache of accepted tokens;
 * - "repeat": the same token on every call, as a client sends it for its lifetime — a cache hit.
 * CPU µs per call = this process's user+system time / calls, each including the making of the
 * request's GatewayContext (the last column: that alone); rounds alternate the three, and the
 * table gives each round, so the spread on a shared machine shows.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pino from 'pino';
import { emptyMessage, GatewayContext } from '../src/gateway/context.ts';
import { compileAssembly } from '../src/gateway/flow.ts';
import { policyRegistry } from '../src/policies/registry.ts';
import type { Step } from '../src/policies/types.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench-1', use: 'sig' }] });
const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;

function sign(jti: string): Promise<string> {
  return new SignJWT({ sub: 'bench', scope: 'read' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench-1' })
    .setIssuer('https://bench.example')
    .setAudience('bench')
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('1d')
    .sign(privateKey);
}

const step: Step = compileAssembly(
  {
    execute: [
      {
        'jwt-validate': {
          version: '2.0.0',
          'jwks-url': jwksUrl,
          'iss-claim': '^https://bench\\.example$',
          'aud-claim': '^bench$',
        },
      },
    ],
  },
  {
    name: 'bench',
    version: '1.0.0',
    document: {},
    properties: {},
    catalog: { name: 'sandbox', orgName: 'bench' },
    settings: {
      maxBackendBodyBytes: 1 << 20,
      tlsProfiles: {},
      script: { timeoutMs: 200, memoryBytes: 16 * 1024 * 1024 },
    },
  },
  policyRegistry,
);
const log = pino({ level: 'silent' });

function context(token: string): GatewayContext {
  return new GatewayContext({
    request: {
      verb: 'GET',
      uri: 'http://127.0.0.1:8080/bench/sandbox/item',
      path: '/item',
      search: '',
      headers: { authorization: `Bearer ${token}` },
      parameters: {},
      body: undefined,
      'content-type': '',
    },
    message: emptyMessage(),
    api: { name: 'bench', operation: { id: 'item', path: '/item' } },
    properties: {},
    log,
    operation: { id: 'item', path: '/item', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

async function cpuPerCall(tokens: readonly string[], validate = true): Promise<number> {
  const start = process.cpuUsage();
  for (const token of tokens) {
    const ctx = context(token);
    if (!validate) continue;
    await step(ctx);
    if ((ctx.get('decoded.claims') as { sub?: string } | undefined)?.sub !== 'bench') throw new Error('not accepted');
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / tokens.length;
}

const repeated = await sign('repeat');
await cpuPerCall([repeated, ...(await Promise.all(Array.from({ length: 200 }, (_, i) => sign(`warm-${i}`))))]);
const rows: string[] = [];
for (let round = 1; round <= rounds; round++) {
  const fresh = await Promise.all(Array.from({ length: calls }, (_, i) => sign(`r${round}-${i}`)));
  const first = await cpuPerCall(fresh);
  const repeat = await cpuPerCall(Array.from({ length: calls }, () => repeated));
  const none = await cpuPerCall(
    Array.from({ length: calls }, () => repeated),
    false,
  );
  rows.push(`| ${round} | ${first.toFixed(1)} | ${repeat.toFixed(1)} | ${none.toFixed(1)} |`);
}
server.close();
process.stdout.write(
  `jwt-validate CPU µs per call, ${calls} calls per cell (node ${process.version})\n\n| round | first sight (jose verify) | repeat (cache hit) | context only, no policy |\n|---|---|---|---|\n${rows.join('\n')}\n`,
);
