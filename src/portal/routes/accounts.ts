/** Sign up, sign in, sign out and change password. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { csrfField, notice } from '../../web/components.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { formErrorMessage, formField, localPath, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import { newPasswordField } from '../password-field.ts';
import { sendPortalPage } from '../layout.ts';
import { endWebSession, startWebSession } from '../../web/web-session.ts';

interface SignInValues {
  email?: string;
  next?: string;
  error?: string;
  /** Just signed up: the neutral notice. */
  registered?: boolean;
  /** Just reset the password. */
  reset?: boolean;
}

function signInForm(context: PortalContext, values: SignInValues) {
  return html`<h1>Sign in</h1>
    ${values.registered ? notice('ok', context.mailConfigured ? registeredMailNotice : registeredNotice) : ''}
    ${values.reset ? notice('ok', resetNotice) : ''} ${values.error ? notice('error', values.error) : ''}
    ${values.next?.startsWith('/verify-email?') ? notice('info', verifyingNotice) : ''}
    <form method="post" action="/sign-in" class="stack">
      ${csrfField(context.csrfToken)}<input type="hidden" name="next" value="${values.next ?? '/'}" />
      <div class="field">
        <label for="email">Email</label
        ><input type="email" id="email" name="email" value="${values.email ?? ''}" autocomplete="username" required />
      </div>
      <div class="field">
        <label for="password">Password</label
        ><input type="password" id="password" name="password" autocomplete="current-password" required />
      </div>
      <div class="actions"><button type="submit" class="button">Sign in</button></div>
    </form>
    <p><a href="/forgot-password">Forgot password?</a></p>
    <p>New here? <a href="/sign-up">Create an account</a> for your organization.</p>`;
}

// The same words whether the email was new or already had an account (issue 12).
const registeredNotice = 'Thank you. Sign in with your email and password to continue.';
// Both cases get an email: a verification link, or a note to the owner that someone tried (issue 16).
const registeredMailNotice =
  'Thank you. We sent a message to the address you gave: ' +
  'open its link to verify your email. Sign in with your email and password to continue.';
// A verification link counts only in a session of its own account (routes/account-email.ts).
const verifyingNotice = 'Sign in with the account this link was sent for to verify its email address.';
const resetNotice =
  'Your password was changed and every session of your account was signed out. ' + 'Sign in with the new password.';

function signUpForm(
  context: PortalContext,
  values: { email?: string; name?: string; orgTitle?: string; error?: string },
) {
  return html`<h1>Create an account</h1>
    <p class="lede">
      An account creates your consumer organization; its apps get the client credentials you call the APIs with.
    </p>
    ${values.error ? notice('error', values.error) : ''}
    <form method="post" action="/sign-up" class="stack">
      ${csrfField(context.csrfToken)}
      <div class="field">
        <label for="name">Your name</label
        ><input type="text" id="name" name="name" value="${values.name ?? ''}" autocomplete="name" maxlength="100" />
      </div>
      <div class="field">
        <label for="orgTitle">Organization</label
        ><input
          type="text"
          id="orgTitle"
          name="orgTitle"
          value="${values.orgTitle ?? ''}"
          autocomplete="organization"
          maxlength="100"
          aria-describedby="org-hint"
        />
        <p class="hint" id="org-hint">Optional; your apps and subscriptions belong to it.</p>
      </div>
      <div class="field">
        <label for="email">Email</label
        ><input type="email" id="email" name="email" value="${values.email ?? ''}" autocomplete="email" required />
      </div>
      ${newPasswordField('password', 'Password')}
      <div class="actions"><button type="submit" class="button">Create account</button></div>
    </form>
    <p>Already registered? <a href="/sign-in">Sign in</a>.</p>`;
}

function passwordForm(context: PortalContext, values: { error?: string; done?: boolean; sent?: boolean }) {
  return html`<h1>Account</h1>
    ${values.sent ? notice('ok', `We sent a new verification link to ${context.user?.email ?? 'your address'}.`) : ''}
    <dl class="facts">
      <dt>Email</dt>
      <dd>${context.user?.email}</dd>
      <dt>Name</dt>
      <dd>${context.user?.name}</dd>
      <dt>Organization</dt>
      <dd>${context.org?.title}</dd>
    </dl>
    <h2>Change password</h2>
    ${values.error ? notice('error', values.error) : ''}${values.done ? notice('ok', 'Your password was changed. Other sessions of this account were signed out.') : ''}
    <form method="post" action="/account/password" class="stack">
      ${csrfField(context.csrfToken)}
      <div class="field">
        <label for="currentPassword">Current password</label
        ><input type="password" id="currentPassword" name="currentPassword" autocomplete="current-password" required />
      </div>
      ${newPasswordField('newPassword', 'New password')}
      <div class="actions"><button type="submit" class="button">Change password</button></div>
    </form>`;
}

