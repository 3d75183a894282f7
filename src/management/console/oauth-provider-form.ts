/**
 * The console's OAuth provider forms: the fields of a native provider file (docs/oauth.md) as
 * inputs, read back into the same file the CLI and the REST API take, and the pasted-file form.
 * A refused submission is shown again as written, the error beside the field it names.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { csrfField, notice } from '../../web/components.ts';
import { formField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';

type File = Record<string, unknown>;

/** A refused submission: the form input it concerns ('' = the whole form) and what to say. */
export interface FormProblem {
  input: string;
  message: string;
}

// The provider file's field paths (as MGMT_VALIDATION names them) → the form's inputs.
const inputOf: Record<string, string> = {
  name: 'name',
  title: 'title',
  grants: 'grants',
  clients: 'clients',
  scopes: 'scopes',
  'native_provider.api.basePath': 'base_path',
  'native_provider.authorize_path': 'authorize_path',
  'native_provider.token_path': 'token_path',
  'native_provider.access_token_ttl': 'access_token_ttl',
  'native_provider.code_ttl': 'code_ttl',
  'native_provider.refresh_token.enabled': 'refresh_enabled',
  'native_provider.refresh_token.ttl': 'refresh_ttl',
  'native_provider.pkce.enabled': 'pkce_enabled',
  'native_provider.pkce.required': 'pkce_required',
  'native_provider.pkce.allow_plain': 'pkce_allow_plain',
  'native_provider.user_registry': 'user_registry',
};

/** The problem a refused write shows; errors that are not the user's to fix are rethrown. */
export function problemOf(error: unknown, fromFile: boolean): FormProblem {
  if (!(error instanceof PorticoError)) throw error;
  if (error.code === 'MGMT_VALIDATION') {
    const field = String(error.params.field ?? '');
    const input = fromFile ? 'file' : (inputOf[field.startsWith('scopes.') ? 'scopes' : field] ?? '');
    return { input, message: `${field}: ${String(error.params.reason ?? '')}` };
  }
  if (error.code === 'DEF_PARSE' || error.code === 'MGMT_CONFLICT')
    return { input: fromFile ? 'file' : '', message: error.message };
  throw error;
}

const grantChoices: Array<[string, string]> = [
  ['application', 'Client credentials (application)'],
  ['access_code', 'Authorization code (access_code)'],
  ['password', 'Resource owner password (password)'],
];
const clientChoices: Array<[string, string]> = [
  ['confidential', 'Confidential (a client secret)'],
  ['public', 'Public (PKCE, no secret)'],
];

function record(value: unknown): File {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as File) : {};
}

function values(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((item): item is string => typeof item === 'string');
}

