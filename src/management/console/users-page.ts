/**
 * The console's users page: the organization's provider users with their roles (API Connect's
 * "Members"). A role with users:manage also adds users, changes roles and removes users; each
 * goes through the same services as `/api/users` and `portico users`, so the rules they keep
 * (only an owner gives or takes the owner role, an org keeps an owner) hold here too, and a
 * refusal is shown on the page in the services' own words.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PorticoError } from '../../errors.ts';
import { csrfField, notice, table, when } from '../../web/components.ts';
import { formErrorMessage, formField, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import { passwordRules } from '../../services/account-rules.ts';
import { providerRoles, rolePermissions } from '../../services/provider/roles.ts';
import type { ProviderRole, ProviderUser } from '../../store/schema.ts';
import { can, signedInConsole, viewOf } from './context.ts';
import type { SignedInConsole } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

const listPath = '/console/users';
const userPath = (username: string) => `${listPath}/${encodeURIComponent(username)}`;
const done: Record<string, string> = {
  added: 'User added: they can sign in to the console, the REST API and the CLI now.',
  role: "Role changed: it applies to the user's next request.",
  removed: "User removed: the user's console sessions and API tokens have ended.",
};

/** The add form's inputs, as the services' MGMT_VALIDATION and MGMT_CONFLICT name them. */
const addInputs = new Set(['username', 'email', 'password', 'role']);

interface AddValues {
  username: string;
  email: string;
  role: string;
}

/** A refused change: which input it concerns ('' = the whole form), the services' words, the status. */
interface Problem {
  input: string;
  message: string;
  status: number;
}

/** A refused submission shown again: the add form as written, or a notice about one user. */
type Refused = { add: AddValues; problem: Problem } | { username: string; action: string; problem: Problem };

/** The problem a refused change shows (web/form.ts's message); errors that are not the user's to fix are rethrown. */
function problemOf(error: unknown): Problem {
  const message = formErrorMessage(error);
  const { params, status } = error as PorticoError;
  const field = String(params.field ?? '');
  return { input: addInputs.has(field) ? field : '', message, status };
}

/** The add form's problem as a sentence (its messages start with a field label or a lower-case word, never a name). */
function sentence(problem: Problem): string {
  return `${problem.message[0].toUpperCase()}${problem.message.slice(1)}.`;
}

/** The inline message beside the input (the summary at the top of the page is the alert). */
function fieldProblem(problem: Problem | undefined, input: string): SafeHtml | '' {
  if (problem?.input !== input) return '';
  return html`<div class="notice error" id="${input}-error">${sentence(problem)}</div>`;
}

/**
 * What the page says first about a refused change, where it is seen and announced at once: the
 * add form's problem linked to its input (the form is below the list), or the user's action.
 */
function refusalSummary(refused: Refused | undefined): SafeHtml | '' {
  if (!refused) return '';
  if ('username' in refused)
    return notice('error', `Could not ${refused.action} ${refused.username}: ${refused.problem.message}.`);
  const { problem } = refused;
  if (problem.input === '') return notice('error', `Could not add the user: ${problem.message}.`);
  return notice('error', html`The user was not added: <a href="#${problem.input}">${sentence(problem)}</a>`);
}

