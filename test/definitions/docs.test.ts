import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { policyRegistry } from '../../src/policies/registry.ts';

const doc = readFileSync(new URL('../../docs/definitions.md', import.meta.url), 'utf8');

describe('docs/definitions.md', () => {
  for (const [name, entry] of Object.entries(policyRegistry)) {
    it(`documents the ${name} policy with each of its fields`, () => {
      const section = doc.split(`\n### ${name}\n`)[1]?.split('\n### ')[0];
      assert.ok(section !== undefined, `no section for ${name}`);
      for (const field of Object.keys(entry.schema.properties as object))
        assert.ok(section.includes(`| \`${field}\` |`), `${name}.${field} is not documented`);
      for (const version of entry.versions)
        assert.ok(section.includes(`\`${version}\``), `${name} ${version} is not documented`);
    });
  }
});
