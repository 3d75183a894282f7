/**
 * Per-call cost of a gatewayscript policy: the worker pool (what the gateway runs) against the
 * same QuickJS engine called in-process on the main thread (the design before issue 12).
 * Run: `node --import tsx bench/gatewayscript-cost.ts` — prints µs per call, sequential calls,
 * and how many script API ops per call kept the worker waiting for the main thread.
 *
 * `BUSY_US=200` (default 0) keeps the main thread's event loop busy in turns of that many µs,
 * as a loaded gateway's is: every op a worker waits on then waits for a turn to end (issue 18).
 */
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../src/gateway/context.ts';
import { compileAssembly } from '../src/gateway/flow.ts';
import { ScriptPool } from '../src/policies/gatewayscript/pool.ts';
import { ScriptSandbox } from '../src/policies/gatewayscript/sandbox.ts';
import type { ScriptHost } from '../src/policies/gatewayscript/sandbox.ts';
import { policyRegistry } from '../src/policies/registry.ts';
import type { Step } from '../src/policies/types.ts';

const scripts = {
  minimal: `var x = 1;`,
  'five context ops': `var zip = context.get('request.parameters.zip');
    var verb = context.get('request.verb');
    context.set('message.headers.x-zip', String(zip));
    context.set('message.status.code', 200);
    context.message.body.write({ zip: zip, verb: verb });`,
};
const calls = Number(process.env.CALLS ?? 5000);
const warmup = 500;
const limits = { timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 };

function context(): GatewayContext {
  const request = {
    verb: 'GET',
    uri: 'http://h/o/c/api/x?zip=90210',
    path: '/x',
    search: '?zip=90210',
    headers: {},
    parameters: { zip: '90210' },
    body: undefined,
    'content-type': '',
  };
  return new GatewayContext({
    request,
    message: emptyMessage(),
    api: { name: 'bench', operation: { id: undefined, path: '/x' } },
    properties: {},
    log: pino({ level: 'silent' }),
    operation: { id: undefined, path: '/x', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

/** The in-process engine with the same JSON host operations the policy implements. */
function inProcess(source: string): (ctx: GatewayContext) => void {
  const sandbox = new ScriptSandbox(source, limits, 'bench.js');
  return (ctx) => {
    const host: ScriptHost = {
      call(op, a, b) {
        if (op === 'get') return JSON.stringify(ctx.get(a ?? ''));
        if (op === 'set') ctx.set(a ?? '', b === undefined ? undefined : JSON.parse(b));
        return undefined;
      },
    };
    const failure = sandbox.run(host);
    if (failure !== undefined) throw new Error(failure.message);
  };
}

function pooled(pool: ScriptPool, source: string): Step {
  const settings = {
    maxBackendBodyBytes: 1 << 20,
    tlsProfiles: {},
    invokeDenyHosts: [],
    script: { ...limits, pool },
  };
  const input = {
    name: 'bench',
    version: '1.0.0',
    document: {},
    properties: {},
    catalog: { name: 'c', orgName: 'o' },
    settings,
  };
  return compileAssembly(
    { execute: [{ gatewayscript: { version: '2.0.0', title: 'bench', source } }] },
    input,
    policyRegistry,
  );
}

/** A main event loop busy in turns of `turnUs` µs until stopped; an op answer waits for a turn. */
function busyLoop(turnUs: number): () => void {
  let stopped = turnUs <= 0;
  const spin = () => {
    const end = performance.now() + turnUs / 1000;
    while (performance.now() < end);
    if (!stopped) setImmediate(spin);
  };
  if (!stopped) setImmediate(spin);
  return () => {
    stopped = true;
  };
}

async function perCall(run: (ctx: GatewayContext) => void | Promise<void>): Promise<number> {
  for (let i = 0; i < warmup; i++) await run(context());
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await run(context());
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

const busyUs = Number(process.env.BUSY_US ?? 0);
const pool = new ScriptPool({ workers: 2, graceMs: 1000, engineBytes: 256 * 1024 * 1024 });
// opCounts() is new with issue 18; comparing against an older pool.ts, the column reads '?'.
const counts = () => (pool as { opCounts?: () => { answered: number; applied: number } }).opCounts?.();
console.log(`main loop busy in turns of ${busyUs} µs; ${calls} sequential calls after ${warmup}`);
for (const [name, source] of Object.entries(scripts)) {
  const stop = busyLoop(busyUs);
  const local = await perCall(inProcess(source));
  const before = counts();
  const worker = await perCall(pooled(pool, source));
  const after = counts();
  stop();
  const waits = before && after ? ((after.answered - before.answered) / (calls + warmup)).toFixed(1) : '?';
  console.log(
    `${name.padEnd(18)} in-process ${local.toFixed(1).padStart(7)} µs/call   worker pool ${worker.toFixed(1).padStart(7)} µs/call   waits/call ${waits}`,
  );
}
await pool.close();
