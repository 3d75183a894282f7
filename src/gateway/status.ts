/**
 * The node's status paths: `/health` (the process answers), `/ready` (a snapshot is loaded and the
 * node is not draining: what a load balancer should check) and `/metrics` (Prometheus). They are
 * served on the status listener, so a gateway-only node can be watched without a management port
 * and consumers can read none of it; on the consumer port only when the settings say so.
 */
import { register as metricsRegistry } from 'prom-client';
import { PorticoError } from '../errors.ts';
import { ResponseHeaders } from './response.ts';
import type { Answer } from './response.ts';
import type { Snapshot } from './snapshot.ts';

/** What `/ready` reports. */
export interface NodeState {
  snapshot: Pick<Snapshot, 'change' | 'apiCount' | 'failures'> | undefined;
  draining: boolean;
  /** Extra readiness facts from whoever runs the gateway (e.g. whether the counters reach Redis). */
  health: Record<string, unknown>;
}

function json(status: number, body: unknown): Answer {
  const headers = new ResponseHeaders();
  headers.set('content-type', 'application/json');
  return { status, payload: JSON.stringify(body), headers };
}

/** The `/ready` answer: 200 when ready, else 503; the APIs this node leaves out, with why. */
export function readyAnswer(node: NodeState): Answer {
  const { snapshot, draining } = node;
  const ready = snapshot !== undefined && !draining;
  return json(ready ? 200 : 503, {
    status: ready ? 'ready' : 'not ready',
    draining,
    change: snapshot?.change ?? null,
    apis: snapshot?.apiCount ?? 0,
    // Published APIs this node does not serve because they do not compile here (still ready: the rest is served).
    failures: snapshot?.failures ?? [],
    ...node.health,
  });
}

/**
 * The answer for a status path.
 * @throws PorticoError `GW_NOT_FOUND` for any other path.
 */
export async function statusAnswer(pathname: string, node: () => NodeState): Promise<Answer> {
  if (pathname === '/health') return json(200, { status: 'ok' });
  if (pathname === '/ready') return readyAnswer(node());
  if (pathname === '/metrics') {
    const headers = new ResponseHeaders();
    headers.set('content-type', metricsRegistry.contentType);
    return { status: 200, payload: await metricsRegistry.metrics(), headers };
  }
  throw new PorticoError('GW_NOT_FOUND');
}
