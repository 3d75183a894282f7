/**
 * A register of what is in flight for a moment per request (a backend call, an answer awaited
 * from another process): each entry gets a numbered slot, and its slot is emptied and reused
 * when it ends.
 *
 * A `Map` or `Set` that takes an entry per request and drops it when done holds on to garbage
 * once its table is in the old generation (issue 18; bench/README.md, Session 13). V8 keeps a
 * Map's or Set's entries in a hash table that it replaces with a new one every few dozen adds and
 * deletes; the new table is allocated in the old generation when the one it replaces is there,
 * and the replaced table keeps the entries it held (with a link to its successor, for
 * iterators) until the next full collection. So after any full collection that finds the
 * collection's table alive (a full collection moves every live young object to the old
 * generation), every replaced table is an old object that points to the requests that were in
 * flight when it was replaced: each scavenge takes those as roots, copies and then promotes
 * them with all they reach, and it lasts for as long as the process lives. On the gateway that
 * was every scavenge promoting 2–3 MB of finished requests, 10–15 ms pauses and a third fewer
 * requests served. A slot array keeps no such copy: an ended entry's slot is overwritten, and
 * the free list holds only numbers.
 */
export class InFlight<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];

  /** Entries in flight. */
  get size(): number {
    return this.slots.length - this.free.length;
  }

  /** Registers `entry`; returns its slot, which {@link take} ends it by. */
  add(entry: T): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = entry;
    return slot;
  }

  /** The entry in `slot`, if one is there. */
  get(slot: number): T | undefined {
    return this.slots[slot];
  }

  /** Ends the entry in `slot` and returns it (undefined when the slot is empty). */
  take(slot: number): T | undefined {
    const entry = this.slots[slot];
    if (entry === undefined) return undefined;
    this.slots[slot] = undefined;
    this.free.push(slot);
    return entry;
  }

  /** Calls `visit` on each entry in flight; `visit` may end entries (with {@link take}). */
  forEach(visit: (entry: T, slot: number) => void): void {
    const slots = this.slots;
    for (let slot = 0; slot < slots.length; slot++) {
      const entry = slots[slot];
      if (entry !== undefined) visit(entry, slot);
    }
  }
}
