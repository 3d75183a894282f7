/**
 * Settings, read once from the environment (and CLI overrides), validated, defaulted and
 * frozen (fastify's "config validated once at start"). Every setting is listed in
 * docs/configuration.md.
 */
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
  host: string;
  gatewayPort: number;
  portalPort: number;
  managementPort: number;
  logLevel: string;
  /** Largest request body the gateway accepts, in bytes. */
  maxRequestBytes: number;
  /** Largest backend response body read by invoke, in bytes. */
  maxBackendBodyBytes: number;
  /** Analytics: events per batch write, and the longest an event waits before its batch is written. */
  analyticsBatchSize: number;
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
  /** WebAssembly memory ceiling of each script worker's engine. */
  scriptEngineBytes: number;
  /** Portal/console session lifetime. */
  sessionTtlMs: number;
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
    throw new PorticoError('CONFIG_INVALID', { setting: name, reason: `expected an integer from ${min} to ${max}, got "${raw}"` });
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

function tlsProfiles(env: Env): Record<string, TlsProfileSetting> {
  const raw = env.PORTICO_TLS_PROFILES;
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_TLS_PROFILES', reason: `not JSON: ${(error as Error).message}` });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_TLS_PROFILES', reason: 'expected {"name": {"ca": "file.pem", …}}' });
  }
  for (const [name, profile] of Object.entries(value)) {
    const fields = profile as Record<string, unknown>;
    const wrong = Object.entries(fields ?? {}).find(([key, v]) =>
      key === 'rejectUnauthorized' ? typeof v !== 'boolean' : !['ca', 'cert', 'key'].includes(key) || typeof v !== 'string',
    );
    if (typeof profile !== 'object' || profile === null || wrong) {
      throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_TLS_PROFILES', reason: `profile ${name}: fields are ca, cert, key (file paths) and rejectUnauthorized (boolean)` });
    }
  }
  return value as Record<string, TlsProfileSetting>;
}

function portalCatalog(env: Env): string | undefined {
  const raw = env.PORTICO_PORTAL_CATALOG;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[^/\s]+\/[^/\s]+$/.test(raw)) throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_PORTAL_CATALOG', reason: `expected org/catalog, got "${raw}"` });
  return raw;
}

function jsonObject(env: Env, name: string): Record<string, string> {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', { setting: name, reason: `not JSON: ${(error as Error).message}` });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new PorticoError('CONFIG_INVALID', { setting: name, reason: 'expected a JSON object of name → "count/interval" strings' });
  }
  return value as Record<string, string>;
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
    host,
    gatewayPort,
    portalPort: integer(env, 'PORTICO_PORTAL_PORT', 8081, 0, 65535),
    managementPort: integer(env, 'PORTICO_MANAGEMENT_PORT', 8082, 0, 65535),
    logLevel: env.PORTICO_LOG_LEVEL ?? 'info',
    maxRequestBytes: integer(env, 'PORTICO_MAX_REQUEST_BYTES', 4 * 1024 * 1024, 1),
    maxBackendBodyBytes: integer(env, 'PORTICO_MAX_BACKEND_BYTES', 16 * 1024 * 1024, 1),
    analyticsBatchSize: integer(env, 'PORTICO_ANALYTICS_BATCH', 500, 1, 100_000),
    analyticsFlushMs: integer(env, 'PORTICO_ANALYTICS_FLUSH_MS', 1000, 10, 600_000),
    analyticsMaxPayloadBytes: integer(env, 'PORTICO_ANALYTICS_MAX_PAYLOAD', 64 * 1024, 0),
    analyticsRetentionDays: integer(env, 'PORTICO_ANALYTICS_RETENTION_DAYS', 30, 0),
    scriptTimeoutMs: integer(env, 'PORTICO_SCRIPT_TIMEOUT_MS', 1000, 1, 60_000),
    scriptMemoryBytes: integer(env, 'PORTICO_SCRIPT_MEMORY_BYTES', 32 * 1024 * 1024, 1024 * 1024),
    scriptWorkers: integer(env, 'PORTICO_SCRIPT_WORKERS', 2, 1, 64),
    scriptGraceMs: integer(env, 'PORTICO_SCRIPT_GRACE_MS', 1000, 50, 60_000),
    scriptEngineBytes: integer(env, 'PORTICO_SCRIPT_ENGINE_BYTES', 256 * 1024 * 1024, 32 * 1024 * 1024, 4 * 1024 * 1024 * 1024),
    sessionTtlMs: integer(env, 'PORTICO_SESSION_TTL_MS', 8 * 3600 * 1000, 60_000),
    workers: integer(env, 'PORTICO_WORKERS', 1, 1, Math.max(64, cpus().length)),
    gatewayPublicUrl: env.PORTICO_GATEWAY_URL ?? `http://${host}:${gatewayPort}`,
    namedRateLimits: jsonObject(env, 'PORTICO_NAMED_RATE_LIMITS'),
    portalCatalog: portalCatalog(env),
    trustProxy: boolean(env, 'PORTICO_TRUST_PROXY', false),
    tlsProfiles: tlsProfiles(env),
    analyticsRedact: (env.PORTICO_ANALYTICS_REDACT ?? '').split(',').map((name) => name.trim()).filter((name) => name.length > 0),
    ...overrides,
  };
  return Object.freeze(settings);
}
