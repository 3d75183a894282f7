/**
 * Provider users of an org and their roles: adding, changing a role, removing, changing one's
 * password, and a user's own management API tokens. Every change that takes power away ends
 * the sessions it must in the same transaction, so a removed user's token fails on its next
 * call. Permissions (users:manage) are checked by the routes; the rules here are the ones a
 * permission cannot say: only an owner gives or takes the owner role, and an org keeps one owner.
 */
import { PorticoError } from '../../errors.ts';
import * as orgs from '../../store/orgs.ts';
import * as users from '../../store/provider-users.ts';
import * as sessions from '../../store/sessions.ts';
import type { ProviderRole, ProviderUser, Session } from '../../store/schema.ts';
import { isUniqueViolation } from '../../store/store.ts';
import type { Db } from '../../store/store.ts';
import { hashPassword } from '../../store/secrets.ts';
import { checkCurrentPassword, checkEmail, checkPasswordRules } from '../account-rules.ts';
import { notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { isProviderRole, providerRoles, roleAllows } from './roles.ts';

/** Who asks for a change: the signed-in user, or undefined for the operator's own tools (CLI bootstrap, demo). */
export type Actor = Pick<ProviderUser, 'id' | 'org_id' | 'role'> | undefined;

export interface NewProviderUser {
  username: string;
  email: string;
  password: string;
  /** Default: `owner` for an org's first user, `developer` after that. */
  role?: ProviderRole;
}

/** Lets only an owner (or the operator) give, take or touch the owner role. */
function checkOwnerRule(actor: Actor, role: ProviderRole | undefined, target?: ProviderUser): void {
  if (actor === undefined || actor.role === 'owner') return;
  if (role === 'owner' || target?.role === 'owner')
    throw new PorticoError('MGMT_FORBIDDEN', {
      reason: 'only an owner may give the owner role, or change or remove an owner',
    });
}

function checkRole(role: unknown): ProviderRole {
  if (isProviderRole(role)) return role;
  throw new PorticoError('MGMT_VALIDATION', { field: 'role', reason: `must be one of: ${providerRoles.join(', ')}` });
}

export async function addProviderUser(context: ServiceContext, orgId: string, input: NewProviderUser, actor?: Actor) {
  if (!/^[A-Za-z0-9._@-]{2,64}$/.test(input.username ?? '')) {
    throw new PorticoError('MGMT_VALIDATION', {
      field: 'username',
      reason: 'must be 2-64 letters, digits or ._@-',
    });
  }
  // Optional; one given is an address (as the portal's accounts), stored in lower case.
  const email = input.email ? checkEmail(input.email) : '';
  checkPasswordRules(input.password);
  const requested = input.role === undefined ? undefined : checkRole(input.role);
  // A signed-in actor adds users to its own org only; the route passes the org it signed in to.
  if (actor !== undefined && actor.org_id !== orgId)
    throw new PorticoError('MGMT_FORBIDDEN', { reason: 'users are added to your own organization only' });
  checkOwnerRule(actor, requested);
  // User names are the one sign-in identifier of the console, the API and the CLI, so they are
  // unique across organizations; a taken name is refused without saying whose it is (issue 12).
  // Checked before the password's hash is worked out, and again by the unique index: an add of
  // the same name that passed this check at the same moment gets the same refusal.
  const taken = () => {
    const reason = `the user name ${input.username} is not available; choose another`;
    return new PorticoError('MGMT_CONFLICT', { field: 'username', reason });
  };
  if (await orgs.findProviderUser(context.store.db, input.username)) throw taken();
  const passwordHash = await hashPassword(input.password);
  try {
    return await context.store.transaction(async (trx) => {
      await users.lockOrgUsers(trx, context.store.dialect, orgId);
      // The org's first user owns it: `portico run`'s bootstrap user and the demo's provider.
      const role = requested ?? ((await users.orgHasProviderUsers(trx, orgId)) ? 'developer' : 'owner');
      // Again on the actor as stored now: an owner demoted while this request waited gives no owner role.
      if (actor !== undefined) checkOwnerRule(await currentActor(trx, actor), role);
      return await orgs.createProviderUser(trx, {
        orgId,
        username: input.username,
        email,
        passwordHash,
        role,
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}

/** The org's user named `username`; a user of another org is not found (never named as elsewhere). */
async function orgUser(db: Db, orgId: string, username: string): Promise<ProviderUser> {
  const user = await users.findOrgProviderUser(db, orgId, username);
  if (!user) throw notFound('provider user', username);
  return user;
}

/**
 * The actor as the store has it now, inside the transaction: a role taken away by a change that
 * committed while this request waited for the org's lock no longer counts.
 */
async function currentActor(db: Db, actor: NonNullable<Actor>): Promise<ProviderUser> {
  const fresh = await orgs.findProviderUserById(db, actor.id);
  if (!fresh || fresh.org_id !== actor.org_id || !roleAllows(fresh.role, 'users:manage'))
    throw new PorticoError('MGMT_FORBIDDEN', { reason: 'your role changed while this request waited; try again' });
  return fresh;
}

/** Refuses a change that would leave the org without an owner. */
async function keepAnOwner(db: Db, target: ProviderUser): Promise<void> {
  if (target.role !== 'owner') return;
  if ((await users.countOrgOwners(db, target.org_id)) <= 1)
    throw new PorticoError('MGMT_CONFLICT', {
      field: 'username',
      reason: `${target.username} is the organization's last owner; make another user owner first`,
    });
}

export async function changeRole(
  context: ServiceContext,
  actor: NonNullable<Actor>,
  username: string,
  role: unknown,
): Promise<ProviderUser> {
  const wanted = checkRole(role);
  return context.store.transaction(async (trx) => {
    await users.lockOrgUsers(trx, context.store.dialect, actor.org_id);
    const target = await orgUser(trx, actor.org_id, username);
    checkOwnerRule(await currentActor(trx, actor), wanted, target);
    if (target.role === wanted) return target;
    await keepAnOwner(trx, target);
    await users.setProviderUserRole(trx, target.id, wanted);
    return { ...target, role: wanted };
  });
}

/** Removes the user and ends all its console sessions and API tokens at once. */
export async function removeUser(context: ServiceContext, actor: NonNullable<Actor>, username: string): Promise<void> {
  await context.store.transaction(async (trx) => {
    await users.lockOrgUsers(trx, context.store.dialect, actor.org_id);
    const target = await orgUser(trx, actor.org_id, username);
    checkOwnerRule(await currentActor(trx, actor), undefined, target);
    await keepAnOwner(trx, target);
    await sessions.deleteUserSessions(trx, target.id, { kinds: ['provider', 'token'] });
    await users.deleteProviderUser(trx, target.id);
  });
}

/**
 * Changes the user's own password after checking the current one (counted by the sign-in
 * limiter like a sign-in, so a stolen token cannot guess it), and ends every other console
 * session and token of the user; `current` (the session asking) stays.
 */
export async function changePassword(
  context: ServiceContext,
  user: ProviderUser,
  input: { currentPassword: string; newPassword: string },
  current: Session | undefined,
  address: string,
): Promise<void> {
  // As the portal's password change: counted per account from every address (a signed-in check).
  const account = `provider-password|${user.id}`;
  await checkCurrentPassword(context.signInLimiter, account, user, input.currentPassword, address);
  checkPasswordRules(input.newPassword, 'newPassword');
  const passwordHash = await hashPassword(input.newPassword);
  await context.store.transaction(async (trx) => {
    await users.setProviderUserPassword(trx, user.id, passwordHash);
    await sessions.deleteUserSessions(trx, user.id, { kinds: ['provider', 'token'], keepId: current?.id });
  });
}

/** A token's public id: a prefix of its stored hash (which is itself only a hash of the secret). */
function tokenId(session: Session): string {
  return session.id.slice(0, 16);
}

/** The user's own live API tokens: id, created, expires; never the token. */
export async function listTokens(context: ServiceContext, user: ProviderUser, current: Session | undefined) {
  const tokens = await sessions.listUserSessions(context.store.db, user.id, 'token');
  return tokens.map((s) => ({
    id: tokenId(s),
    createdAt: s.created_at,
    expiresAt: new Date(s.expires_at).toISOString(),
    current: s.id === current?.id,
  }));
}

/**
 * Ends one of the user's own tokens; another user's token id is not found. The deletion itself
 * decides (of this user's tokens, the one with this id), so no listing can go stale before it.
 */
export async function revokeToken(context: ServiceContext, user: ProviderUser, id: string): Promise<void> {
  if (!/^[0-9a-f]{16}$/.test(id)) throw notFound('token', id);
  const which = { kinds: ['token' as const], idPrefix: id };
  const ended = await context.store.transaction((trx) => sessions.deleteUserSessions(trx, user.id, which));
  if (ended === 0) throw notFound('token', id);
}
