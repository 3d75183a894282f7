/**
 * The console's native OAuth providers (issue 14): the org's providers and the catalogs that
 * enable them, created from a form or a pasted provider file (the shape the CLI and the REST API
 * take), viewed, edited, deleted, and enabled or disabled per catalog. Everything goes through
 * the OAuthProviders service, so a change reaches the gateways as one from the CLI does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { parseText } from '../../definitions/parse-text.ts';
import { breadcrumbs, buttonForm, notice, table, when } from '../../web/components.ts';
import { formField, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import { OAuthProviders } from '../../services/oauth-providers.ts';
import type { ProviderSummary } from '../../services/oauth-providers.ts';
import { UserRegistries } from '../../services/user-registries.ts';
import { can, signedInConsole, viewOf } from './context.ts';
import type { SignedInConsole } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';
import { fileFromForm, problemOf, providerFileForm, providerForm } from './oauth-provider-form.ts';
import type { FormProblem } from './oauth-provider-form.ts';

const listPath = '/console/oauth-providers';
const providerPath = (name: string) => `${listPath}/${encodeURIComponent(name)}`;
const done: Record<string, string> = {
  created: 'Provider created.',
  saved: 'Changes saved.',
  enabled: 'Provider enabled in the catalog: its endpoints are on the gateway.',
  disabled: 'Provider disabled in the catalog.',
  deleted: 'Provider deleted.',
};

const grantWords: Record<string, string> = {
  application: 'client credentials',
  access_code: 'authorization code',
  password: 'password',
};

function basePath(provider: ProviderSummary): string {
  const native = (provider.native_provider ?? {}) as { api?: { basePath?: string } };
  return native.api?.basePath ?? `/${provider.name}`;
}

/** The stored file as the CLI would take it back (no timestamps). */
function fileText(provider: ProviderSummary): string {
  const { created_at: _created, updated_at: _updated, ...file } = provider;
  return JSON.stringify(file, null, 2);
}

function doneNotice(request: FastifyRequest): SafeHtml | '' {
  const message = done[queryField(request, 'done')];
  return message ? notice('ok', message) : '';
}

