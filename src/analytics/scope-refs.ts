/**
 * The scopes of activity events handed to the SQLite writer thread (issue 18; the sink's part of
 * the protocol in sqlite-writer.ts).
 */
import { callValues, inScope, maxKnownScopes, scopeKey, scopeValues } from '../store/analytics-writes.ts';
import type { NewActivityEvent } from '../store/schema.ts';
import type { WriterChunk } from './sqlite-writer.ts';

/** Scopes compared field by field before one is looked up by its key (a key is built and hashed). */
const scopesCompared = 4;

/**
 * The scopes of the events handed to the writer thread (issue 18): what is the same for every call
 * of one subscription to one operation goes to the thread once, as a number (a ref) and its
 * values, and each event after it as that ref with its own values: about half of the values an
 * event had to copy between the threads. The last few scopes are compared field by field (mostly
 * the same string objects: pointer comparisons, most failing at the first); another is found by
 * its key. Refs are never reused;
 * past {@link maxKnownScopes} scopes the map starts over at the next chunk, which tells the thread
 * to forget the refs it has (the rows it holds keep their scopes' values).
 */
export class ScopeRefs {
  private readonly byKey = new Map<string, number>();
  private nextRef = 0;
  /** The scopes seen last (values, ref, values, ref…; the latest first), compared before a key is built. */
  private recent: unknown[] = [];
  /** Scopes not sent yet: ref, values, ref, values… */
  private fresh: unknown[] = [];
  private forget = false;

  /** A chunk of events as the thread takes it, with the scopes it has not been sent. */
  chunk(events: readonly NewActivityEvent[]): WriterChunk {
    // Started over between chunks, so that every ref of this one is sent with it, after the forget.
    if (this.byKey.size >= maxKnownScopes) {
      this.restart();
      this.forget = true;
    }
    const rows = new Array<unknown[]>(events.length);
    const refs = new Array<number>(events.length);
    for (let i = 0; i < events.length; i++) {
      rows[i] = callValues(events[i]);
      refs[i] = this.refOf(events[i]);
    }
    const part: WriterChunk = { rows, refs };
    if (this.fresh.length > 0) {
      part.scopes = this.fresh;
      this.fresh = [];
    }
    if (this.forget) {
      part.forget = true;
      this.forget = false;
    }
    return part;
  }

  private refOf(event: NewActivityEvent): number {
    const recent = this.recent;
    for (let i = 0; i < recent.length; i += 2)
      if (inScope(recent[i] as string[], event)) return recent[i + 1] as number;
    const values = scopeValues(event);
    const key = scopeKey(values);
    let ref = this.byKey.get(key);
    if (ref === undefined) {
      ref = this.nextRef++;
      this.byKey.set(key, ref);
      this.fresh.push(ref, values);
    }
    recent.unshift(values, ref);
    if (recent.length > 2 * scopesCompared) recent.length = 2 * scopesCompared;
    return ref;
  }

  /** A new thread knows no scope: every one is sent again. */
  restart(): void {
    this.byKey.clear();
    this.fresh = [];
    this.forget = false;
    this.recent = [];
  }
}
