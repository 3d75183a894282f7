/**
 * The publish-time check that what an API's document names by name is enabled in the catalog
 * it is published to: the user registries of its basic schemes and user-security policies, the
 * OAuth providers of its oauth2 schemes. Import cannot check these (a catalog enables them), so
 * publish refuses what the gateway could not enforce.
 */
import { namedProviders, namedRegistries } from '../../definitions/security-support.ts';
import { PorticoError } from '../../errors.ts';
import { assemblyRegistries } from '../../policies/user-security/rules.ts';
import * as oauth from '../../store/oauth.ts';
import * as orgs from '../../store/orgs.ts';
import type { Db } from '../../store/store.ts';
import * as registries from '../../store/user-registries.ts';

/** An API as a publish's checks read it: its name and version, and its document parsed. */
export interface NamingApi {
  name: string;
  version: string;
  document: Record<string, unknown>;
}

/** One name a document gives, where, and by what (for the message). */
interface Named {
  name: string;
  path: string;
  by: string;
}

/** One kind of catalog-enabled thing: how a document names it, how the catalog lists it. */
interface NameKind {
  what: string;
  rule: string;
  named: (document: Record<string, unknown>) => Named[];
  enabled: (db: Db, catalogId: string) => Promise<Array<{ name: string }>>;
}

const kinds: NameKind[] = [
  {
    what: 'user registry',
    rule: 'unknown-user-registry',
    named: (document) => [
      ...namedRegistries(document).map((name) => ({
        name,
        path: '$.securityDefinitions',
        by: 'x-ibm-authentication-registry',
      })),
      ...assemblyRegistries(document).map((name) => ({
        name,
        path: '$.x-ibm-configuration.assembly',
        by: 'a user-security policy',
      })),
    ],
    enabled: registries.listCatalogUserRegistries,
  },
  {
    what: 'OAuth provider',
    rule: 'unknown-oauth-provider',
    named: (document) =>
      namedProviders(document).map((name) => ({ name, path: '$.securityDefinitions', by: 'x-ibm-oauth-provider' })),
    enabled: oauth.listCatalogProviders,
  },
];

/**
 * The check for one catalog and one check run: every registry and provider an API names is
 * enabled in the catalog. Each kind's enabled names are read once, when an API first names one.
 * @throws PorticoError `DEF_INVALID` naming the API, the registry or provider, and the catalog.
 */
export function catalogNamesCheck(db: Db, catalogId: string): (api: NamingApi) => Promise<void> {
  const enabled = new Map<NameKind, Promise<Set<string>>>();
  return async (api) => {
    for (const kind of kinds) {
      const named = kind.named(api.document);
      if (named.length === 0) continue;
      let names = enabled.get(kind);
      if (names === undefined) {
        names = kind.enabled(db, catalogId).then((rows) => new Set(rows.map((row) => row.name)));
        enabled.set(kind, names);
      }
      const available = await names;
      const missing = named.find(({ name }) => !available.has(name));
      if (missing === undefined) continue;
      const catalog = await orgs.findCatalogById(db, catalogId);
      throw new PorticoError('DEF_INVALID', {
        file: `${api.name}:${api.version}`,
        path: missing.path,
        rule: kind.rule,
        reason: `${missing.by} names ${kind.what} ${missing.name}, which catalog ${catalog?.name ?? catalogId} does not enable`,
      });
    }
  };
}
