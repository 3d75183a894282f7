/**
 * The contract between the gateway's flow engine and the policy modules (DESIGN §4).
 *
 * A policy type validates its YAML block with a JSON schema at import, compiles it once per
 * publish into a named `step(ctx)` function, and the step runs per request. Policies reach the
 * request only through the {@link FlowContext}; they never import the store or the management
 * plane.
 */
import type { Logger } from 'pino';
import type { CounterStore, LimitRule } from '../ratelimit/types.ts';
import type { VerdictCache } from '../identity/verdict-cache.ts';
import type { CatalogRegistries } from '../identity/verifiers.ts';
import type { InlineTier } from './gatewayscript/inline.ts';
import type { ScriptPool } from './gatewayscript/pool.ts';

import type { JSONSchema } from '../definitions/json-schema.ts';

export type { JSONSchema };

/** What a policy may know about the API it is compiled for. */
export interface CompiledApiInfo {
  /** `x-ibm-name`, e.g. `logistics`. */
  name: string;
  version: string;
  /** The whole API document (OpenAPI + x-ibm-configuration), for `$ref` resolution. */
  document: Record<string, unknown>;
  /** API properties resolved for the catalog being compiled (catalog overrides applied). */
  properties: Record<string, string>;
  catalog: { name: string; orgName: string };
  /** The user registries the catalog enables, compiled (`user-security` authenticates against them). */
  userRegistries?: CatalogRegistries;
  /** Settings a policy may need (timeouts, TLS profiles, limits), from the gateway config. */
  settings: PolicySettings;
  /** The API's operations (operation-switch cases name them). */
  operations: readonly OperationKey[];
  /** The policies the one being compiled is nested in, outermost first. */
  enclosing: readonly string[];
  /** Compiles a nested `execute` list (used by operation-switch, switch, if). */
  compileFlow(steps: unknown[], path: string): Step;
}

/** A TLS profile's PEM contents and verification, as undici's connect options take them. */
export interface TlsProfile {
  rejectUnauthorized?: boolean;
  ca?: string;
  cert?: string;
  key?: string;
}

export interface PolicySettings {
  /** Max bytes read from a backend response body. */
  maxBackendBodyBytes: number;
  /** Max bytes of the consumer's request body (PORTICO_MAX_REQUEST_BYTES); 4 MiB when absent. */
  maxRequestBytes?: number;
  /** Named TLS profiles every provider org may use (`tls-profile` in invoke) → undici connect options. */
  tlsProfiles: Record<string, TlsProfile>;
  /**
   * The profiles PORTICO_TLS_PROFILES limits to some provider orgs (`orgs`), by name. Kept apart
   * so that a lookup by name alone never finds another tenant's client certificate: read them
   * through `tlsProfilesOf(settings, org)` (policies/invoke/dispatchers.ts).
   */
  orgTlsProfiles?: Record<string, TlsProfile & { orgs: readonly string[] }>;
  /**
   * Script sandbox limits, the worker pool that runs scripts (the process's shared one when
   * absent), and the gateway thread's inline tier tried first (none when absent).
   */
  script: { timeoutMs: number; memoryBytes: number; pool?: ScriptPool; inline?: InlineTier };
  /** Counters for the assembly `ratelimit` policy (the gateway's plan counters). */
  counters?: CounterStore;
  /** Limits defined for the whole gateway or catalog, by name (`source: gateway-named|catalog-named`). */
  namedLimits?: Record<string, readonly LimitRule[]>;
  /** Positive user-registry answers, shared by every snapshot of the gateway (bounded; see identity/verdict-cache.ts). */
  userRegistryCache?: VerdictCache;
  /** RFC 7662 introspection of third-party OAuth tokens: deadline and cache bounds. */
  introspection?: { timeoutMs: number; cacheMs: number; cacheEntries: number };
  /** JWKS URLs of jwt-validate: refresh interval, unknown-kid refetch spacing, key lifetime without refresh. */
  jwks?: JwksSettings;
}

/** How jwt-validate keeps the key sets of JWKS URLs (docs/configuration.md). */
export interface JwksSettings {
  /** A key set older than this is fetched again (in the background; the old keys keep working). */
  refreshMs: number;
  /** At most one fetch per key set in this time for a `kid` the set does not have. */
  unknownKidIntervalMs: number;
  /** Keys not refreshed for this long are dropped (JWKS URL down): then 503. */
  maxStaleMs: number;
  /** Deadline of one fetch. */
  timeoutMs: number;
}