/** A whole number of seconds as a number; anything else as written, for the file check to name. */
function secondsField(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  return /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function optionalText(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** `scope description` per line → `{scope: description}` (RFC 6749 scope tokens hold no spaces). */
function scopesField(text: string): File {
  const scopes: File = {};
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const [scope, ...words] = trimmed.split(/\s+/);
    scopes[scope] = words.join(' ');
  }
  return scopes;
}

/** The provider file a submitted form describes, over `base` (fields the form does not show are kept). */
export function fileFromForm(request: FastifyRequest, base: File): File {
  const field = (name: string) => formField(request, name);
  const native = { ...record(base.native_provider) };
  const api = { ...record(native.api), basePath: optionalText(field('base_path')) };
  const written: File = {
    ...base,
    name: base.name ?? field('name').trim(),
    title: field('title').trim(),
    grants: values(request, 'grants'),
    clients: values(request, 'clients'),
    scopes: scopesField(field('scopes')),
    native_provider: {
      ...native,
      api: api.basePath === undefined && Object.keys(api).length === 1 ? undefined : api,
      authorize_path: optionalText(field('authorize_path')),
      token_path: optionalText(field('token_path')),
      access_token_ttl: secondsField(field('access_token_ttl')),
      code_ttl: secondsField(field('code_ttl')),
      refresh_token: { enabled: field('refresh_enabled') === 'on', ttl: secondsField(field('refresh_ttl')) },
      pkce: {
        enabled: field('pkce_enabled') === 'on',
        required: field('pkce_required') === 'on',
        allow_plain: field('pkce_allow_plain') === 'on',
      },
      user_registry: optionalText(field('user_registry')),
    },
  };
  // Absent, not undefined: the stored file keeps only what was given.
  return JSON.parse(JSON.stringify(written)) as File;
}

export interface ProviderFormOptions {
  action: string;
  csrfToken: string;
  /** The file shown: the stored one, or the refused submission. */
  file: File;
  creating: boolean;
  registries: readonly string[];
  problem?: FormProblem;
}

function fieldProblem(problem: FormProblem | undefined, input: string): SafeHtml | '' {
  if (problem?.input !== input) return '';
  return html`<div class="notice error" role="alert" id="${input}-error">${problem.message}</div>`;
}

function described(problem: FormProblem | undefined, input: string, hint?: string): SafeHtml {
  const ids = [hint, problem?.input === input ? `${input}-error` : undefined].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${problem?.input === input ? html` aria-invalid="true"` : ''}`;
}

function textInput(
  id: string,
  label: string,
  value: unknown,
  options: { problem?: FormProblem; hint?: string; placeholder?: string; required?: boolean } = {},
): SafeHtml {
  const hintId = options.hint ? `${id}-hint` : undefined;
  return html`<div class="field">
    <label for="${id}">${label}</label
    ><input
      type="text"
      id="${id}"
      name="${id}"
      value="${value === undefined ? '' : String(value)}"
      ${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${options.required ? html` required` : ''}${described(options.problem, id, hintId)}
    />
    ${options.hint ? html`<p class="hint" id="${hintId}">${options.hint}</p>` : ''}${fieldProblem(options.problem, id)}
  </div>`;
}

function checkbox(id: string, label: string, checked: boolean, problem?: FormProblem): SafeHtml {
  return html`<div class="choice">
      <input type="checkbox" id="${id}" name="${id}" ${checked ? html`checked` : ''}${described(problem, id)} /><label
        for="${id}"
        >${label}</label
      >
    </div>
    ${fieldProblem(problem, id)}`;
}

function choices(
  name: string,
  legend: string,
  options: Array<[string, string]>,
  chosen: unknown,
  problem?: FormProblem,
) {
  const list = Array.isArray(chosen) ? chosen : [];
  return html`<fieldset${problem?.input === name ? html` aria-describedby="${name}-error"` : ''}>
    <legend>${legend}</legend>
    ${options.map(
      ([value, label]) =>
        html`<div class="choice">
          <input
            type="checkbox"
            id="${name}-${value}"
            name="${name}"
            value="${value}"
            ${list.includes(value) ? html` checked` : ''}
          /><label for="${name}-${value}">${label}</label>
        </div>`,
    )}${fieldProblem(problem, name)}
  </fieldset>`;
}

/** The provider as a form: every field of the file the console edits. */
export function providerForm(options: ProviderFormOptions): SafeHtml {
  const { file, problem } = options;
  const native = record(file.native_provider);
  const pkce = record(native.pkce);
  const refresh = record(native.refresh_token);
  const scopes = Object.entries(record(file.scopes)).map(([scope, text]) => `${scope} ${String(text)}`.trim());
  const registries = [
    ...new Set([...options.registries, ...(native.user_registry ? [String(native.user_registry)] : [])]),
  ];
  return html`<form method="post" action="${options.action}" class="stack" novalidate>
    ${csrfField(options.csrfToken)}<input type="hidden" name="source" value="form" />
    ${problem?.input === '' ? notice('error', problem.message) : ''}
    ${
      options.creating
        ? textInput('name', 'Name', file.name, {
            problem,
            required: true,
            hint: 'Lower-case letters, digits and -; APIs name the provider by it (x-ibm-oauth-provider).',
          })
        : html`<p>Name: <code>${String(file.name)}</code> (cannot change)</p>`
    }
    ${textInput('title', 'Title', file.title, { problem })}
    ${choices('grants', 'Grants', grantChoices, file.grants, problem)}
    ${choices('clients', 'Client types', clientChoices, file.clients ?? ['confidential'], problem)}
    <div class="field">
      <label for="scopes">Scopes</label
      ><textarea id="scopes" name="scopes" rows="4" ${described(problem, 'scopes', 'scopes-hint')}>
${scopes.join('\n')}</textarea>
      <p class="hint" id="scopes-hint">
        One per line: the scope, a space, its description. E.g. <code>read Read the catalog</code>.
      </p>
      ${fieldProblem(problem, 'scopes')}
    </div>
    <fieldset>
      <legend>Token lifetimes (seconds)</legend>
      ${textInput('access_token_ttl', 'Access token', native.access_token_ttl, { problem, placeholder: '3600' })}
      ${textInput('code_ttl', 'Authorization code', native.code_ttl, { problem, placeholder: '300' })}
      ${checkbox('refresh_enabled', 'Issue refresh tokens', refresh.enabled !== false, problem)}
      ${textInput('refresh_ttl', 'Refresh token', refresh.ttl, { problem, placeholder: '2682000' })}
    </fieldset>
    <fieldset>
      <legend>PKCE (RFC 7636)</legend>
      ${checkbox('pkce_enabled', 'Enabled', pkce.enabled !== false, problem)}
      ${checkbox('pkce_required', 'Required of every client', pkce.required === true, problem)}
      ${checkbox('pkce_allow_plain', 'Allow the plain method (S256 otherwise)', pkce.allow_plain === true, problem)}
    </fieldset>
    <div class="field">
      <label for="user_registry">User registry</label
      ><select id="user_registry" name="user_registry" ${described(problem, 'user_registry', 'user_registry-hint')}>
        <option value="">None (client credentials only)</option>
        ${registries.map((name) => html`<option value="${name}" ${name === native.user_registry ? html`selected` : ''}>${name}</option>`)}
      </select>
      <p class="hint" id="user_registry-hint">
        Signs resource owners in for the authorization code and password grants.
      </p>
      ${fieldProblem(problem, 'user_registry')}
    </div>
    <fieldset>
      <legend>Paths on the gateway</legend>
      ${textInput('base_path', 'Base path', record(native.api).basePath, { problem, placeholder: `/${String(file.name ?? 'name')}`, hint: 'Below /org/catalog; empty: / and the name.' })}
      ${textInput('authorize_path', 'Authorize path', native.authorize_path, { problem, placeholder: '/oauth2/authorize' })}
      ${textInput('token_path', 'Token path', native.token_path, { problem, placeholder: '/oauth2/token' })}
    </fieldset>
    <div class="actions">
      <button type="submit" class="button">${options.creating ? 'Create provider' : 'Save changes'}</button>
    </div>
  </form>`;
}

/** The pasted provider file form (YAML or JSON, as `portico oauth-providers create FILE` reads). */
export function providerFileForm(options: {
  action: string;
  csrfToken: string;
  text: string;
  creating: boolean;
  problem?: FormProblem;
}): SafeHtml {
  const { problem } = options;
  return html`<form method="post" action="${options.action}" class="stack" novalidate>
    ${csrfField(options.csrfToken)}<input type="hidden" name="source" value="file" />
    <div class="field">
      <label for="file">Provider file (YAML or JSON)</label
      ><textarea id="file" name="file" rows="14" spellcheck="false" ${described(problem, 'file', 'file-hint')}>
${options.text}</textarea>
      <p class="hint" id="file-hint">
        The shape <code>portico oauth-providers ${options.creating ? 'create' : 'update'} FILE</code> takes: name,
        title, grants, clients, scopes, native_provider
        (docs/oauth.md).${options.creating ? '' : ' It replaces the whole file; the name stays.'}
      </p>
      ${fieldProblem(problem, 'file')}
    </div>
    <div class="actions">
      <button type="submit" class="button secondary">
        ${options.creating ? 'Create from file' : 'Replace from file'}
      </button>
    </div>
  </form>`;
}
