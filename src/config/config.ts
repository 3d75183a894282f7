/**
 * Settings, read once from the environment (and CLI overrides), validated, defaulted and
 * frozen (fastify's "config validated once at start"). Every setting is listed in
 * docs/configuration.md.
 */
import { isIP } from 'node:net';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { PorticoError } from '../errors.ts';

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
  /** Portal/console session lifetime. */
  sessionTtlMs: number;
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
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `expected an integer from ${min} to ${max}, got "${raw}"`,
    });
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new PorticoError('CONFIG_INVALID', { setting: name, reason: `expected true or false, got "${raw}"` });
}

function number(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `expected a number from ${min} to ${max}, got "${raw}"`,
    });
  }
  return value;
}

/** `PORTICO_TRUSTED_PROXIES`: comma-separated addresses or CIDR blocks, checked here so a typo stops the start. */
function trustedProxies(env: Env): string[] {
  const entries = (env.PORTICO_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const badBits = bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > maxBits);
    if (family === 0 || badBits || extra !== undefined) {
      throw new PorticoError('CONFIG_INVALID', {
        setting: 'PORTICO_TRUSTED_PROXIES',
        reason: `"${entry}" is not an address or CIDR block`,
      });
    }
  }
  return entries;
}

function tlsProfiles(env: Env): Record<string, TlsProfileSetting> {
  const raw = env.PORTICO_TLS_PROFILES;
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_TLS_PROFILES',
      reason: `not JSON: ${(error as Error).message}`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_TLS_PROFILES',
      reason: 'expected {"name": {"ca": "file.pem", …}}',
    });
  }
  for (const [name, profile] of Object.entries(value)) {
    const fields = profile as Record<string, unknown>;
    const wrong = Object.entries(fields ?? {}).find(([key, v]) =>
      key === 'rejectUnauthorized'
        ? typeof v !== 'boolean'
        : !['ca', 'cert', 'key'].includes(key) || typeof v !== 'string',
    );
    if (typeof profile !== 'object' || profile === null || wrong) {
      throw new PorticoError('CONFIG_INVALID', {
        setting: 'PORTICO_TLS_PROFILES',
        reason: `profile ${name}: fields are ca, cert, key (file paths) and rejectUnauthorized (boolean)`,
      });
    }
  }
  return value as Record<string, TlsProfileSetting>;
}

function portalCatalog(env: Env): string | undefined {
  const raw = env.PORTICO_PORTAL_CATALOG;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[^/\s]+\/[^/\s]+$/.test(raw))
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_PORTAL_CATALOG',
      reason: `expected org/catalog, got "${raw}"`,
    });
  return raw;
}

function jsonObject(env: Env, name: string): Record<string, string> {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `not JSON: ${(error as Error).message}`,
    });
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    Object.values(value).some((v) => typeof v !== 'string')
  ) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: 'expected a JSON object of name → "count/interval" strings',
    });
  }
  return value as Record<string, string>;
}

/** `PORTICO_SMTP_URL`: checked here so a typo stops the start rather than the first sign-up's mail. */
function smtpUrl(env: Env): string | undefined {
  const raw = env.PORTICO_SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  const invalid = (reason: string) => new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_SMTP_URL', reason });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('expected smtp://[user:password@]host[:port] or smtps://…');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw invalid(`expected smtp:// or smtps://, got ${url.protocol}//`);
  }
  if (url.hostname === '') throw invalid('the URL names no host');
  if (url.password !== '' && url.username === '') throw invalid('a password needs a user name');
  return raw;
}

/** `PORTICO_MAIL_FROM`: an address, or `Name <address>`. */
function mailFrom(env: Env): string {
  const raw = env.PORTICO_MAIL_FROM;
  if (raw === undefined || raw === '') return 'Portico <portico@localhost>';
  if (!/^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(raw.trim())) {
    const reason = `expected an address or Name <address>, got "${raw}"`;
    throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_MAIL_FROM', reason });
  }
  return raw.trim();
}

function publicUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^https?:\/\/[^/\s]+\/?$/.test(raw)) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `expected http(s)://host[:port], got "${raw}"`,
    });
  }
  return raw.replace(/\/$/, '');
}

function databaseUrl(env: Env, dataDir: string): string {
  const raw = env.PORTICO_DATABASE_URL;
  if (raw === undefined || raw === '') return `sqlite:${resolve(dataDir, 'portico.db')}`;
  if (/^postgres(ql)?:\/\//.test(raw) || raw.startsWith('sqlite:')) return raw;
  throw new PorticoError('CONFIG_INVALID', {
    setting: 'PORTICO_DATABASE_URL',
    reason: `expected postgres://… or sqlite:<file>, got "${raw}"`,
  });
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
    sessionTtlMs: integer(env, 'PORTICO_SESSION_TTL_MS', 8 * 3600 * 1000, 60_000),
    smtpUrl: smtpUrl(env),
    mailFrom: mailFrom(env),
    portalPublicUrl: publicUrl(env, 'PORTICO_PORTAL_URL'),
    workers: integer(env, 'PORTICO_WORKERS', 1, 1, Math.max(64, cpus().length)),
    gatewayPublicUrl: env.PORTICO_GATEWAY_URL ?? `http://${host}:${gatewayPort}`,
    namedRateLimits: jsonObject(env, 'PORTICO_NAMED_RATE_LIMITS'),
    portalCatalog: portalCatalog(env),
    trustProxy: boolean(env, 'PORTICO_TRUST_PROXY', false),
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
