/**
 * "Where a column is in these values" for any number of values. Each value is a bound parameter,
 * and the databases bound a statement's parameters: SQLite at 32,766 ("too many SQL variables"),
 * PostgreSQL at 65,535 (its protocol counts them in 16 bits; past that the count wraps and the
 * statement fails with a garbled error). A list longer than {@link inListMax} is read in
 * statements of that many values; run them in one transaction where they must agree.
 */

/** The most values one statement binds for one list. */
export const inListMax = 10_000;

/** Rows of `columns` values each that one insert may carry under the same bound. */
export function rowsPerInsert(columns: number): number {
  return Math.floor(inListMax / columns);
}

/**
 * Runs `read` on `values` without duplicates, in slices that bind at most {@link inListMax}
 * parameters (`perValue` each: 2 for pairs) — once for a shorter list, not at all for none — and
 * returns the rows of all of them in order.
 */
export async function readIn<V, R>(
  values: Iterable<V>,
  read: (slice: V[]) => Promise<R[]>,
  perValue = 1,
): Promise<R[]> {
  const unique = [...new Set(values)];
  const size = Math.floor(inListMax / perValue);
  if (unique.length === 0) return [];
  if (unique.length <= size) return read(unique);
  const rows: R[] = [];
  for (let start = 0; start < unique.length; start += size) {
    for (const row of await read(unique.slice(start, start + size))) rows.push(row);
  }
  return rows;
}
