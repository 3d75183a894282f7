/** Provider organizations, their catalogs and provider users, and provider sign-in. */
import { PorticoError } from '../../errors.ts';
import * as orgs from '../../store/orgs.ts';
import type { Catalog } from '../../store/schema.ts';
import { hashPassword } from '../../store/secrets.ts';
import { checkPasswordRules, passwordMatches } from '../account-rules.ts';
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

export async function addProviderUser(
  context: ServiceContext,
  orgId: string,
  input: { username: string; email: string; password: string },
) {
  if (!/^[A-Za-z0-9._@-]{2,64}$/.test(input.username ?? '')) {
    throw new PorticoError('MGMT_VALIDATION', {
      field: 'username',
      reason: 'must be 2-64 letters, digits or ._@-',
    });
  }
  checkPasswordRules(input.password);
  const passwordHash = await hashPassword(input.password);
  // User names are the one sign-in identifier of the console, the API and the CLI, so they are
  // unique across organizations; a taken name is refused without saying whose it is (issue 12).
  if (await orgs.findProviderUser(context.store.db, input.username)) {
    const reason = `the user name ${input.username} is not available; choose another`;
    throw new PorticoError('MGMT_CONFLICT', { field: 'username', reason });
  }
  const user = { orgId, username: input.username, email: input.email ?? '', passwordHash };
  return orgs.createProviderUser(context.store.db, user);
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
