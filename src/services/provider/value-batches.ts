/**
 * A large plain value (a parsed API definition) sent from a worker in batches, so that the
 * receiving thread rebuilds it a slice at a time instead of in one block: the structured clone
 * of a 20,000-path definition took 1.3 s to read back in one piece (40,000 paths: 2–5 s), and a
 * gateway in the same process answered nothing meanwhile.
 *
 * The sender cuts the value into pieces of at most {@link nodesPerBatch} values and keys (a
 * container above that is sent as an empty shell and then its entries), each with its path;
 * the receiver puts each piece at its path, in order, so keys keep their order, and yields to
 * the event loop between batches. Objects shared between two batches arrive as two copies.
 */
import { deserialize, serialize } from 'node:v8';

/** About 10 ms of deserialising per batch. */
export const nodesPerBatch = 10_000;

type Key = string | number;
type Piece = [path: Key[], value: unknown];

/** The value as serialised batches of pieces (on the sending thread). */
export function toBatches(value: unknown): Buffer[] {
  const batches: Buffer[] = [];
  let batch: Piece[] = [];
  let size = 0;
  const add = (path: Key[], piece: unknown, nodes: number) => {
    batch.push([path, piece]);
    size += nodes;
    if (size < nodesPerBatch) return;
    batches.push(serialize(batch));
    batch = [];
    size = 0;
  };
  const visit = (path: Key[], node: unknown) => {
    const nodes = countUpTo(node, nodesPerBatch);
    if (nodes <= nodesPerBatch || typeof node !== 'object' || node === null) return add(path, node, nodes);
    add(path, Array.isArray(node) ? [] : {}, 1);
    const entries: Array<[Key, unknown]> = Array.isArray(node)
      ? node.map((item, index) => [index, item])
      : Object.entries(node);
    for (const [key, child] of entries) visit([...path, key], child);
  };
  visit([], value);
  if (batch.length > 0) batches.push(serialize(batch));
  return batches;
}

/** The value rebuilt from its batches, one batch per turn of the event loop (on the receiving thread). */
export async function fromBatches(batches: readonly Uint8Array[]): Promise<unknown> {
  let root: unknown;
  for (const [index, batch] of batches.entries()) {
    if (index > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const [path, piece] of deserialize(batch) as Piece[]) {
      if (path.length === 0) {
        root = piece;
        continue;
      }
      let parent = root as Record<Key, unknown>;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<Key, unknown>;
      // An own property even for a key named `__proto__`, as JSON.parse and the YAML reader make it.
      Object.defineProperty(parent, path[path.length - 1], {
        value: piece,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return root;
}

/** The values and keys in `value`, counted up to `limit + 1` at most. */
function countUpTo(value: unknown, limit: number): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0 && count <= limit) {
    const node = stack.pop();
    count++;
    if (typeof node !== 'object' || node === null) continue;
    for (const child of Object.values(node)) {
      count += Array.isArray(node) ? 0 : 1;
      stack.push(child);
    }
  }
  return count;
}