/** What the assembly `ratelimit` policy may count against for the caller's subscription. */
export interface CallerLimits {
  /** Unique per subscription; counter keys start with it. */
  key: string;
  /** The plan's own limits (`source: plan-default`). */
  plan: readonly LimitRule[];
  /** The plan's `assembly-rate-limits` / `assembly-burst-limits` by name (`source: plan-named`). */
  named: Record<string, readonly LimitRule[]>;
}

/** What a policy's import-time check may know: the API document, its operations, where the block sits. */
export interface CheckScope {
  /** The whole API document, for `$ref` resolution. */
  document: Record<string, unknown>;
  /** The API's operations, as operation-switch cases name them. */
  operations: readonly OperationKey[];
  /** The policies this block is nested in, outermost first (operation-switch may not be nested in a branch). */
  enclosing: readonly string[];
  /**
   * The API property values the block may be compiled with. At import, one set per catalog the
   * document names and the document's own values for any other catalog (which catalogs the API
   * will be published to is not known yet); when the gateway compiles, the one set of its catalog.
   * A reading that depends on them is refused only when it fails with every set
   * (policy.ts, `problemsInEveryCatalog`).
   */
  propertySets: readonly Readonly<Record<string, string>>[];
  /**
   * Checks a nested `execute` list with the same rules. At import it walks the list; when the
   * gateway compiles, it does nothing, since `compileFlow` reads (and so checks) each nested entry.
   */
  checkFlow(entries: unknown, path: string): PolicyProblem[];
}

/** An operation of the API: its operationId (when it has one), lower-case verb and path template. */
export interface OperationKey {
  id: string | undefined;
  verb: string;
  path: string;
}

/** A problem of a policy block, with the assembly JSON path and the broken rule (as definition problems). */
export interface PolicyProblem {
  path: string;
  rule: string;
  reason: string;
}

/**
 * One policy, as its module declares it: `C` is its block once validated and defaulted by
 * `schema`. See policy.ts, which turns a spec into the registry's {@link PolicyType}.
 */
export interface PolicySpec<C> {
  /** As in x-ibm-configuration, e.g. `invoke`. */
  name: string;
  /** Versions accepted; an absent `version:` means the first (API Connect v5 wrote none). */
  versions: readonly string[];
  /** One line for the docs. */
  description: string;
  /** Validates the YAML block; every property has a type, a description and, where it has one, a default. */
  schema: JSONSchema;
  /**
   * What the schema cannot express, run at import and again by the gateway before it compiles:
   * cheap (no I/O, no engine); nested lists through `scope.checkFlow`.
   */
  check?(config: C, scope: CheckScope, path: string): PolicyProblem[];
  /** Runs once per publish on a checked config; throws {@link PolicyCompileError} on what needs the gateway's resources. */
  compile(config: C, api: CompiledApiInfo, path: string): Step;
}

/** A policy in the registry: reads a raw YAML block the same way at import and at compile. */
export interface PolicyType {
  readonly name: string;
  readonly versions: readonly string[];
  readonly description: string;
  readonly schema: JSONSchema;
  /** Every problem of the block: schema, version and the policy's own check. */
  check(block: unknown, scope: CheckScope, path: string): PolicyProblem[];
  /** The same reading as `check` (the first problem throws {@link PolicyCompileError}), then the compiler. */
  compile(block: unknown, api: CompiledApiInfo, path: string): Step;
}

/** A compiled policy. Named after the policy so stack traces say which one failed. */
export type Step = (ctx: FlowContext) => void | Promise<void>;

/** A header bag with case-insensitive names; values as sent (string, or string[] when repeated). */
export interface HeaderBag {
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  remove(name: string): void;
  has(name: string): boolean;
  /** Lower-cased names → values. */
  entries(): IterableIterator<[string, string]>;
  toObject(): Record<string, string>;
}

/**
 * A message as API Connect's context has it: `message`, or an invoke's `output` variable
 * (`xyz_response`). `body` holds a JS value once parsed, or raw bytes ({@link RawBody}) until
 * something reads it; `FlowContext.get('x.body')` parses raw bytes on first read.
 */
export interface MessageVar {
  headers: Record<string, string>;
  body: unknown;
  status: { code: number; reason: string };
}

