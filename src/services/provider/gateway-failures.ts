/**
 * Published APIs the gateway left out of its snapshot because they do not compile there. The
 * import already runs every policy's own checks (the registry the gateway compiles with), so
 * what remains is what only a gateway can judge: the user registries its catalog enables, its
 * TLS profiles, its named limits. Only a gateway knows those, so the management plane shows
 * what the gateway of its own process reports, and says when it runs none (each gateway's
 * `/ready` lists its own).
 */
import * as orgs from '../../store/orgs.ts';
import type { ServiceContext } from '../service-context.ts';

/** An API left out of a gateway's snapshot, as the gateway reports it. */
export interface GatewayFailure {
  api: string;
  org: string;
  catalog: string;
  reason: string;
}

/** Where the failures come from: this process's gateway, or none runs here. */
export interface GatewayFailures {
  gateway: 'in-process' | 'none';
  failures: GatewayFailure[];
}

/** The report of an in-process gateway (set by the platform on a node that runs one). */
export type GatewayReport = () => readonly GatewayFailure[];

/** The org's failures, narrowed to a catalog and/or an API (`name:version`). */
export async function gatewayFailures(
  context: ServiceContext,
  report: GatewayReport | undefined,
  orgId: string,
  filter: { catalog?: string; api?: string },
): Promise<GatewayFailures> {
  if (report === undefined) return { gateway: 'none', failures: [] };
  const org = await orgs.findOrgById(context.store.db, orgId);
  const failures = report().filter(
    (failure) =>
      failure.org === org?.name &&
      (filter.catalog === undefined || failure.catalog === filter.catalog) &&
      (filter.api === undefined || failure.api === filter.api),
  );
  return { gateway: 'in-process', failures: failures.map((failure) => ({ ...failure })) };
}
