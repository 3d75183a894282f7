/** Reads a file of the definitions corpus under test/fixtures/definitions. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../fixtures/definitions/', import.meta.url));

export function fixture(name: string): string {
  return readFileSync(root + name, 'utf8');
}
