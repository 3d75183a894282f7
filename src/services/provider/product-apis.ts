/** The stored APIs a product's `apis:` entries name, by `name:version` or by a `$ref` to an attached API file. */
import { assemblyProblems } from '../../policies/check-assembly.ts';
import { parseApiDocument } from '../../definitions/index.ts';
import type { ProductDefinition } from '../../definitions/types.ts';
import { PorticoError } from '../../errors.ts';
import * as apisRepo from '../../store/apis.ts';
import type { Db } from '../../store/store.ts';

/** A product's `apis:` key and the stored API it names. */
export interface ApiLink {
  apiId: string;
  key: string;
}

/**
 * The stored APIs a product names, by name:version or by a `$ref` to an attached file (by file
 * name in `attachments`), read in one statement. The first entry in the product's order that
 * cannot be resolved is refused: an API that does not exist, an attachment not given, or one
 * that does not parse (entries after it are not looked at).
 * @throws PorticoError `DEF_INVALID` at `$.apis.KEY` of `file`, rule `unknown-api` or `unresolved-ref`.
 */
export async function resolveApis(
  db: Db,
  orgId: string,
  definition: ProductDefinition,
  file: string,
  attachments: Record<string, string> | undefined,
): Promise<ApiLink[]> {
  const targets: Array<{ name: string; version: string }> = [];
  let refused: unknown;
  try {
    for (const entry of definition.apis) targets.push(entryTarget(entry, file, attachments));
  } catch (error) {
    refused = error; // reported once the entries before it are known to exist
  }
  const rows = await apisRepo.findApisByNames(db, orgId, targets);
  const links = targets.map((target, index) => {
    const api = rows[index];
    if (!api) {
      const path = `$.apis.${definition.apis[index].key}`;
      const reason = `the product names API ${target.name}:${target.version}, which does not exist (import it first)`;
      throw new PorticoError('DEF_INVALID', { file, path, rule: 'unknown-api', reason, index });
    }
    return { apiId: api.id, key: definition.apis[index].key };
  });
  if (refused !== undefined) throw refused;
  return links;
}

/** The name and version an entry names, itself or through the attached file it names by `$ref`. */
function entryTarget(
  entry: ProductDefinition['apis'][number],
  file: string,
  attachments: Record<string, string> | undefined,
): { name: string; version: string } {
  if (!('ref' in entry)) return { name: entry.name, version: entry.version };
  const target = refTarget(entry.ref, attachments);
  if (!target) {
    const reason = `the API file ${entry.ref} was not given with the product`;
    throw new PorticoError('DEF_INVALID', { file, path: `$.apis.${entry.key}`, rule: 'unresolved-ref', reason });
  }
  return target;
}

/** The name and version of the API defined by the file a product names by `$ref`. */
function refTarget(
  ref: string,
  attachments: Record<string, string> | undefined,
): { name: string; version: string } | undefined {
  const file = ref.replace(/^\.\//, '');
  const text = attachments?.[file];
  if (text === undefined) return undefined;
  const definition = parseApiDocument(text, file, assemblyProblems);
  return { name: definition.name, version: definition.version };
}