/**
 * A body not yet parsed. Writing it back out costs nothing (pass-through); reading it through
 * `FlowContext.get` parses by content type (JSON → value, XML/text → string).
 */
export class RawBody {
  constructor(
    readonly bytes: Buffer,
    readonly contentType: string | undefined,
  ) {}
}

/**
 * The flow context (API Connect context variables). Variable names use dot notation:
 * `request.parameters.zip`, `message.headers.content-type`, `xyz_response.body`,
 * `api.properties.maps_url`, `client.app.id`, `plan.name`. Header names are case-insensitive.
 */
export interface FlowContext {
  get(name: string): unknown;
  set(name: string, value: unknown): void;
  clear(name: string): void;
  /** `$(name)` / `{param}` substitution for a template compiled at publish time. */
  readonly message: MessageVar;
  readonly request: RequestVar;
  /** The API's resolved properties (`$(shipping_svc_url)`). */
  readonly properties: Record<string, string>;
  readonly log: Logger;
  /** The operation matched by the router. */
  readonly operation: { id: string | undefined; path: string; verb: string };
  /** Aborted when the gateway stops and the shutdown grace has passed (a consumer that goes away does not abort it: see {@link consumerGone}). */
  readonly signal: AbortSignal;
  /**
   * True once the consumer closed its connection before the gateway answered: nothing the flow
   * does reaches it any more, so no backend is called for it ({@link ConsumerClosedError}).
   */
  readonly consumerGone: boolean;
  /**
   * Calls `listener` when the consumer's connection closes, until {@link unwatchConsumer} removes
   * it: a policy waiting on a backend listens for as long as it waits, and nothing listens
   * otherwise (no per-request cost when no policy waits).
   */
  watchConsumer(listener: () => void): void;
  unwatchConsumer(listener: () => void): void;
  /** Time spent waiting on backends, in ms (for analytics). */
  backendMs: number;
  /** The subscription's limits, when the caller was identified. */
  readonly limits?: CallerLimits;
}

export interface RequestVar {
  verb: string;
  /** Full URI as received, e.g. `http://127.0.0.1:8080/org/sandbox/logistics/shipping?zip=1`. */
  uri: string;
  /** The path below the catalog, e.g. `/logistics/shipping`. */
  path: string;
  /** Query string with its `?`, or ''. */
  search: string;
  headers: Record<string, string>;
  /** Parsed parameters by name (query, path, header per the OpenAPI document), typed. */
  parameters: Record<string, unknown>;
  body: unknown;
  'content-type': string;
  /** The user name a basic scheme or `user-security` policy authenticated. */
  'authenticated-credential'?: string;
}

/**
 * An error raised inside an assembly. `name` is API Connect's catchable error name
 * (`ConnectionError`, `OperationError`, `SOAPError`, `JavaScriptError`, `ValidateError`,
 * `AssemblyRateLimitError`, a `throw` policy's name, …), matched by `catch` blocks.
 */
export class AssemblyError extends Error {
  readonly errorName: string;
  readonly status: number;
  readonly reason: string;
  readonly policy: string;
  /** Extra headers for the error response (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(
    errorName: string,
    message: string,
    options: {
      status?: number;
      reason?: string;
      policy?: string;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AssemblyError';
    this.errorName = errorName;
    this.status = options.status ?? 500;
    this.reason = options.reason ?? '';
    this.policy = options.policy ?? '';
    this.headers = options.headers ?? {};
  }
}

/**
 * The consumer closed its connection before the gateway answered; recorded with status 499, nginx's
 * "client closed request". Raised in place of calling a backend for nobody, and not in the default
 * catch: the flow ends there (its `finally` still runs), nothing is written to the closed connection.
 */
export class ConsumerClosedError extends AssemblyError {
  static readonly errorName = 'ConsumerClosedError';

  constructor(options: { policy?: string; cause?: unknown } = {}) {
    super(ConsumerClosedError.errorName, 'the consumer closed its connection before the answer', {
      status: 499,
      reason: 'Client Closed Request',
      ...options,
    });
  }
}

/** A problem found while compiling a policy at publish time; `path` is the assembly JSON path. */
export class PolicyCompileError extends Error {
  constructor(
    readonly path: string,
    readonly rule: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'PolicyCompileError';
  }
}
