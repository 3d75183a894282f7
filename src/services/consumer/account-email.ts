/**
 * The emailed one-time links of portal accounts: verifying the address after sign-up, and
 * resetting a forgotten password. Every link carries a 256-bit random token of which only the
 * SHA-256 is stored; it works once, and only the latest link of its kind works. Answers that
 * an anonymous visitor sees never depend on whether an account exists: the email does.
 */
import { PorticoError } from '../../errors.ts';
import * as tokens from '../../store/account-tokens.ts';
import { recordDeleted } from '../../store/changes.ts';
import * as consumers from '../../store/consumers.ts';
import type { PortalUser } from '../../store/schema.ts';
import { hashPassword } from '../../store/secrets.ts';
import { deleteUserSessions } from '../../store/sessions.ts';
import type { Db } from '../../store/store.ts';
import { checkPasswordRules } from '../account-rules.ts';
import type { Mailer } from '../mail.ts';
import type { MailLimiter } from '../mail-limiter.ts';
import { change } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';

export const verifyLinkTtlMs = 24 * 3600_000;
export const resetLinkTtlMs = 3600_000;

/** What account email needs: the transport (none when not configured), its limits and where links point. */
export interface AccountMail {
  mailer: Mailer | undefined;
  limiter: MailLimiter;
  /** The portal's public base URL (`PORTICO_PORTAL_URL`, else the address it listens on); never a request's Host. */
  portalUrl: () => string;
}

/** Who asks: the client address (absent for a signed-in owner), for the limits; the portal's title, for the words. */
export interface MailRequest {
  client?: string;
  portalTitle?: string;
}

function allowed(mail: AccountMail, user: Pick<PortalUser, 'catalog_id' | 'email'>, client?: string): number {
  return mail.limiter.take(`${user.catalog_id}|${user.email}`, client);
}

/** A token as a form or query gave it: a non-empty string, else not worth a lookup. */
function usable(token: unknown): token is string {
  return typeof token === 'string' && token !== '';
}

function portalName(request: MailRequest): string {
  return request.portalTitle ? `the ${request.portalTitle} developer portal` : 'the developer portal';
}

/** Emails a new verification link; the caller has checked the limits. */
async function postVerificationLink(
  context: ServiceContext,
  mail: AccountMail & { mailer: Mailer },
  user: PortalUser,
  request: MailRequest,
) {
  const token = await tokens.issueAccountToken(context.store.db, user.id, 'verify-email', verifyLinkTtlMs);
  mail.mailer.post({
    to: user.email,
    subject: 'Verify your email address',
    // No name: it was typed by whoever signed up, and the address is not verified yet.
    text: `Hello,

Confirm that this is your address to finish creating your account on ${portalName(request)}:

${mail.portalUrl()}/verify-email?token=${token}

It asks you to sign in to the new account first, if you are not signed in already.
The link works once and expires in 24 hours. Until then your account sees only public products
and cannot create or subscribe apps. If you did not sign up, ignore this email.
`,
  });
}

/**
 * After a sign-up: a new account gets its verification link; when the address already had an
 * account, its owner is told instead (the portal's answer is the same either way).
 */
export async function mailAfterSignUp(
  context: ServiceContext,
  mail: AccountMail,
  user: PortalUser,
  isNew: boolean,
  request: MailRequest,
) {
  const { mailer } = mail;
  if (!mailer || allowed(mail, user, request.client) > 0) return;
  if (isNew) return postVerificationLink(context, { ...mail, mailer }, user, request);
  mailer.post({
    to: user.email,
    subject: 'Someone tried to sign up with your email address',
    // No name in any account mail: whoever typed it at sign-up need not own this address.
    text: `Hello,

Someone tried to create an account on ${portalName(request)} with this email address, which already
has an account. Nothing was changed.

If it was you, sign in: ${mail.portalUrl()}/sign-in
If you forgot your password, reset it: ${mail.portalUrl()}/forgot-password
If it was not you, you need not do anything.
`,
  });
}

/** A new verification link for a signed-in, unverified owner; MGMT_TOO_MANY_EMAILS past the limit. */
export async function resendVerification(
  context: ServiceContext,
  mail: AccountMail,
  user: PortalUser,
  request: MailRequest,
) {
  const { mailer } = mail;
  if (user.email_verified_at || !mailer) return;
  const wait = allowed(mail, user, undefined);
  if (wait > 0) throw new PorticoError('MGMT_TOO_MANY_EMAILS', { seconds: wait });
  await postVerificationLink(context, { ...mail, mailer }, user, request);
}

