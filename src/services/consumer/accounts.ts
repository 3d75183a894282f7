/** Developer accounts of the portal: sign-up, sign-in, password change. */
import { PorticoError } from '../../errors.ts';
import * as consumers from '../../store/consumers.ts';
import { visibilityOrgNames } from '../../store/products.ts';
import { hashPassword } from '../../store/secrets.ts';
import { isUniqueViolation } from '../../store/store.ts';
import type { Db } from '../../store/store.ts';
import {
  checkCurrentPassword,
  checkEmail,
  checkOptionalLabel,
  checkPasswordRules,
  passwordMatches,
} from '../account-rules.ts';
import type { ServiceContext } from '../service-context.ts';
import { mailAfterSignUp } from './account-email.ts';
import type { AccountMail, MailRequest } from './account-email.ts';

export interface SignUp {
  email: string;
  password: string;
  name?: string;
  orgTitle?: string;
  /** Created with a verified address (the demo's own developer); the portal never sets it. */
  verified?: boolean;
}

/**
 * Signs up a developer: a consumer organization and its first portal user, in one
 * transaction. The organization's name comes from its title but never takes a name a
 * product's visibility lists or another organization has: those get a numbered suffix.
 * The password is hashed before the email is looked up, so a taken email (MGMT_CONFLICT,
 * field `email`) costs the same time as a new account. With `mail`, a new account is sent its
 * verification link and the owner of a taken address is told of the attempt.
 */
export async function signUp(
  context: ServiceContext,
  catalogId: string,
  input: SignUp,
  mail?: AccountMail,
  request: MailRequest = {},
) {
  const email = checkEmail(input.email);
  checkPasswordRules(input.password);
  // Every field is checked before the address is looked up: a field refused only for a new
  // address would tell which addresses have an account.
  const name = checkOptionalLabel(input.name, 'name') || email.split('@')[0];
  const orgTitle = checkOptionalLabel(input.orgTitle, 'orgTitle') || `${name}'s organization`;
  const passwordHash = await hashPassword(input.password);
  const owner = { email, name, passwordHash, verified: input.verified === true };
  const taken = async (): Promise<PorticoError | undefined> => {
    const existing = await consumers.findPortalUserByEmail(context.store.db, catalogId, email);
    if (!existing) return undefined;
    if (mail) await mailAfterSignUp(context, mail, existing, false, request);
    return new PorticoError('MGMT_CONFLICT', { field: 'email', reason: 'an account with this email already exists' });
  };
  const refusal = await taken();
  if (refusal) throw refusal;
  // A sign-up with the same address, or an organization given the same name, may commit between
  // the look-up and the insert: the unique index refuses the row, and the same checks run again
  // (the address is refused as above; a new organization name is chosen).
  for (let attempt = 1; ; attempt++) {
    try {
      const created = await context.store.transaction(async (trx) => {
        const orgName = await unclaimedConsumerOrgName(trx, catalogId, orgTitle);
        return consumers.createConsumerOrgWithOwner(trx, catalogId, { name: orgName, title: orgTitle }, owner);
      });
      if (mail && !created.user.email_verified_at) await mailAfterSignUp(context, mail, created.user, true, request);
      return created;
    } catch (error) {
      if (!isUniqueViolation(error) || attempt === 3) throw error;
      const raced = await taken();
      if (raced) throw raced;
    }
  }
}

/**
 * A name for a self-registered organization: from its title, with a suffix when a product's
 * visibility (any catalog) or another organization of the catalog already uses it.
 */
async function unclaimedConsumerOrgName(db: Db, catalogId: string, title: string): Promise<string> {
  const base =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'org';
  const listed = await visibilityOrgNames(db);
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}-${n + 1}`;
    if (!listed.has(name) && !(await consumers.findConsumerOrgByName(db, catalogId, name))) return name;
  }
}

/** The portal user for these credentials, under the same limits as provider sign-in. */
export function authenticatePortalUser(
  context: ServiceContext,
  catalogId: string,
  email: string,
  password: string,
  address: string,
) {
  const wanted = typeof email === 'string' ? email.trim().toLowerCase() : '';
  return context.signInLimiter.guard({ account: `portal|${catalogId}|${wanted}`, address }, async () => {
    const user = wanted ? await consumers.findPortalUserByEmail(context.store.db, catalogId, wanted) : undefined;
    if (!(await passwordMatches(user, password)) || !user) throw new PorticoError('MGMT_BAD_CREDENTIALS');
    return user;
  });
}

/**
 * Changes the password of a signed-in developer. The current password is checked under the
 * sign-in limits, counted per account from any address (a stolen session cannot guess it at full
 * speed): past them MGMT_TOO_MANY_ATTEMPTS, even when it is right. A wrong one is MGMT_VALIDATION
 * naming `currentPassword`. The new password cancels every reset link mailed before.
 */
export async function changePortalPassword(
  context: ServiceContext,
  userId: string,
  current: string,
  next: string,
  address: string,
): Promise<void> {
  const user = await consumers.findPortalUserById(context.store.db, userId);
  await checkCurrentPassword(context.signInLimiter, `portal-password|${userId}`, user, current, address);
  checkPasswordRules(next, 'newPassword');
  const passwordHash = await hashPassword(next);
  await context.store.transaction((trx) => consumers.setPortalUserPassword(trx, userId, passwordHash));
}
