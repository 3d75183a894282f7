/** Provider organizations, their catalogs, and provider sign-in (users and roles: provider-users.ts). */
import { PorticoError } from '../../errors.ts';
import * as orgs from '../../store/orgs.ts';
import type { Catalog } from '../../store/schema.ts';
import { passwordMatches } from '../account-rules.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';

const catalogNameRule = 'must be lower-case letters, digits and dashes, starting with a letter or digit';

/** The organization named `name` with its sandbox catalog, created when missing. */
export function ensureOrg(
  context: ServiceContext,
  name: string,
  title = name,
): Promise<{ orgId: string; sandbox: Catalog }> {
  return context.store.transaction(async (trx) => {
    const org = (await orgs.findOrgByName(trx, name)) ?? (await orgs.createOrg(trx, { name, title }));
    const sandbox =
      (await orgs.findCatalog(trx, org.id, 'sandbox')) ??
      (await orgs.createCatalog(trx, { orgId: org.id, name: 'sandbox', title: 'Sandbox' }));
    return { orgId: org.id, sandbox };
  });
}

export async function catalog(context: ServiceContext, orgId: string, name: string): Promise<Catalog> {
  const found = await orgs.findCatalog(context.store.db, orgId, name);
  if (!found) throw notFound('catalog', name);
  return found;
}

export async function createCatalog(
  context: ServiceContext,
  orgId: string,
  name: string,
  title: string,
): Promise<Catalog> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
    throw new PorticoError('MGMT_VALIDATION', { field: 'name', reason: catalogNameRule });
  }
  if (await orgs.findCatalog(context.store.db, orgId, name)) {
    throw new PorticoError('MGMT_CONFLICT', { reason: `catalog ${name} already exists` });
  }
  return change(context, 'catalog', (trx) => orgs.createCatalog(trx, { orgId, name, title }));
}

/**
 * The provider user for these credentials; a generic error when either is wrong, and
 * MGMT_TOO_MANY_ATTEMPTS past the sign-in limits for this name and client `address`.
 */
export function authenticateProvider(context: ServiceContext, username: string, password: string, address: string) {
  const name = typeof username === 'string' ? username : '';
  return context.signInLimiter.guard({ account: `provider|${name.toLowerCase()}`, address }, async () => {
    const user = name ? await orgs.findProviderUser(context.store.db, name) : undefined;
    if (!(await passwordMatches(user, password)) || !user) throw new PorticoError('MGMT_BAD_CREDENTIALS');
    return user;
  });
}
