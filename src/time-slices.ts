/**
 * Time slices for background work on a thread that serves requests (issue 18). Work that grows
 * with a catalog (a reload's reads and compile) asks {@link TimeSlices.due} between its items and,
 * once it has run for its budget, awaits {@link TimeSlices.next}: one turn of the event loop, so
 * the requests waiting on sockets and timers run between slices rather than after the whole job.
 * A stall is then bounded by the budget plus the longest single item, not by the catalog's size.
 * Loops over many cheap items (map entries, rows) ask {@link TimeSlices.tick} instead, which reads
 * the clock only every 1 024th item.
 */
import { setImmediate as turn } from 'node:timers/promises';

export class TimeSlices {
  #started = performance.now();
  #items = 0;
  /** How many times the work gave the event loop a turn. */
  turns = 0;

  constructor(readonly budgetMs: number) {}

  /** Whether the current slice has used its budget. */
  due(): boolean {
    return performance.now() - this.#started >= this.budgetMs;
  }

  /** Counts one cheap item; every 1 024th, whether the slice has used its budget. */
  tick(): boolean {
    return (++this.#items & 1023) === 0 && this.due();
  }

  /** Gives the event loop one turn (after its I/O), then starts a new slice. */
  async next(): Promise<void> {
    await turn();
    this.turns++;
    this.#started = performance.now();
  }

  /** {@link next} when {@link due}. */
  async pause(): Promise<void> {
    if (this.due()) await this.next();
  }
}

/** Work that runs to its end without a turn: what the reload's steps do when given no slices. */
export const wholly = (): TimeSlices => new TimeSlices(Number.POSITIVE_INFINITY);
