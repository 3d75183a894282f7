/**
 * Per-call cost of a gatewayscript policy: the worker pool alone, the inline tier in front of it
 * (what the gateway runs by default, inline.ts) and the same QuickJS engine called in-process on
 * the main thread with no isolation (the design before issue 12).
 * Run: `node --import tsx bench/gatewayscript-cost.ts` — prints µs per call, sequential calls,
 * and how many script API ops per call kept the worker waiting for the main thread.
 *
 * `BUSY_US=200` (default 0) keeps the main thread's event loop busy in turns of that many µs,
 * as a loaded gateway's is: every op a worker waits on then waits for a turn to end (issue 18).
 * `get.stores` is the demo's script (examples/accessories/logistics.yaml) on the geocoder's
 * answer, held as raw bytes as invoke leaves it. `CPU` is the whole process's user + system
 * CPU per call, main thread and script workers together (what the bench's CPU µs/req counts).
 */
import { loadavg } from 'node:os';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../src/gateway/context.ts';
import { RawBody } from '../src/policies/types.ts';
import { compileAssembly } from '../src/gateway/flow.ts';
import { EngineModule } from '../src/policies/gatewayscript/engine-module.ts';
import { InlineTier } from '../src/policies/gatewayscript/inline.ts';
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
  'get.stores': `var geocode = context.get('geocode_response.body');
    if (typeof geocode === 'string') { geocode = JSON.parse(geocode); }
    var results = geocode && geocode.results;
    if (!results || results.length === 0) {
      context.reject('NotFound', 'No location found for the zip code');
      context.message.statusCode = '404 Not Found';
    } else {
      var location = results[0].geometry.location;
      var mapsUrl = context.get('api.properties.maps_url');
      context.message.header.set('Content-Type', 'application/json');
      context.message.body.write({ maps_link: mapsUrl + '?q=' + location.lat + ',' + location.lng });
    }`,
};
// What samples/geocoder-service.ts answers for 90210.
const geocode = Buffer.from(
  JSON.stringify({
    status: 'OK',
    results: [
      {
        formatted_address: 'Beverly Hills, CA 90210, USA',
        address_components: [
          { long_name: '90210', short_name: '90210', types: ['postal_code'] },
          { long_name: 'Beverly Hills', short_name: 'Beverly Hills', types: ['locality', 'political'] },
          { long_name: 'California', short_name: 'CA', types: ['administrative_area_level_1', 'political'] },
          { long_name: 'United States', short_name: 'US', types: ['country', 'political'] },
        ],
        geometry: { location: { lat: 34.09, lng: -118.41 }, location_type: 'APPROXIMATE' },
        place_id: 'portico-zip-90210',
        types: ['postal_code'],
      },
    ],
  }),
);
const calls = Number(process.env.CALLS ?? 5000);
const warmup = 500;
const limits = { timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 };
// One logger for every call: making one per call cost more than the scripts measured here.
const silent = pino({ level: 'silent' });

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
  const properties = { maps_url: 'https://www.google.com/maps' };
  const ctx = new GatewayContext({
    request,
    message: emptyMessage(),
    api: { name: 'bench', operation: { id: undefined, path: '/x' }, properties },
    properties,
    log: silent,
    operation: { id: undefined, path: '/x', verb: 'GET' },
    signal: new AbortController().signal,
  });
  ctx.set('geocode_response', { body: new RawBody(geocode, 'application/json'), headers: {} });
  return ctx;
}

/** The in-process engine with the same JSON host operations the policy implements. */
function inProcess(source: string): (ctx: GatewayContext) => void {
  const sandbox = new ScriptSandbox(source, limits, 'bench.js', engineModule);
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

function pooled(pool: ScriptPool, source: string, inline?: InlineTier): Step {
  const settings = {
    maxBackendBodyBytes: 1 << 20,
    tlsProfiles: {},
    script: { ...limits, pool, inline },
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

/** Wall µs per call, and the process's CPU µs per call (main thread and script workers). */
async function perCall(run: (ctx: GatewayContext) => void | Promise<void>): Promise<{ wall: number; cpu: number }> {
  for (let i = 0; i < warmup; i++) await run(context());
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await run(context());
  const wall = Number(process.hrtime.bigint() - started) / 1000 / calls;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / calls };
}

const busyUs = Number(process.env.BUSY_US ?? 0);
const engineModule = await EngineModule.load(256 * 1024 * 1024);
const inline = new InlineTier({ sliceUs: Number(process.env.INLINE_US ?? 1000) });
await inline.ready();
const pool = new ScriptPool({ workers: 2, graceMs: 1000, engineBytes: 256 * 1024 * 1024 });
// opCounts() is new with issue 18; comparing against an older pool.ts, the column reads '?'.
type Counts = { answered: number; applied: number; readAhead?: number };
const counts = () => (pool as { opCounts?: () => Counts }).opCounts?.();
console.log(`main loop busy in turns of ${busyUs} µs; ${calls} sequential calls after ${warmup}; load ${loadavg()[0]}`);
for (const [name, source] of Object.entries(scripts)) {
  const stop = busyLoop(busyUs);
  const local = await perCall(inProcess(source));
  const before = counts();
  const worker = await perCall(pooled(pool, source));
  const after = counts();
  const tiered = await perCall(pooled(pool, source, inline));
  stop();
  const per = (key: keyof Counts) =>
    before?.[key] !== undefined && after?.[key] !== undefined
      ? ((after[key]! - before[key]!) / (calls + warmup)).toFixed(1)
      : '?';
  console.log(
    `${name.padEnd(16)} in-process ${local.wall.toFixed(1).padStart(6)} µs/call (CPU ${local.cpu.toFixed(1).padStart(6)})` +
      `   worker pool ${worker.wall.toFixed(1).padStart(6)} µs/call (CPU ${worker.cpu.toFixed(1).padStart(6)})` +
      `   waits/call ${per('answered')}   read ahead/call ${per('readAhead')}` +
      `   inline tier ${tiered.wall.toFixed(1).padStart(6)} µs/call (CPU ${tiered.cpu.toFixed(1).padStart(6)})`,
  );
}
console.log('inline tier counters', JSON.stringify(inline.counters()));
await pool.close();
