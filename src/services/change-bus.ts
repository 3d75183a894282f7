/**
 * How a change reaches the gateways: it is recorded in the store's change feed in the same
 * transaction as the change itself (gateways on other nodes follow the feed), then announced
 * on the in-process bus (the gateway of this node rebuilds its snapshot at once).
 */
import { EventEmitter } from 'node:events';
import { recordChange } from '../store/changes.ts';
import type { ChangeKind } from '../store/changes.ts';
import type { Db, Store } from '../store/store.ts';

/** Announces committed changes; the in-process gateway listens (`change` events). */
export class ChangeBus extends EventEmitter {
  changed(kind: string): void {
    this.emit('change', kind);
  }
}

/**
 * Runs `work` in one transaction that also records the change, then announces it. `ref` names what
 * the change touched (see `recordChange`), or is read from what `work` returned.
 */
export async function commitChange<T>(
  store: Store,
  bus: ChangeBus,
  kind: ChangeKind,
  work: (trx: Db) => Promise<T>,
  ref?: string | ((value: T) => string),
): Promise<T> {
  const result = await store.transaction(async (trx) => {
    const value = await work(trx);
    await recordChange(trx, kind, store.dialect, typeof ref === 'function' ? ref(value) : (ref ?? null));
    return value;
  });
  bus.changed(kind);
  return result;
}
