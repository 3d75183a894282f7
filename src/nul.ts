/**
 * Finding U+0000 in parsed input. PostgreSQL cannot store U+0000 in text nor compare with it, so
 * input that holds one is refused where it enters (web/nul-guard.ts for requests,
 * definitions/parse-text.ts for definition documents) rather than failing in the store.
 */

/**
 * The path of a string or key in `value` that holds U+0000 (`root.key[2].name`), or undefined.
 * Walked with a stack of its own, so no nesting is too deep for it.
 */
export function nulField(value: unknown, root: string): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\0')) return path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}[${i}]`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const field = path === '' ? key : `${path}.${key}`;
        if (key.includes('\0')) return field;
        stack.push([child, field]);
      }
    }
  }
  return undefined;
}
