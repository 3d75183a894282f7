/**
 * The backend connection pools: one undici Agent per TLS profile (many origins each), shared by
 * invoke, proxy, jwt-validate's JWKS fetches and the security phase's introspection calls, and
 * closed once when the gateway stops.
 */
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { PolicyCompileError } from '../types.ts';
import type { PolicySettings, TlsProfile } from '../types.ts';

const agents = new Map<string, Agent>();

/**
 * The TLS profiles an API of provider org `org` may name: the shared ones and those whose `orgs`
 * list it. Without an org, the shared ones only; a profile the org may not use is absent, so it
 * is refused exactly like one the gateway does not have.
 */
export function tlsProfilesOf(
  settings: Pick<PolicySettings, 'tlsProfiles' | 'orgTlsProfiles'>,
  org: string | undefined,
): Record<string, TlsProfile> {
  const limited = Object.entries(settings.orgTlsProfiles ?? {}).filter(
    ([, profile]) => org !== undefined && profile.orgs.includes(org),
  );
  if (limited.length === 0) return settings.tlsProfiles;
  return { ...settings.tlsProfiles, ...Object.fromEntries(limited) };
}

/**
 * The shared connection pool for a TLS profile (one Agent, many origins). `settings.tlsProfiles`
 * is the caller's view: an org's profiles come through {@link tlsProfilesOf}.
 */
export function dispatcherFor(profile: string | undefined, settings: Pick<PolicySettings, 'tlsProfiles'>): Dispatcher {
  const key = profile ?? '';
  let agent = agents.get(key);
  if (agent === undefined) {
    const tls = profile === undefined ? undefined : settings.tlsProfiles[profile];
    agent = new Agent({
      connections: 256,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: tls
        ? { rejectUnauthorized: tls.rejectUnauthorized ?? true, ca: tls.ca, cert: tls.cert, key: tls.key }
        : undefined,
    });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the pools (graceful shutdown). */
export async function closeDispatchers(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((agent) => agent.close().catch(() => agent.destroy())));
}

/**
 * The gateway's TLS profile an invoke names. API Connect writes `name:version`
 * (`tls-profile: backend-ca:1.0.0`); the gateway's profiles are matched with or without the
 * version. An unknown profile fails the publish, as does one the API's org may not use (`settings`
 * is {@link tlsProfilesOf} that org): the message is the same, so a provider learns nothing of
 * other tenants' profiles.
 */
export function tlsProfileName(
  written: string | undefined,
  settings: Pick<PolicySettings, 'tlsProfiles'>,
  path: string,
): string | undefined {
  if (written === undefined || written === '') return undefined;
  if (Object.hasOwn(settings.tlsProfiles, written)) return written;
  const bare = written.replace(/:[^:]+$/, '');
  if (Object.hasOwn(settings.tlsProfiles, bare)) return bare;
  throw new PolicyCompileError(
    `${path}.tls-profile`,
    'unknown-tls-profile',
    `no TLS profile ${written} is configured on this gateway (PORTICO_TLS_PROFILES)`,
  );
}
