/**
 * The emailed links of portal accounts: verify an address (and ask for the link again), and
 * "forgot password" → reset by link. A verification link works only in a session of its own
 * account, so whoever opens it must know the password as well as read the mailbox. What an
 * anonymous visitor is told never depends on whether an account exists; every POST answers
 * with a redirect (Post/Redirect/Get).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { csrfField, notice } from '../../web/components.ts';
import { formErrorMessage, formField, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import { newPasswordField } from '../password-field.ts';
import { endWebSession } from '../../web/web-session.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { sendPortalPage } from '../layout.ts';
import { redirectToSignIn } from './accounts.ts';

const noMail =
  'Password reset by email is not available: this portal has no mail server configured. ' +
  'Ask the API provider to reset your password.';

const resetSent =
  'If an account uses this address, we sent it a link to choose a new password. ' + 'The link expires in 1 hour.';

function forgotForm(context: PortalContext, sent: boolean) {
  if (!context.mailConfigured)
    return html`<h1>Forgot password</h1>
      ${notice('info', noMail)}`;
  return html`<h1>Forgot password</h1>
    ${sent ? notice('ok', resetSent) : ''}
    <p class="lede">Enter the email address of your account; we will email you a link to choose a new password.</p>
    <form method="post" action="/forgot-password" class="stack">
      ${csrfField(context.csrfToken)}
      <div class="field">
        <label for="email">Email</label>
        <input type="email" id="email" name="email" autocomplete="username" required />
      </div>
      <div class="actions"><button type="submit" class="button">Email me a link</button></div>
    </form>
    <p><a href="/sign-in">Back to sign in</a></p>`;
}

function resetForm(context: PortalContext, token: string, error?: string) {
  return html`<h1>Choose a new password</h1>
    ${error ? notice('error', error) : ''}
    <form method="post" action="/reset-password" class="stack">
      ${csrfField(context.csrfToken)}<input type="hidden" name="token" value="${token}" />
      ${newPasswordField('newPassword', 'New password')}
      <div class="actions"><button type="submit" class="button">Set password</button></div>
    </form>
    <p class="hint">Setting a new password signs out every session of your account.</p>`;
}

const verifiedNotice =
  'Thank you: your email address is verified. ' +
  'You can now see every product offered to developers and subscribe your apps.';

const otherAccount =
  'You are signed in with another account. Sign out, open the link again and sign in with the account ' +
  'whose address received it.';

const deadLink = html`<h1>This link does not work</h1>
  <p class="lede">
    The link is invalid, was already used, or has expired. Links are good once; a reset link for 1 hour, a verification
    link for 24 hours.
  </p>`;

function sendDeadLink(reply: FastifyReply, context: PortalContext, next: 'reset' | 'verify'): FastifyReply {
  const onwards =
    next === 'reset'
      ? html`<p><a class="button" href="/forgot-password">Ask for a new reset link</a></p>`
      : html`<p>Sign in and use <strong>Send the link again</strong> for a new verification link.</p>`;
  return sendPortalPage(reply, context, {
    title: 'Link not valid',
    status: 400,
    main: html`${deadLink}${onwards}`,
  });
}

/** Registers the verification and password-reset routes. */
export function registerAccountEmailRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;
  const mailRequest = (context: PortalContext, client?: string) => ({
    client,
    portalTitle: context.catalog.title,
  });

  app.get('/verify-email', async (request, reply) => {
    const context = portalContext(request);
    const userId = signedIn(context) ? context.user.id : undefined;
    const outcome = await services.verifyEmail(queryField(request, 'token'), userId);
    if (outcome === 'dead') return sendDeadLink(reply, context, 'verify');
    if (outcome === 'sign-in') return redirectToSignIn(request, reply);
    if (outcome === 'other-account') {
      const main = html`<h1>This link is for another account</h1>
        ${notice('error', otherAccount)}`;
      return sendPortalPage(reply, context, { title: 'Link for another account', status: 403, main });
    }
    // The banner of this very page must not still ask for verification.
    if (context.user) context.user = (await services.portalUser(context.user.id)) ?? context.user;
    const main = html`<h1>Email address verified</h1>
      ${notice('ok', verifiedNotice)}
      <p><a class="button" href="/products">Browse API products</a></p>`;
    return sendPortalPage(reply, context, { title: 'Email verified', main });
  });

  app.post('/account/verification', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    try {
      await services.resendVerification(context.user, mailRequest(context));
    } catch (error) {
      if (!(error instanceof PorticoError) || error.code !== 'MGMT_TOO_MANY_EMAILS') throw error;
      reply.header('retry-after', String(error.params.seconds));
      const main = html`<h1>Too many emails</h1>
        ${notice('error', error.message)}`;
      return sendPortalPage(reply, context, {
        title: 'Too many emails',
        section: 'account',
        status: 429,
        main,
      });
    }
    return reply.redirect('/account?sent=1', 303);
  });

  app.get('/forgot-password', async (request, reply) => {
    const context = portalContext(request);
    const main = forgotForm(context, queryField(request, 'sent') === '1');
    return sendPortalPage(reply, context, { title: 'Forgot password', section: 'sign-in', main });
  });

  app.post('/forgot-password', async (request, reply) => {
    const context = portalContext(request);
    const email = formField(request, 'email');
    await services.requestPasswordReset(context.catalog.catalogId, email, mailRequest(context, request.ip));
    return reply.redirect('/forgot-password?sent=1', 303);
  });

  app.get('/reset-password', async (request, reply) => {
    const context = portalContext(request);
    const token = queryField(request, 'token');
    if (!(await services.resetLinkIsLive(token))) return sendDeadLink(reply, context, 'reset');
    const main = resetForm(context, token);
    return sendPortalPage(reply, context, { title: 'Choose a new password', section: 'sign-in', main });
  });

  app.post('/reset-password', async (request, reply) => {
    const context = portalContext(request);
    const token = formField(request, 'token');
    try {
      await services.resetPassword(token, formField(request, 'newPassword'));
    } catch (error) {
      if (error instanceof PorticoError && error.code === 'MGMT_VALIDATION' && error.params.field === 'token') {
        return sendDeadLink(reply, context, 'reset');
      }
      const main = resetForm(context, token, formErrorMessage(error));
      return sendPortalPage(reply, context, {
        title: 'Choose a new password',
        section: 'sign-in',
        status: 400,
        main,
      });
    }
    // Every session of the account has ended on the server; this browser's cookie goes too.
    await endWebSession(request, reply, deps.sessions);
    return reply.redirect('/sign-in?reset=1', 303);
  });
}
