/**
 * `gatewayscript` (IBM "gatewayscript"): runs the policy's JavaScript `source` in a sandbox
 * (sandbox.ts) with the API Connect script API: the `context` object of DataPower API Gateway,
 * the v5 `apim` module (global, and through `require('local:///isp/policy/apim.custom.js')`)
 * and `console`. Values cross the boundary as JSON copies. A thrown exception, a time-out,
 * memory exhaustion or writes past the run's budget (write-budget.ts) raise `JavaScriptError`
 * (500); `context.reject(name, message)` and `apim.error(...)` raise the named error for the
 * assembly's catch.
 *
 * The source is checked for syntax here, at publish (syntax.ts); runs happen on the gateway
 * thread when they are short (inline.ts, when the settings have an inline tier), otherwise in
 * the script worker pool (pool.ts), the settings' own or the process's shared one.
 */
import { policy, str } from '../schema-kit.ts';
import { errorCatalogue, formatMessage } from '../../errors.ts';
import { definePolicy, problemsOf } from '../policy.ts';
import { AssemblyError } from '../types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, PolicyType, Step } from '../types.ts';
import { readBlock, requireString, titleOf } from '../policy-config.ts';
import { engineCeilingBytes } from './engine-limits.ts';
import { ScriptBusyError, sharedScriptPool } from './pool.ts';
import type { JobHost, PooledScript, ScriptPool } from './pool.ts';
import type { InlineHost, InlineTier } from './inline.ts';
import { bytesMark } from './prelude.ts';
import { ReadAhead, readAheadNames } from './read-ahead.ts';
import type { ScriptFailure } from './sandbox.ts';
import { checkSyntax } from './syntax.ts';
import { WriteJournal } from './write-journal.ts';

export interface GatewayScriptConfig {
  version?: string;
  title?: string;
  source: string;
}

// A republished API drops its compiled steps; the workers and the inline tier free each script's engine with its step.
const engines = new FinalizationRegistry<{ pool: ScriptPool; inline?: InlineTier; id: number }>(
  ({ pool, inline, id }) => {
    pool.drop(id);
    inline?.drop(id);
  },
);
let nextScriptId = 0;

/** The gatewayscript policy. */
export const gatewayscriptPolicy: PolicyType = definePolicy<GatewayScriptConfig>({
  name: 'gatewayscript',
  versions: ['1.0.0', '2.0.0'],
  description: 'Runs a JavaScript (GatewayScript) source in a sandbox with the context API.',
  schema: policy(['1.0.0', '2.0.0'], { source: str('The script.') }, ['source']),
  // The syntax check is the compiler's own (QuickJS, the engine that runs the script), at import too.
  check(config: GatewayScriptConfig, _scope: CheckScope, path: string) {
    const empty = problemsOf(() => requireString(readBlock(config, gatewayscriptPolicy, path), 'source', path));
    if (empty.length > 0) return empty;
    try {
      checkSyntax(config.source, `${config.title ?? 'gatewayscript'}.js`);
      return [];
    } catch (error) {
      return [{ path: `${path}.source`, rule: 'script-syntax', reason: (error as Error).message }];
    }
  },
  compile(config: GatewayScriptConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, gatewayscriptPolicy, path);
    const source = requireString(block, 'source', path);
    const title = titleOf(block, 'gatewayscript');
    const { pool = sharedScriptPool(engineCeilingBytes()), inline, ...limits } = api.settings.script;
    const filename = `${api.name}/${title}.js`;
    const apiKey = `${api.catalog.orgName}/${api.catalog.name}/${api.name}:${api.version}`;
    const reads = readAheadNames(source);
    const script: PooledScript = { id: ++nextScriptId, api: apiKey, source, filename, limits, reads };
    async function gatewayscriptStep(ctx: FlowContext) {
      const outcome: Outcome = { error: undefined };
      // An inline run that must go to the pool applied nothing: the pool's run starts from scratch.
      const inlined = inline?.run(script, scriptHost(ctx, title, outcome));
      const failure = inlined ? inlined.failure : await runInPool(pool, script, ctx, title, outcome);
      if (failure !== undefined) {
        throw new AssemblyError('JavaScriptError', `GatewayScript policy ${title}: ${failure.message}`, {
          status: 500,
          reason: 'Internal Server Error',
          policy: title,
        });
      }
      if (outcome.error !== undefined) throw withScriptStatus(outcome.error, ctx);
    }
    engines.register(gatewayscriptStep, { pool, inline, id: script.id });
    // The first run may never reach the pool; the first that does must not wait for (or compete
    // with) workers starting then.
    if (inline !== undefined) pool.start();
    return gatewayscriptStep;
  },
});

/**
 * A run in the pool. A run that found no free worker in time answers 503 (GW_SCRIPT_BUSY),
 * catchable as JavaScriptError; one past its write budget leaves none of its writes applied.
 */
