/**
 * What a pool run's writes changed in its request's variables, so that a run past its write
 * budget (write-budget.ts) fails with none of them applied. A worker's writes are applied as they
 * arrive, before the write past the budget is made: a read after a write must see it (worker.ts),
 * so they cannot all wait for the run's end as the inline tier's do (inline.ts).
 *
 * Before each write, the journal records what the write can change, walking the name as
 * GatewayContext.set does: the trees on the path that exist and are this request's own are
 * written into, not replaced; the first key that holds anything else (a raw body, a frozen shared
 * tree, a value, nothing) gets a new tree, and all below it is new. So a write changes one key of
 * one existing tree, whose old value is recorded — or, where the context deletes keys or a list
 * grows (a header bag's other spellings of a name, `clear`, a list), the whole tree is copied, one
 * level deep, so that undoing keeps its keys in their order. Undoing replays the records newest
 * first: every variable reads as before the run, the same objects in the same places.
 */
import { parseVariablePath } from '../../gateway/context.ts';
import { RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';
import { setOwn } from '../variable-names.ts';

type Tree = Record<string, unknown>;

/** A tree a write changes in place rather than replacing. */
function ownTree(value: unknown): value is Tree {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Buffer.isBuffer(value) &&
    !(value instanceof RawBody) &&
    !Object.isFrozen(value)
  );
}

/** One key as it was, or a whole tree: a list's items, or a record's keys and values in order. */
type Undo =
  | { tree: Tree; key: string; had: boolean; old: unknown }
  | { tree: Tree; items: unknown[] }
  | { tree: Tree; keys: string[]; values: unknown[] };

/** The undo record of one run's writes to one request's variables. */
export class WriteJournal {
  private readonly undos: Undo[] = [];
  private readonly copied = new Set<Tree>();

  constructor(private readonly ctx: FlowContext) {}

  /** Records, before `op` (set, add, clear) writes `name`, what it can change. */
  before(op: string, name: string): void {
    const vars = (this.ctx as { vars?: unknown }).vars;
    if (!ownTree(vars)) return;
    let segments: readonly string[];
    try {
      segments = parseVariablePath(name).segments;
    } catch {
      return; // The write is refused as well, and changes nothing.
    }
    const last = segments.length - 1;
    if (last < 0) return;
    let node: Tree = vars;
    for (let i = 0; i < last; i++) {
      const key = segments[i]!;
      const next: unknown = Object.hasOwn(node, key) ? node[key] : undefined;
      if (!ownTree(next)) {
        this.record(node, key);
        return;
      }
      node = next;
    }
    if (op === 'clear' || (last > 0 && segments[last - 1] === 'headers')) this.keep(node);
    else this.record(node, segments[last]!);
  }

  /** Keeps `tree` whole as it is now, unless already kept in this run (`add` keeps the list it appends to). */
  keep(tree: unknown): void {
    if (!ownTree(tree) || this.copied.has(tree)) return;
    this.copied.add(tree);
    // Variable names are strings, and the context's trees hold enumerable data properties only.
    if (Array.isArray(tree)) this.undos.push({ tree, items: tree.slice() });
    else this.undos.push({ tree, keys: Object.keys(tree), values: Object.values(tree) });
  }

  /** Puts back, newest first, everything recorded. */
  undo(): void {
    for (let i = this.undos.length - 1; i >= 0; i--) {
      const undo = this.undos[i]!;
      const tree = undo.tree;
      if ('key' in undo) {
        if (undo.had) setOwn(tree, undo.key, undo.old);
        else Reflect.deleteProperty(tree, undo.key);
      } else if ('items' in undo) {
        const list = tree as unknown as unknown[];
        list.length = 0;
        for (const item of undo.items) list.push(item);
      } else {
        for (const key of Object.keys(tree)) Reflect.deleteProperty(tree, key);
        undo.keys.forEach((key, at) => setOwn(tree, key, undo.values[at]));
      }
    }
    this.undos.length = 0;
    this.copied.clear();
  }

  /** Records one key of `tree`; a list is kept whole (a deleted index would leave its length). */
  private record(tree: Tree, key: string): void {
    if (Array.isArray(tree)) this.keep(tree);
    else this.undos.push({ tree, key, had: Object.hasOwn(tree, key), old: tree[key] });
  }
}
