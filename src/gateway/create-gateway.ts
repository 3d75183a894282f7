/**
 * Builds a gateway from the settings: its counters (memory or Redis), analytics sink, policy
 * registry and the policy settings (timeouts, script limits, named rate limits).
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { AnalyticsSink } from '../analytics/sink.ts';
import type { Settings } from '../config/config.ts';
import { parseRateLimit } from '../definitions/parse-rate-limit.ts';
import { PorticoError } from '../errors.ts';
import { VerdictCache } from '../identity/verdict-cache.ts';
import { createWorkerCounterStore } from '../ratelimit/cluster.ts';
import { createCounterStore } from '../ratelimit/index.ts';
import type { LimitRule } from '../ratelimit/types.ts';
import { InlineTier } from '../policies/gatewayscript/inline.ts';
import { ScriptPool } from '../policies/gatewayscript/pool.ts';
import type { PolicySettings } from '../policies/types.ts';
import { loadSnapshotData } from '../store/snapshot-data.ts';
import type { Store } from '../store/store.ts';
import { policyRegistry } from '../policies/registry.ts';
import { trustedPeers } from './forwarded.ts';
import { turnOffPretenuring, turnOffThreadMemoryReducer } from './heap-tuning.ts';
import { Gateway } from './server.ts';
import { OAuthEndpoints } from '../oauth/endpoints.ts';
import { recordChange } from '../store/changes.ts';

/** `{"name":"10/1second"}` → hard rules by name (catalog- and gateway-named assembly limits). */
export function namedLimits(written: Record<string, string>): Record<string, readonly LimitRule[]> {
  const out: Record<string, readonly LimitRule[]> = {};
  for (const [name, value] of Object.entries(written)) {
    let parsed;
    try {
      parsed = parseRateLimit(value);
    } catch (error) {
      throw new PorticoError('CONFIG_INVALID', {
        setting: 'PORTICO_NAMED_RATE_LIMITS',
        reason: `${name}: ${(error as Error).message}`,
      });
    }
    out[name] = parsed.unlimited ? [] : [{ name, limit: parsed.count, windowMs: parsed.windowMs, hard: true }];
  }
  return out;
}

/**
 * Reads the PEM files of the TLS profiles once, at start; a missing file names the profile.
 * Profiles with `orgs` go to `orgTlsProfiles`, for those orgs only. A client certificate without
 * `orgs` is left out, with a warning: which tenant's backend it proves itself to is unknown, and
 * any org's API naming it would pass that backend's mutual-TLS check.
 */
export function loadTlsProfiles(
  profiles: Settings['tlsProfiles'],
  logger: Pick<Logger, 'warn'>,
): Pick<PolicySettings, 'tlsProfiles' | 'orgTlsProfiles'> {
  const shared: PolicySettings['tlsProfiles'] = {};
  const limited: NonNullable<PolicySettings['orgTlsProfiles']> = {};
  for (const [name, profile] of Object.entries(profiles)) {
    const read = (field: 'ca' | 'cert' | 'key') => {
      const file = profile[field];
      if (file === undefined) return undefined;
      try {
        return readFileSync(file, 'utf8');
      } catch (error) {
        throw new PorticoError('CONFIG_INVALID', {
          setting: 'PORTICO_TLS_PROFILES',
          reason: `profile ${name}: cannot read ${field} ${file}: ${(error as Error).message}`,
        });
      }
    };
    const material = {
      ca: read('ca'),
      cert: read('cert'),
      key: read('key'),
      rejectUnauthorized: profile.rejectUnauthorized ?? true,
    };
    if (profile.orgs !== undefined) limited[name] = { ...material, orgs: [...profile.orgs] };
    else if (material.cert === undefined && material.key === undefined) shared[name] = material;
    else
      logger.warn(
        { profile: name },
        `TLS profile ${name} holds a client certificate but lists no provider orgs, so no API may use it: add "orgs": ["<provider org>", …] to it in PORTICO_TLS_PROFILES`,
      );
  }
  return { tlsProfiles: shared, orgTlsProfiles: limited };
}

