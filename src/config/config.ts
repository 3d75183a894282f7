/**
 * Settings, read once from the environment (and CLI overrides), validated, defaulted and
 * frozen (fastify's "config validated once at start"). Every setting is listed in
 * docs/configuration.md.
 */
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import {
  boolean,
  databaseUrl,
  integer,
  jsonObject,
  mailFrom,
  number,
  portalCatalog,
  publicUrl,
  secret,
  smtpUrl,
  tlsProfiles,
  trustedProxies,
} from './readers.ts';
import type { Env } from './readers.ts';

export interface Settings {
  /** Folder for the SQLite file and other local state. */
  dataDir: string;
  /** `sqlite:<file>` (default `<dataDir>/portico.db`) or `postgres://…`. */
  databaseUrl: string;
  /** Redis for rate-limit counters; memory when absent. */
  redisUrl: string | undefined;
  /** When the Redis counter backend fails: admit (true) or reject (false). */
  rateLimitFailOpen: boolean;
  /** How long a call waits for Redis's answer before it is rejected (never admitted uncounted). */
  rateLimitTimeoutMs: number;
  /** Most hits one Redis round trip leases to a gateway node (1 = a round trip per call). */
  rateLimitLeaseMax: number;
  /** Longest wait between attempts to reach the store while it is down (snapshot poll, LISTEN). */
  storeRetryMaxMs: number;
  /** Analytics events held at most while the store is down; beyond it the oldest are dropped (counted). */
  analyticsMaxQueued: number;
  host: string;
  gatewayPort: number;
  /** The gateway's status listener: `/health`, `/ready`, `/metrics`, off the consumer port. */
  gatewayStatusPort: number;
  /** Also answer `/health`, `/ready` and `/metrics` on the consumer port (off by default). */
  gatewayStatusOnConsumerPort: boolean;
  /** Peers whose `Forwarded`/`X-Forwarded-*`/`X-Real-IP` the gateway keeps: CIDR blocks or addresses. */
  trustedProxies: string[];
  /** A gateway connection must deliver a whole request head within this long (also its first byte). */
  gatewayHeadersTimeoutMs: number;
  /** A gateway connection must deliver a whole request (head and body) within this long. */
  gatewayRequestTimeoutMs: number;
  /** An idle kept-alive gateway connection is closed after this long. */
  gatewayKeepAliveTimeoutMs: number;
  /** Open connections a gateway process accepts at once; more are closed on arrival (0 = no cap). */
  gatewayMaxConnections: number;
  /** On stop: how long `/ready` answers 503 while the gateway still serves, before its listener closes. */
  drainMs: number;
  portalPort: number;
  managementPort: number;
  logLevel: string;
  /** Largest request body the gateway accepts, in bytes. */
  maxRequestBytes: number;
  /** Memory the thread that reads large API imports may use, MB (api-parse-pool.ts). */
  importMemoryMb: number;
  /** Largest backend response body read by invoke, in bytes. */
  maxBackendBodyBytes: number;
  /** Analytics: events per batch write, and the longest an event waits before its batch is written. */
  analyticsBatchSize: number;
  /** Seconds a user registry's positive answer is remembered (0: never). */
  userRegistryCacheSeconds: number;
  /** Most positive user-registry answers remembered at once (the oldest goes first). */
  userRegistryCacheEntries: number;
  analyticsFlushMs: number;
  /** Analytics: payload capture limit per body, in bytes. */
  analyticsMaxPayloadBytes: number;
  /** Analytics: days of events kept (0 = keep all). */
  analyticsRetentionDays: number;
  scriptTimeoutMs: number;
  scriptMemoryBytes: number;
  /** Worker threads that run GatewayScript; one API may occupy all but one of them. */
  scriptWorkers: number;
  /** How long past its time limit a script's worker may stay silent before it is terminated. */
  scriptGraceMs: number;
  scriptQueueMs: number;
  /** WebAssembly memory ceiling of each script worker's engine. */
  scriptEngineBytes: number;
  /** What one GatewayScript run's writes may carry to the gateway's heap (write-budget.ts). */
  scriptWriteBytes: number;
  /** Wall time a GatewayScript run may take on the gateway thread before it goes to the pool, in µs; 0 = never inline. */
  scriptInlineUs: number;
  /** Portal/console session lifetime. */
  sessionTtlMs: number;
  /** Minutes without a request after which a portal/console session ends (not management API tokens). */
  sessionIdleMinutes: number;
  /** The longest lifetime a management API token may ask for at sign-in (`expiresInDays`). */
  apiTokenMaxDays: number;
  /** The most apps a consumer organization may have. */
  maxAppsPerConsumerOrg: number;
  /** The most credential pairs an app may have. */
  maxCredentialsPerApp: number;
  /** SMTP server for account email, `smtp://` or `smtps://` with optional `user:password@`; none: no mail. */
  smtpUrl: string | undefined;
  /** The From address of account email. */
  mailFrom: string;
  /** The portal's public base URL, used in emailed links (never the request's Host header). */
  portalPublicUrl: string | undefined;
  /** Gateway worker processes (issue 8); 1 in the embedded default. */
  workers: number;
  /** Public base URL of the gateway, as the portal shows it. */
  gatewayPublicUrl: string;
  /** Catalog- and gateway-wide limits for the assembly `ratelimit` policy, e.g. `{"burst":"50/1second"}`. */
  namedRateLimits: Record<string, string>;
  /** The catalog the portal serves, `org/catalog`; default the first provider org's `sandbox`. */
  portalCatalog: string | undefined;
  /** Trust X-Forwarded-* from a reverse proxy in front of the portal (client address, https). */
  trustProxy: boolean;
  /** The bearer token `/metrics` on the management port asks for; unset: that endpoint is off (404). */
  metricsToken: string | undefined;
  /** TLS profiles an invoke names by `tls-profile`: PEM file paths and verification, by name. */
  tlsProfiles: Record<string, TlsProfileSetting>;
  /** Header and JSON field names replaced by `[redacted]` in captured activity payloads. */
  analyticsRedact: string[];
  /** RFC 7662 introspection: deadline, and ceiling and size of the positive-answer cache. */
  introspectionTimeoutMs: number;
  introspectionCacheSeconds: number;
  introspectionCacheEntries: number;
  /** jwt-validate's JWKS URLs: refresh, unknown-kid refetch spacing, stale-key lifetime, fetch deadline. */
  jwksRefreshSeconds: number;
  jwksUnknownKidIntervalMs: number;
  jwksMaxStaleSeconds: number;
  jwksTimeoutMs: number;
}