export function registerOAuthProvidersPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const providers = new OAuthProviders(deps.services);
  const registries = new UserRegistries(deps.services);

  async function enabledIn(context: SignedInConsole): Promise<Map<string, string[]>> {
    const byProvider = new Map<string, string[]>();
    for (const catalog of context.catalogs) {
      for (const row of await providers.listInCatalog(context.org.id, catalog.name)) {
        byProvider.set(row.name, [...(byProvider.get(row.name) ?? []), catalog.name]);
      }
    }
    return byProvider;
  }

  async function registryNames(context: SignedInConsole): Promise<string[]> {
    return (await registries.list(context.org.id)).map((registry) => registry.name);
  }

  /** Reads a submission: the pasted file, or the form over `base`. */
  function submitted(request: FastifyRequest, base: Record<string, unknown>) {
    if (formField(request, 'source') !== 'file') return { fromFile: false, file: fileFromForm(request, base) };
    const { value } = parseText(formField(request, 'file'), 'the provider file');
    return { fromFile: true, file: value };
  }

  async function newPage(reply: FastifyReply, context: SignedInConsole, refused?: RefusedWrite) {
    const action = listPath;
    const main = html`${breadcrumbs([['OAuth providers', listPath], ['New provider']])}
      <h1>New OAuth provider</h1>
      <p class="lede">A native provider issues tokens for the org's APIs once a catalog enables it.</p>
      <h2>From a form</h2>
      ${providerForm({
        action,
        csrfToken: context.csrfToken,
        file: refused?.fromFile === false ? refused.file : {},
        creating: true,
        registries: await registryNames(context),
        problem: refused?.fromFile === false ? refused.problem : undefined,
      })}
      <h2>From a provider file</h2>
      ${providerFileForm({
        action,
        csrfToken: context.csrfToken,
        text: refused?.fromFile ? refused.text : '',
        creating: true,
        problem: refused?.fromFile ? refused.problem : undefined,
      })}`;
    const status = refused?.problem ? refused.status : undefined;
    return sendConsolePage(reply, viewOf(context), { title: 'New OAuth provider', section: 'oauth', main, status });
  }

  async function providerPage(
    reply: FastifyReply,
    context: SignedInConsole,
    provider: ProviderSummary,
    top: SafeHtml | '',
    refused?: RefusedWrite,
    status = refused?.status,
  ) {
    const enabled = (await enabledIn(context)).get(provider.name) ?? [];
    const manages = can(context, 'oauth-providers:manage');
    const catalogRows = context.catalogs.map((catalog) => {
      const on = enabled.includes(catalog.name);
      const action = `${providerPath(provider.name)}/catalogs/${encodeURIComponent(catalog.name)}/${on ? 'disable' : 'enable'}`;
      return [
        html`${catalog.title} (<code>${catalog.name}</code>)`,
        on ? 'Enabled' : 'Not enabled',
        manages
          ? buttonForm(action, context.csrfToken, on ? 'Disable' : 'Enable', {
              kind: on ? 'secondary' : undefined,
              small: true,
            })
          : '',
      ];
    });
    const grants = ((provider.grants ?? []) as string[]).map((grant) => grantWords[grant] ?? grant).join(', ');
    const main = html`${breadcrumbs([['OAuth providers', listPath], [provider.title]])}
      <h1>${provider.title}</h1>
      ${top}
      <dl class="facts">
        <dt>Name</dt>
        <dd><code>${provider.name}</code></dd>
        <dt>Base path</dt>
        <dd><code>${basePath(provider)}</code></dd>
        <dt>Grants</dt>
        <dd>${grants}</dd>
        <dt>Scopes</dt>
        <dd>${Object.keys((provider.scopes ?? {}) as object).join(' ')}</dd>
        <dt>Updated</dt>
        <dd>${when(provider.updated_at)}</dd>
      </dl>
      <h2>Catalogs</h2>
      ${table('Catalogs that enable this provider', ['Catalog', 'State', 'Change'], catalogRows)}
      ${manages ? await changeForms(context, provider, refused) : ''}`;
    return sendConsolePage(reply, viewOf(context), { title: provider.title, section: 'oauth', main, status });
  }

  /** The edit, replace and delete forms of a provider's page (for a role with oauth-providers:manage). */
  async function changeForms(context: SignedInConsole, provider: ProviderSummary, refused?: RefusedWrite) {
    return html`<h2>Edit</h2>
      ${providerForm({
        action: providerPath(provider.name),
        csrfToken: context.csrfToken,
        file: refused?.fromFile === false ? refused.file : provider,
        creating: false,
        registries: await registryNames(context),
        problem: refused?.fromFile === false ? refused.problem : undefined,
      })}
      <h2>Replace from a provider file</h2>
      ${providerFileForm({
        action: providerPath(provider.name),
        csrfToken: context.csrfToken,
        text: refused?.fromFile ? refused.text : fileText(provider),
        creating: false,
        problem: refused?.fromFile ? refused.problem : undefined,
      })}
      <h2>Delete</h2>
      <p>Catalogs stop enabling it and its endpoints leave the gateway; tokens it issued are no longer accepted.</p>
      ${buttonForm(`${providerPath(provider.name)}/delete`, context.csrfToken, 'Delete provider', {
        kind: 'danger',
        confirm: `Delete the OAuth provider ${provider.name}?`,
      })}`;
  }

  app.get('/oauth-providers', async (request, reply) => {
    const context = signedInConsole(request);
    const [list, enabled] = await Promise.all([providers.list(context.org.id), enabledIn(context)]);
    const rows = list.map((provider) => [
      html`<a href="${providerPath(provider.name)}"><strong>${provider.title}</strong></a
        ><br /><code>${provider.name}</code>`,
      html`<code>${basePath(provider)}</code>`,
      ((provider.grants ?? []) as string[]).map((grant) => grantWords[grant] ?? grant).join(', '),
      Object.keys((provider.scopes ?? {}) as object).join(' '),
      (enabled.get(provider.name) ?? []).join(', ') || 'none',
      when(provider.updated_at),
    ]);
    const main = html`<h1>OAuth providers</h1>
      ${doneNotice(request)}
      <p class="lede">
        Native OAuth providers issue access tokens for APIs whose <code>oauth2</code> security definitions name them
        (<code>x-ibm-oauth-provider</code>). A catalog must enable a provider for its endpoints to be on the gateway.
      </p>
      ${can(context, 'oauth-providers:manage') ? html`<p><a class="button" href="${listPath}/new">New provider</a></p>` : ''}
      ${
        rows.length === 0
          ? html`<p>No OAuth providers yet.</p>`
          : table(
              'OAuth providers',
              ['Provider', 'Base path', 'Grants', 'Scopes', 'Enabled in catalogs', 'Updated'],
              rows,
            )
      }`;
    return sendConsolePage(reply, viewOf(context), { title: 'OAuth providers', section: 'oauth', main });
  });

  const manage = { config: { permission: 'oauth-providers:manage' as const } };
  app.get('/oauth-providers/new', manage, async (request, reply) => newPage(reply, signedInConsole(request)));

  app.post('/oauth-providers', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const fromFile = formField(request, 'source') === 'file';
    let file: unknown = {};
    try {
      file = submitted(request, {}).file;
      const created = await providers.create(context.org.id, file);
      return reply.redirect(`${providerPath(created.name)}?done=created`, 303);
    } catch (error) {
      return newPage(reply, context, refusedWrite(error, fromFile, file, formField(request, 'file')));
    }
  });

  app.get('/oauth-providers/:name', async (request, reply) => {
    const context = signedInConsole(request);
    const provider = await providers.get(context.org.id, (request.params as { name: string }).name);
    return providerPage(reply, context, provider, doneNotice(request));
  });

  app.post('/oauth-providers/:name', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const provider = await providers.get(context.org.id, (request.params as { name: string }).name);
    const fromFile = formField(request, 'source') === 'file';
    let file: unknown = {};
    try {
      const { created_at: _created, updated_at: _updated, ...stored } = provider;
      file = submitted(request, stored).file;
      if (typeof file !== 'object' || file === null || Array.isArray(file))
        throw new PorticoError('MGMT_VALIDATION', { field: 'provider', reason: 'an object (the provider file)' });
      await providers.update(context.org.id, provider.name, file as Record<string, unknown>);
      return reply.redirect(`${providerPath(provider.name)}?done=saved`, 303);
    } catch (error) {
      return providerPage(
        reply,
        context,
        provider,
        '',
        refusedWrite(error, fromFile, file, formField(request, 'file')),
      );
    }
  });

  app.post('/oauth-providers/:name/delete', manage, async (request, reply) => {
    const context = signedInConsole(request);
    await providers.delete(context.org.id, (request.params as { name: string }).name);
    return reply.redirect(`${listPath}?done=deleted`, 303);
  });

  app.post('/oauth-providers/:name/catalogs/:catalog/:action', manage, async (request, reply) => {
    const context = signedInConsole(request);
    const { name, catalog, action } = request.params as { name: string; catalog: string; action: string };
    if (action !== 'enable' && action !== 'disable')
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'action', id: action });
    const provider = await providers.get(context.org.id, name);
    try {
      if (action === 'enable') await providers.enable(context.org.id, catalog, name);
      else await providers.disable(context.org.id, catalog, name);
    } catch (error) {
      if (!(error instanceof PorticoError) || error.code !== 'MGMT_CONFLICT') throw error;
      return providerPage(reply, context, provider, notice('error', error.message), undefined, 409);
    }
    return reply.redirect(`${providerPath(name)}?done=${action}d`, 303);
  });
}

interface RefusedWrite {
  fromFile: boolean;
  file: Record<string, unknown>;
  text: string;
  problem: FormProblem;
  status: number;
}

function refusedWrite(error: unknown, fromFile: boolean, file: unknown, text: string): RefusedWrite {
  const problem = problemOf(error, fromFile);
  const shown =
    typeof file === 'object' && file !== null && !Array.isArray(file) ? (file as Record<string, unknown>) : {};
  return { fromFile, file: shown, text, problem, status: (error as PorticoError).status };
}