export function createGateway(settings: Readonly<Settings>, store: Store, logger: Logger): Gateway {
  // Before the first request: V8's pretenuring guess makes each request's garbage outlive scavenges (see heap-tuning.ts).
  turnOffPretenuring();
  // Before the writer and script threads start: their isolates get no memory reducer (heap-tuning.ts).
  turnOffThreadMemoryReducer();
  // Workers of one machine without Redis count in the primary process, so limits stay exact.
  const counters =
    cluster.isWorker && !settings.redisUrl
      ? createWorkerCounterStore({ failOpen: settings.rateLimitFailOpen })
      : createCounterStore({
          redisUrl: settings.redisUrl,
          failOpen: settings.rateLimitFailOpen,
          logger,
          timeoutMs: settings.rateLimitTimeoutMs,
          leaseMax: settings.rateLimitLeaseMax,
        });
  const sink = new AnalyticsSink({
    store,
    databaseUrl: settings.databaseUrl,
    logger,
    batchSize: settings.analyticsBatchSize,
    flushMs: settings.analyticsFlushMs,
    maxQueued: settings.analyticsMaxQueued,
  });
  const scriptPool = new ScriptPool({
    workers: settings.scriptWorkers,
    graceMs: settings.scriptGraceMs,
    queueMs: settings.scriptQueueMs,
    engineBytes: settings.scriptEngineBytes,
    writeBytes: settings.scriptWriteBytes,
  });
  const oauth = new OAuthEndpoints({
    store,
    logger: logger.child({ part: 'oauth' }),
    trusted: trustedPeers(settings.trustedProxies),
    // The other nodes learn of a revocation from the change feed; this one reloads before answering.
    changed: async (kind) => {
      await recordChange(store.db, kind, store.dialect);
      await gateway.reload();
    },
  });
  const gateway: Gateway = new Gateway({
    oauth,
    logger: logger.child({ part: 'gateway' }),
    counters,
    registry: policyRegistry,
    policySettings: {
      maxBackendBodyBytes: settings.maxBackendBodyBytes,
      maxRequestBytes: settings.maxRequestBytes,
      ...loadTlsProfiles(settings.tlsProfiles, logger),
      script: {
        timeoutMs: settings.scriptTimeoutMs,
        memoryBytes: settings.scriptMemoryBytes,
        pool: scriptPool,
        inline:
          settings.scriptInlineUs > 0
            ? new InlineTier({
                sliceUs: settings.scriptInlineUs,
                writeBytes: settings.scriptWriteBytes,
                logger: logger.child({ part: 'gatewayscript' }),
              })
            : undefined,
      },
      counters,
      namedLimits: namedLimits(settings.namedRateLimits),
      userRegistryCache: new VerdictCache({
        ttlMs: settings.userRegistryCacheSeconds * 1000,
        maxEntries: settings.userRegistryCacheEntries,
      }),
      introspection: {
        timeoutMs: settings.introspectionTimeoutMs,
        cacheMs: settings.introspectionCacheSeconds * 1000,
        cacheEntries: settings.introspectionCacheEntries,
      },
      jwks: {
        refreshMs: settings.jwksRefreshSeconds * 1000,
        unknownKidIntervalMs: settings.jwksUnknownKidIntervalMs,
        maxStaleMs: settings.jwksMaxStaleSeconds * 1000,
        timeoutMs: settings.jwksTimeoutMs,
      },
    },
    maxRequestBytes: settings.maxRequestBytes,
    loadSnapshotData: (base, slices) => store.consistentRead((trx) => loadSnapshotData(trx, base, slices)),
    sink,
    analyticsMaxPayloadBytes: settings.analyticsMaxPayloadBytes,
    analyticsRedact: settings.analyticsRedact,
    connections: {
      headersTimeoutMs: settings.gatewayHeadersTimeoutMs,
      requestTimeoutMs: settings.gatewayRequestTimeoutMs,
      keepAliveTimeoutMs: settings.gatewayKeepAliveTimeoutMs,
      maxConnections: settings.gatewayMaxConnections,
      drainMs: settings.drainMs,
    },
    trustedProxies: settings.trustedProxies,
    statusOnConsumerPort: settings.gatewayStatusOnConsumerPort,
  });
  // /ready shows whether the counters reach their backend (Redis down: the fail-open decision applies).
  gateway.health = () => ({ rateLimitCounters: counters.health?.() ?? { backend: counters.kind } });
  return gateway;
}