export interface TlsProfileSetting {
  /** CA bundle (PEM file) that backend certificates must chain to. */
  ca?: string;
  /** Client certificate and key (PEM files) for mutual TLS. */
  cert?: string;
  key?: string;
  /** Verify the backend's certificate (default true). */
  rejectUnauthorized?: boolean;
  /**
   * The provider orgs whose APIs may name the profile; absent: every org, unless the profile
   * holds a client certificate or key, which no org may then use (it is another tenant's identity).
   */
  orgs?: string[];
}

/** Reads settings from `env`, with `overrides` (from CLI flags) taking precedence. */
export function loadSettings(env: Env = process.env, overrides: Partial<Settings> = {}): Readonly<Settings> {
  const dataDir = resolve(overrides.dataDir ?? env.PORTICO_DATA_DIR ?? 'data');
  const host = env.PORTICO_HOST ?? '127.0.0.1';
  const gatewayPort = integer(env, 'PORTICO_GATEWAY_PORT', 8080, 0, 65535);
  const settings: Settings = {
    dataDir,
    databaseUrl: databaseUrl(env, dataDir),
    redisUrl: env.PORTICO_REDIS_URL || undefined,
    rateLimitFailOpen: boolean(env, 'PORTICO_RATELIMIT_FAIL_OPEN', true),
    rateLimitTimeoutMs: integer(env, 'PORTICO_RATELIMIT_TIMEOUT_MS', 500, 10, 60_000),
    rateLimitLeaseMax: integer(env, 'PORTICO_RATELIMIT_LEASE_MAX', 20, 1, 10_000),
    storeRetryMaxMs: integer(env, 'PORTICO_STORE_RETRY_MAX_MS', 1000, 100, 60_000),
    analyticsMaxQueued: integer(env, 'PORTICO_ANALYTICS_MAX_QUEUED', 100_000, 1, 10_000_000),
    host,
    gatewayPort,
    // A free gateway port (tests, several nodes on one machine) gets a free status port too.
    gatewayStatusPort: integer(env, 'PORTICO_GATEWAY_STATUS_PORT', gatewayPort === 0 ? 0 : 8083, 0, 65535),
    gatewayStatusOnConsumerPort: boolean(env, 'PORTICO_GATEWAY_STATUS_ON_CONSUMER_PORT', false),
    trustedProxies: trustedProxies(env),
    gatewayHeadersTimeoutMs: integer(env, 'PORTICO_GATEWAY_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000),
    gatewayRequestTimeoutMs: integer(env, 'PORTICO_GATEWAY_REQUEST_TIMEOUT_MS', 120_000, 100, 3_600_000),
    gatewayKeepAliveTimeoutMs: integer(env, 'PORTICO_GATEWAY_KEEPALIVE_TIMEOUT_MS', 65_000, 100, 3_600_000),
    gatewayMaxConnections: integer(env, 'PORTICO_GATEWAY_MAX_CONNECTIONS', 10_000, 0),
    drainMs: Math.round(number(env, 'PORTICO_DRAIN_SECONDS', 5, 0, 600) * 1000),
    portalPort: integer(env, 'PORTICO_PORTAL_PORT', 8081, 0, 65535),
    managementPort: integer(env, 'PORTICO_MANAGEMENT_PORT', 8082, 0, 65535),
    logLevel: env.PORTICO_LOG_LEVEL ?? 'info',
    maxRequestBytes: integer(env, 'PORTICO_MAX_REQUEST_BYTES', 4 * 1024 * 1024, 1),
    importMemoryMb: integer(env, 'PORTICO_IMPORT_MEMORY_MB', 1024, 64, 65_536),
    maxBackendBodyBytes: integer(env, 'PORTICO_MAX_BACKEND_BYTES', 16 * 1024 * 1024, 1),
    analyticsBatchSize: integer(env, 'PORTICO_ANALYTICS_BATCH', 500, 1, 100_000),
    userRegistryCacheSeconds: integer(env, 'PORTICO_USER_REGISTRY_CACHE_SECONDS', 30, 0, 3600),
    userRegistryCacheEntries: integer(env, 'PORTICO_USER_REGISTRY_CACHE_ENTRIES', 10_000, 0, 1_000_000),
    analyticsFlushMs: integer(env, 'PORTICO_ANALYTICS_FLUSH_MS', 1000, 10, 600_000),
    analyticsMaxPayloadBytes: integer(env, 'PORTICO_ANALYTICS_MAX_PAYLOAD', 64 * 1024, 0),
    analyticsRetentionDays: integer(env, 'PORTICO_ANALYTICS_RETENTION_DAYS', 30, 0),
    scriptTimeoutMs: integer(env, 'PORTICO_SCRIPT_TIMEOUT_MS', 1000, 1, 60_000),
    scriptMemoryBytes: integer(env, 'PORTICO_SCRIPT_MEMORY_BYTES', 32 * 1024 * 1024, 1024 * 1024),
    scriptWorkers: integer(env, 'PORTICO_SCRIPT_WORKERS', 2, 1, 64),
    scriptGraceMs: integer(env, 'PORTICO_SCRIPT_GRACE_MS', 1000, 50, 60_000),
    scriptQueueMs: integer(env, 'PORTICO_SCRIPT_QUEUE_MS', 5000, 0, 60_000),
    scriptEngineBytes: integer(
      env,
      'PORTICO_SCRIPT_ENGINE_BYTES',
      256 * 1024 * 1024,
      32 * 1024 * 1024,
      4 * 1024 * 1024 * 1024,
    ),
    scriptWriteBytes: integer(env, 'PORTICO_SCRIPT_WRITE_BYTES', 16 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
    scriptInlineUs: integer(env, 'PORTICO_SCRIPT_INLINE_US', 0, 0, 100_000),
    sessionTtlMs: integer(env, 'PORTICO_SESSION_TTL_MS', 8 * 3600 * 1000, 60_000),
    sessionIdleMinutes: integer(env, 'PORTICO_SESSION_IDLE_MINUTES', 60, 1, 7 * 24 * 60),
    apiTokenMaxDays: integer(env, 'PORTICO_API_TOKEN_MAX_DAYS', 90, 1, 3650),
    maxAppsPerConsumerOrg: integer(env, 'PORTICO_MAX_APPS_PER_CONSUMER_ORG', 100, 1, 100_000),
    maxCredentialsPerApp: integer(env, 'PORTICO_MAX_CREDENTIALS_PER_APP', 10, 1, 1000),
    smtpUrl: smtpUrl(env),
    mailFrom: mailFrom(env),
    portalPublicUrl: publicUrl(env, 'PORTICO_PORTAL_URL'),
    workers: integer(env, 'PORTICO_WORKERS', 1, 1, Math.max(64, cpus().length)),
    gatewayPublicUrl: env.PORTICO_GATEWAY_URL ?? `http://${host}:${gatewayPort}`,
    namedRateLimits: jsonObject(env, 'PORTICO_NAMED_RATE_LIMITS'),
    portalCatalog: portalCatalog(env),
    trustProxy: boolean(env, 'PORTICO_TRUST_PROXY', false),
    metricsToken: secret(env, 'PORTICO_METRICS_TOKEN', 16),
    tlsProfiles: tlsProfiles(env),
    introspectionTimeoutMs: integer(env, 'PORTICO_INTROSPECTION_TIMEOUT_MS', 5000, 50, 60_000),
    introspectionCacheSeconds: integer(env, 'PORTICO_INTROSPECTION_CACHE_SECONDS', 60, 0, 86_400),
    introspectionCacheEntries: integer(env, 'PORTICO_INTROSPECTION_CACHE_ENTRIES', 10_000, 0, 10_000_000),
    jwksRefreshSeconds: integer(env, 'PORTICO_JWKS_REFRESH_SECONDS', 600, 1, 86_400),
    jwksUnknownKidIntervalMs: integer(env, 'PORTICO_JWKS_UNKNOWN_KID_INTERVAL_MS', 30_000, 0, 3_600_000),
    jwksMaxStaleSeconds: integer(env, 'PORTICO_JWKS_MAX_STALE_SECONDS', 86_400, 1, 30 * 86_400),
    jwksTimeoutMs: integer(env, 'PORTICO_JWKS_TIMEOUT_MS', 5000, 50, 60_000),
    analyticsRedact: (env.PORTICO_ANALYTICS_REDACT ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name.length > 0),
    ...overrides,
  };
  return Object.freeze(settings);
}