async function runInPool(
  pool: ScriptPool,
  script: PooledScript,
  ctx: FlowContext,
  title: string,
  outcome: Outcome,
): Promise<ScriptFailure | undefined> {
  const journal = new WriteJournal(ctx);
  try {
    const failure = await pool.run(script, scriptHost(ctx, title, outcome, journal));
    if (failure?.kind === 'writes') journal.undo();
    return failure;
  } catch (error) {
    if (!(error instanceof ScriptBusyError)) throw error;
    const message = formatMessage(errorCatalogue.GW_SCRIPT_BUSY.message, {
      policy: title,
      ms: error.waitedMs,
    });
    throw new AssemblyError('JavaScriptError', message, {
      status: 503,
      reason: 'Service Unavailable',
      policy: title,
    });
  }
}

/**
 * DataPower answers a `context.reject` with the status the script set on the message
 * (`context.message.statusCode = '404 Not Found'`), when it set an error status.
 */
function withScriptStatus(error: AssemblyError, ctx: FlowContext): AssemblyError {
  const code = Number(ctx.message.status?.code);
  if (error.status !== 500 || !(code >= 400 && code <= 599)) return error;
  return new AssemblyError(error.errorName, error.message, {
    status: code,
    reason: ctx.message.status.reason,
    policy: error.policy,
    headers: error.headers,
  });
}

/** A rejection recorded during the run; the flow raises it once the script returns (DataPower semantics). */
interface Outcome {
  error: AssemblyError | undefined;
}

/**
 * Converts a host value to JSON text for the sandbox, RawBody parsed by ctx.get. A value that is
 * bytes (a binary body) crosses as marked base64 (prelude.ts `bytesMark`) and reaches the script
 * as a Uint8Array; bytes inside a larger value become text. A replacer function makes
 * JSON.stringify several times slower, so it is used only when the plain text shows a Buffer's own
 * JSON form (`"type":"Buffer"` can appear unescaped only as a key and value of an object, never
 * inside a string).
 */
function toJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Buffer.isBuffer(value)) return bytesMark + value.toString('base64');
  const plain = JSON.stringify(value);
  if (plain === undefined || !plain.includes('"type":"Buffer"')) return plain;
  return JSON.stringify(value, function replace(this: Record<string, unknown>, key: string, current: unknown) {
    const original = key === '' ? value : this[key];
    return Buffer.isBuffer(original) ? original.toString('utf8') : current;
  });
}

/** A script's value: its JSON text, or bytes it wrote as a Uint8Array (marked base64) as a Buffer. */
function fromJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  return text.startsWith(bytesMark) ? Buffer.from(text.slice(bytesMark.length), 'base64') : JSON.parse(text);
}

/** The script API over `ctx`; a pool run's `journal` keeps what each write changes (write-journal.ts). */
function scriptHost(ctx: FlowContext, title: string, outcome: Outcome, journal?: WriteJournal): JobHost & InlineHost {
  const readAhead = new ReadAhead(ctx);
  return {
    readAhead: (names) => readAhead.take(names, toJson),
    read: (name) => readAhead.read(name, toJson),
    call(op, a, b) {
      switch (op) {
        case 'get':
          return readAhead.wholeJson(a ?? '') ?? toJson(ctx.get(a ?? ''));
        case 'touch':
          readAhead.touched(a ?? '');
          return undefined;
        case 'set':
          journal?.before(op, a ?? '');
          ctx.set(a ?? '', fromJson(b));
          return undefined;
        case 'add':
          journal?.before(op, a ?? '');
          addValue(ctx, a ?? '', fromJson(b), journal);
          return undefined;
        case 'clear':
          journal?.before(op, a ?? '');
          ctx.clear(a ?? '');
          return undefined;
        case 'reject':
          outcome.error ??= new AssemblyError(a ?? 'JavaScriptError', b ?? '', {
            status: 500,
            policy: title,
          });
          return undefined;
        case 'error': {
          const [name, status, reason, message] = JSON.parse(a ?? '[]') as [string, number, string, string];
          outcome.error ??= new AssemblyError(name, message, { status, reason, policy: title });
          return undefined;
        }
        case 'log':
          logLine(ctx, a ?? 'info', b ?? '', title);
          return undefined;
        default:
          throw new Error(`unknown script host operation ${op}`);
      }
    },
  };
}

/** `apim.setvariable(name, value, 'add')`: a header gains a value, a list an item. */
function addValue(ctx: FlowContext, name: string, value: unknown, journal?: WriteJournal): void {
  const current = ctx.get(name);
  if (current === undefined || current === null || current === '') ctx.set(name, value);
  else if (Array.isArray(current)) {
    journal?.keep(current);
    current.push(value);
  } else if (/(^|\.)headers\.set-cookie$/i.test(name)) {
    // Set-Cookie is never folded (RFC 6265 §3): several are a list, written one line each.
    ctx.set(name, [current, value]);
  } else if (/(^|\.)headers\.[^.]+$/.test(name)) ctx.set(name, `${String(current)}, ${String(value)}`);
  else ctx.set(name, [current, value]);
}

function logLine(ctx: FlowContext, level: string, text: string, title: string): void {
  const fields = { policy: title };
  if (level === 'error') ctx.log.error(fields, text);
  else if (level === 'warn') ctx.log.warn(fields, text);
  else if (level === 'debug') ctx.log.debug(fields, text);
  else ctx.log.info(fields, text);
}