/** The sign-in form again, with the one answer for a wrong email and a wrong password. */
function wrongCredentials(reply: FastifyReply, context: PortalContext, email: string, next: string): FastifyReply {
  const main = signInForm(context, { email, next, error: 'Wrong email or password.' });
  return sendPortalPage(reply, context, { title: 'Sign in', section: 'sign-in', status: 401, main });
}

/** Sends a visitor who is not signed in to the sign-in page, coming back here afterwards. */
export function redirectToSignIn(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
}

/** Registers the account routes. */
export function registerAccountRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;

  app.get('/sign-in', async (request, reply) => {
    const context = portalContext(request);
    const next = localPath(queryField(request, 'next'));
    if (signedIn(context)) return reply.redirect(next, 303);
    const flag = (name: string) => queryField(request, name) === '1';
    const flags = { registered: flag('registered'), reset: flag('reset') };
    const main = signInForm(context, { next, ...flags });
    return sendPortalPage(reply, context, { title: 'Sign in', section: 'sign-in', main });
  });

  app.post('/sign-in', async (request, reply) => {
    const context = portalContext(request);
    const email = formField(request, 'email').trim().toLowerCase();
    const next = localPath(formField(request, 'next'));
    let user;
    try {
      const password = formField(request, 'password');
      user = await services.authenticatePortalUser(context.catalog.catalogId, email, password, request.ip);
    } catch (error) {
      if (!(error instanceof PorticoError)) throw error;
      if (error.code === 'MGMT_TOO_MANY_ATTEMPTS') {
        reply.header('retry-after', String(error.params.seconds));
        const main = signInForm(context, { email, next, error: error.message });
        return sendPortalPage(reply, context, {
          title: 'Too many attempts',
          section: 'sign-in',
          status: 429,
          main,
        });
      }
      if (error.code !== 'MGMT_BAD_CREDENTIALS') throw error;
      return wrongCredentials(reply, context, email, next);
    }
    // The session stands only if the password it was granted on is still the account's: a reset
    // or change that landed while this one was checked has ended every session but this one.
    const passwordHash = user.password_hash;
    const unchanged = async () => (await services.portalUser(user.id))?.password_hash === passwordHash;
    if (!(await startWebSession(request, reply, deps.sessions, user.id, unchanged))) {
      return wrongCredentials(reply, context, email, next);
    }
    return reply.redirect(next, 303);
  });

  app.get('/sign-up', async (request, reply) => {
    const context = portalContext(request);
    if (signedIn(context)) return reply.redirect('/', 303);
    return sendPortalPage(reply, context, {
      title: 'Create an account',
      section: 'sign-up',
      main: signUpForm(context, {}),
    });
  });

  app.post('/sign-up', async (request, reply) => {
    const context = portalContext(request);
    const values = {
      email: formField(request, 'email'),
      name: formField(request, 'name'),
      orgTitle: formField(request, 'orgTitle'),
    };
    try {
      const mailRequest = { client: request.ip, portalTitle: context.catalog.title };
      const input = { ...values, password: formField(request, 'password') };
      await services.signUp(context.catalog.catalogId, input, mailRequest);
    } catch (error) {
      // A taken email answers exactly like a new account (issue 12): nobody learns who has one.
      const taken = error instanceof PorticoError && error.code === 'MGMT_CONFLICT' && error.params.field === 'email';
      if (!taken) {
        const main = signUpForm(context, { ...values, error: formErrorMessage(error) });
        return sendPortalPage(reply, context, {
          title: 'Create an account',
          section: 'sign-up',
          status: 400,
          main,
        });
      }
    }
    return reply.redirect('/sign-in?registered=1', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    await endWebSession(request, reply, deps.sessions);
    return reply.redirect('/', 303);
  });

  app.get('/account', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const flags = { done: queryField(request, 'changed') === '1', sent: queryField(request, 'sent') === '1' };
    return sendPortalPage(reply, context, {
      title: 'Account',
      section: 'account',
      main: passwordForm(context, flags),
    });
  });

  app.post('/account/password', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    try {
      const current = formField(request, 'currentPassword');
      await services.changePortalPassword(context.user.id, current, formField(request, 'newPassword'), request.ip);
    } catch (error) {
      // Limited like sign-in (per account): 429 with Retry-After, the form and what to wait for.
      const limited = error instanceof PorticoError && error.code === 'MGMT_TOO_MANY_ATTEMPTS';
      if (limited) reply.header('retry-after', String(error.params.seconds));
      const message = limited
        ? `Too many wrong current passwords; try again in ${String(error.params.seconds)} seconds.`
        : formErrorMessage(error);
      return sendPortalPage(reply, context, {
        title: 'Account',
        section: 'account',
        status: limited ? 429 : 400,
        main: passwordForm(context, { error: message }),
      });
    }
    // A changed password ends every session of the account; this browser gets a fresh one.
    await services.sessions.deleteUserSessions(context.user.id, 'portal');
    await startWebSession(request, reply, deps.sessions, context.user.id);
    return reply.redirect('/account?changed=1', 303);
  });
}
