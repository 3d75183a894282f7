/**
 * The console's read-only user registries page: the org's registries (authentication URL,
 * LDAP) and the catalogs that enable them for `x-ibm-authentication-registry` and the
 * `user-security` policy. Changes go through the CLI or the REST API; the bind password is
 * never shown (only whether one is set).
 */
import type { FastifyInstance } from 'fastify';
import { table, when } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { UserRegistries } from '../../services/user-registries.ts';
import { signedInConsole, viewOf } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

const typeNames = { authurl: 'Authentication URL', ldap: 'LDAP' } as const;

export function registerUserRegistriesPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const service = new UserRegistries(deps.services);
  app.get('/user-registries', async (request, reply) => {
    const context = signedInConsole(request);
    const orgId = context.org.id;
    const [registries, enabled] = await Promise.all([
      service.list(orgId),
      Promise.all(
        context.catalogs.map(async (catalog) => ({
          catalog,
          rows: await service.listInCatalog(orgId, catalog.name),
        })),
      ),
    ]);
    const rows = registries.map((registry) => {
      const url = String(registry.configuration.url ?? '');
      const catalogs = enabled
        .filter(({ rows: inCatalog }) => inCatalog.some((row) => row.name === registry.name))
        .map(({ catalog }) => catalog.name);
      return [
        html`<strong>${registry.title}</strong><br /><code>${registry.name}</code>`,
        typeNames[registry.registry_type],
        html`<code>${url}</code>`,
        catalogs.length === 0 ? 'none' : catalogs.join(', '),
        when(registry.updated_at),
      ];
    });
    const main = html`<h1>User registries</h1>
      <p class="lede">
        Registries that check API callers' user names and passwords (basic security definitions and the
        <code>user-security</code> policy). An API can name a registry only in a catalog that enables it. Manage them
        with <code>portico user-registries</code> or the REST API.
      </p>
      ${rows.length === 0 ? html`<p>No user registries yet.</p>` : table('User registries', ['Registry', 'Type', 'URL', 'Enabled in catalogs', 'Updated'], rows)}`;
    return sendConsolePage(reply, viewOf(context), { title: 'User registries', section: 'registries', main });
  });
}