/** What opening a verification link did. */
export type VerifyOutcome = 'verified' | 'dead' | 'sign-in' | 'other-account';

/**
 * Uses up a verification link, but only in a session of the account it was sent for
 * (`userId`, the signed-in user): anyone may sign up with an address they do not own, and a
 * mail scanner or link preview that fetches the link must not vouch for their account. A dead
 * link is `dead`; a live one opened without a session (`sign-in`) or in another account's
 * (`other-account`) stays usable.
 */
export async function verifyEmail(context: ServiceContext, token: string, userId?: string): Promise<VerifyOutcome> {
  const owner = usable(token) ? await tokens.peekAccountToken(context.store.db, token, 'verify-email') : undefined;
  if (!owner) return 'dead';
  if (userId === undefined) return 'sign-in';
  if (owner !== userId) return 'other-account';
  if ((await tokens.consumeAccountToken(context.store.db, token, 'verify-email')) !== userId) return 'dead';
  await tokens.markEmailVerified(context.store.db, userId);
  await tokens.deleteAccountTokens(context.store.db, userId, 'verify-email');
  return 'verified';
}

/** "Forgot password": emails a reset link when the address has an account; says nothing either way. */
export async function requestPasswordReset(
  context: ServiceContext,
  mail: AccountMail,
  catalogId: string,
  email: string,
  request: MailRequest,
) {
  const wanted = typeof email === 'string' ? email.trim().toLowerCase() : '';
  const user = wanted ? await consumers.findPortalUserByEmail(context.store.db, catalogId, wanted) : undefined;
  const { mailer } = mail;
  if (!user || !mailer || allowed(mail, user, request.client) > 0) return;
  const token = await tokens.issueAccountToken(context.store.db, user.id, 'reset-password', resetLinkTtlMs);
  mailer.post({
    to: user.email,
    subject: 'Reset your password',
    text: `Hello,

Someone (we hope you) asked to reset the password of your account on ${portalName(request)}.
Choose a new password here:

${mail.portalUrl()}/reset-password?token=${token}

The link works once and expires in 1 hour. Setting a new password signs out every session of
your account. If you did not ask for this, ignore this email: your password is unchanged.
`,
  });
}

/** Whether a reset link is still good (the form is shown only then); it is not used up by looking. */
export async function resetLinkIsLive(context: ServiceContext, token: string): Promise<boolean> {
  return usable(token) && (await tokens.peekAccountToken(context.store.db, token, 'reset-password')) !== undefined;
}

/**
 * Sets a new password by a reset link: the same password rules, the link used up, the other
 * reset links of the account gone, and every portal session of the account ended, in one
 * transaction. Reading the link proves the mailbox, so the address counts as verified too.
 *
 * An account whose address was never verified may have been opened by someone else with the
 * owner's address: the reset is the owner taking it over, so the apps made before it go too —
 * with their secrets and redirect URIs, and from the gateways (an app change). Since apps need a
 * verified address (`createAppAs`), only apps made before that rule, or by the provider's own
 * tools for the organization, can be there.
 */
export async function resetPassword(context: ServiceContext, token: string, password: string): Promise<PortalUser> {
  checkPasswordRules(password, 'newPassword');
  const passwordHash = await hashPassword(password);
  const userId = usable(token)
    ? await tokens.consumeAccountToken(context.store.db, token, 'reset-password')
    : undefined;
  const user = userId ? await consumers.findPortalUserById(context.store.db, userId) : undefined;
  if (!user) {
    throw new PorticoError('MGMT_VALIDATION', {
      field: 'token',
      reason: 'this reset link is invalid, used or expired',
    });
  }
  const residue = user.email_verified_at ? [] : await consumers.listApps(context.store.db, user.consumer_org_id);
  const takeOver = async (trx: Db) => {
    for (const app of residue) {
      await recordDeleted(trx, context.store.dialect, await consumers.deleteApp(trx, app.id), residue[0].id);
    }
    // Also cancels the account's other reset links.
    await consumers.setPortalUserPassword(trx, user.id, passwordHash);
    await tokens.markEmailVerified(trx, user.id);
    await deleteUserSessions(trx, user.id, { kinds: ['portal'] });
  };
  if (residue.length === 0) await context.store.transaction(takeOver);
  else await change(context, 'app-delete', takeOver, residue[0].id);
  return user;
}