function described(problem: Problem | undefined, input: string, hint?: string): SafeHtml {
  const ids = [hint, problem?.input === input ? `${input}-error` : undefined].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${problem?.input === input ? html` aria-invalid="true"` : ''}`;
}

function roleOptions(selected: string): SafeHtml {
  return html`${providerRoles.map((role) => html`<option value="${role}" ${role === selected ? html`selected` : ''}>${role}</option>`)}`;
}

/** The add-user form: the fields of `POST /api/users`, role default developer. */
function addForm(context: SignedInConsole, values: AddValues, problem?: Problem): SafeHtml {
  return html`<form method="post" action="${listPath}" class="stack" novalidate>
    ${csrfField(context.csrfToken)}
    <div class="field">
      <label for="username">Username</label
      ><input
        type="text"
        id="username"
        name="username"
        value="${values.username}"
        autocomplete="off"
        spellcheck="false"
        required
        ${described(problem, 'username', 'username-hint')}
      />
      <p class="hint" id="username-hint">
        Letters, digits and <code>. _ @ -</code>; it alone signs in to the console, the REST API and the CLI, so it is
        unique across organizations.
      </p>
      ${fieldProblem(problem, 'username')}
    </div>
    <div class="field">
      <label for="email">Email (optional)</label
      ><input
        type="email"
        id="email"
        name="email"
        value="${values.email}"
        autocomplete="off"
        ${described(problem, 'email')}
      />
      ${fieldProblem(problem, 'email')}
    </div>
    <div class="field">
      <label for="password">Password</label
      ><input
        type="password"
        id="password"
        name="password"
        autocomplete="new-password"
        required
        ${described(problem, 'password', 'password-hint')}
      />
      <p class="hint" id="password-hint">The user signs in with it; ${passwordRules}.</p>
      ${fieldProblem(problem, 'password')}
    </div>
    <div class="field">
      <label for="role">Role</label
      ><select id="role" name="role" ${described(problem, 'role')}>
        ${roleOptions(values.role)}
      </select>
      ${fieldProblem(problem, 'role')}
    </div>
    <div class="actions"><button type="submit" class="button">Add user</button></div>
  </form>`;
}

/** A user's role select and its submit button, labelled with the user's name for screen readers. */
function roleForm(context: SignedInConsole, user: ProviderUser, index: number): SafeHtml {
  return html`<form method="post" action="${userPath(user.username)}/role" class="filters">
    ${csrfField(context.csrfToken)}
    <div class="field">
      <label for="role-${index}" class="visually-hidden">Role of ${user.username}</label
      ><select id="role-${index}" name="role">
        ${roleOptions(user.role)}
      </select>
    </div>
    <button type="submit" class="button secondary small">
      Change role<span class="visually-hidden"> of ${user.username}</span>
    </button>
  </form>`;
}

function removeForm(context: SignedInConsole, user: ProviderUser): SafeHtml {
  const question =
    user.id === context.user.id
      ? `Remove your own user ${user.username}? You will be signed out at once.`
      : `Remove ${user.username}? Their console sessions and API tokens end at once.`;
  return html`<form method="post" action="${userPath(user.username)}/remove" data-confirm="${question}">
    ${csrfField(context.csrfToken)}<button type="submit" class="button danger small">
      Remove<span class="visually-hidden"> ${user.username}</span>
    </button>
  </form>`;
}

/** What each role may change, from the one role table (src/services/provider/roles.ts). */
function rolesTable(): SafeHtml {
  const rows = providerRoles.map((role) => {
    const manages = rolePermissions(role)
      .filter((permission) => permission.endsWith(':manage'))
      .map((permission) => permission.slice(0, -':manage'.length));
    return [html`<code>${role}</code>`, manages.length === 0 ? 'nothing (reads everything)' : manages.join(', ')];
  });
  return table('What each role may change', ['Role', 'Manages'], rows);
}

function doneNotice(request: FastifyRequest): SafeHtml | '' {
  const message = done[queryField(request, 'done')];
  return message ? notice('ok', message) : '';
}

/** Registers the users page and its add, role change and remove actions (users:manage). */
export function registerUsersPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  async function usersPage(reply: FastifyReply, context: SignedInConsole, top: SafeHtml | '', refused?: Refused) {
    const users = await services.listProviderUsers(context.org.id);
    const manages = can(context, 'users:manage');
    const rows = users.map((user, index) => [
      html`<strong>${user.username}</strong
        >${user.id === context.user.id ? html` <span class="hint">(you)</span>` : ''}`,
      user.email,
      html`<code>${user.role}</code>`,
      when(user.created_at),
      ...(manages ? [roleForm(context, user, index), removeForm(context, user)] : []),
    ]);
    const headers = ['Username', 'Email', 'Role', 'Added', ...(manages ? ['Change role', 'Remove'] : [])];
    const adding = refused && 'add' in refused ? refused : undefined;
    const main = html`<h1>Users</h1>
      ${top}${refusalSummary(refused)}
      <p class="lede">
        The provider users of ${context.org.title}: who may sign in to this console, the REST API and the CLI, and with
        which role. Only an owner gives or takes the owner role, and the organization keeps at least one owner.
      </p>
      ${table('Users', headers, rows)}
      ${
        manages
          ? html`<h2>Add a user</h2>
              ${addForm(context, adding?.add ?? { username: '', email: '', role: 'developer' }, adding?.problem)}`
          : html`<p class="hint">Adding users and changing roles needs the users:manage permission.</p>`
      }
      <h2>Roles</h2>
      ${rolesTable()}`;
    return sendConsolePage(reply, viewOf(context), {
      title: 'Users',
      section: 'users',
      main,
      status: refused?.problem.status,
    });
  }

  app.get('/users', { config: { permission: 'users:view' } }, async (request, reply) =>
    usersPage(reply, signedInConsole(request), doneNotice(request)),
  );

  const manage = { config: { permission: 'users:manage' as const } };

  app.post('/users', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const values = {
      username: formField(request, 'username').trim(),
      email: formField(request, 'email').trim(),
      role: formField(request, 'role') || 'developer',
    };
    try {
      // The service checks the role (MGMT_VALIDATION naming it), as it does for the REST API's body.
      const input = { ...values, role: values.role as ProviderRole, password: formField(request, 'password') };
      await services.addProviderUser(context.org.id, input, context.user);
    } catch (error) {
      return usersPage(reply, context, '', { add: values, problem: problemOf(error) });
    }
    return reply.redirect(`${listPath}?done=added`, 303);
  });

  app.post('/users/:username/role', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const { username } = request.params as { username: string };
    try {
      await services.changeProviderUserRole(context.user, username, formField(request, 'role'));
    } catch (error) {
      return usersPage(reply, context, '', { username, action: 'change the role of', problem: problemOf(error) });
    }
    return reply.redirect(`${listPath}?done=role`, 303);
  });

  app.post('/users/:username/remove', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const { username } = request.params as { username: string };
    try {
      await services.removeProviderUser(context.user, username);
    } catch (error) {
      return usersPage(reply, context, '', { username, action: 'remove', problem: problemOf(error) });
    }
    return reply.redirect(`${listPath}?done=removed`, 303);
  });
}
