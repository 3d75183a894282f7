/**
 * `portico oauth-providers …`: native OAuth providers (docs/oauth.md) over the management REST
 * API, shaped like `apic oauth-providers:*`. Kept apart from main.ts, which is already long;
 * main.ts hands in its server call and file reader so both groups behave the same.
 */
import { basename } from 'node:path';
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';

export interface CliTools {
  api: (method: string, path: string, body?: unknown) => Promise<unknown>;
  /** `/api/orgs/<org>`: `--org`, else the signed-in user's org. */
  orgPath: (org: string | undefined) => Promise<string>;
  readText: (file: string) => string;
  out: (line: string) => void;
}

interface ProviderView {
  name: string;
  title: string;
  grants?: string[];
  scopes?: Record<string, string>;
  native_provider?: { api?: { basePath?: string } };
}

const orgOption = ['--org <name>', 'provider org (default: yours)'] as const;
const catalogOption = ['--catalog <name>', 'catalog', 'sandbox'] as const;

const basePathOf = (p: ProviderView) => p.native_provider?.api?.basePath ?? `/${p.name}`;
const providerLine = (p: ProviderView) =>
  `${p.name}\t${basePathOf(p)}\t${(p.grants ?? []).join(',')}\t${Object.keys(p.scopes ?? {}).join(' ')}\t${p.title}`;

function providerText(p: ProviderView): string {
  const lines = [
    `name: ${p.name}`,
    `title: ${p.title}`,
    `basePath: ${basePathOf(p)}`,
    `grants: ${(p.grants ?? []).join(', ')}`,
  ];
  for (const [scope, description] of Object.entries(p.scopes ?? {})) lines.push(`scope ${scope}: ${description}`);
  return lines.join('\n');
}

export function addOAuthProviderCommands(program: Command, cli: CliTools): void {
  const { api, orgPath, out } = cli;
  const providerPath = async (org: string | undefined, name: string) =>
    `${await orgPath(org)}/oauth-providers/${encodeURIComponent(name)}`;

  /** A provider file (YAML or JSON), the shape `apic oauth-providers:create` takes. */
  async function providerFile(file: string): Promise<Record<string, unknown>> {
    const { parseText } = await import('../../definitions/parse-text.ts');
    const { value } = parseText(cli.readText(file), basename(file));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new PorticoError('CLI_FILE', {
        file,
        reason: 'is not an OAuth provider object (name, grants, scopes, native_provider)',
      });
    }
    return value as Record<string, unknown>;
  }

  const group = program
    .command('oauth-providers')
    .description('native OAuth providers and the catalogs that enable them');
  group
    .command('create <file>')
    .description('create a native OAuth provider from a YAML or JSON provider file (a signing key is made with it)')
    .option(...orgOption)
    .action(async (file: string, options: { org?: string }) => {
      const created = (await api(
        'POST',
        `${await orgPath(options.org)}/oauth-providers`,
        await providerFile(file),
      )) as ProviderView;
      out(`created OAuth provider ${created.name} (${basePathOf(created)})`);
    });
  group
    .command('update <file>')
    .description('replace the provider file of the provider the file names')
    .option(...orgOption)
    .action(async (file: string, options: { org?: string }) => {
      const body = await providerFile(file);
      if (typeof body.name !== 'string' || body.name === '')
        throw new PorticoError('CLI_FILE', { file, reason: 'names no provider (name)' });
      await api('PUT', await providerPath(options.org, body.name), body);
      out(`updated OAuth provider ${body.name}`);
    });
  group
    .command('list')
    .description("list the org's OAuth providers, or those a catalog enables (--catalog)")
    .option(...orgOption)
    .option('--catalog <name>', 'only the providers this catalog enables')
    .option('--json', 'print JSON')
    .action(async (options: { org?: string; catalog?: string; json?: boolean }) => {
      const where = options.catalog === undefined ? '' : `/catalogs/${encodeURIComponent(options.catalog)}`;
      const rows = (await api('GET', `${await orgPath(options.org)}${where}/oauth-providers`)) as ProviderView[];
      if (options.json) out(JSON.stringify(rows, null, 2));
      else for (const p of rows) out(providerLine(p));
    });
  group
    .command('get <name>')
    .description('show one OAuth provider')
    .option(...orgOption)
    .option('--json', 'print JSON (the stored provider file)')
    .action(async (name: string, options: { org?: string; json?: boolean }) => {
      const p = (await api('GET', await providerPath(options.org, name))) as ProviderView;
      out(options.json ? JSON.stringify(p, null, 2) : providerText(p));
    });
  group
    .command('delete <name>')
    .description('delete an OAuth provider (catalogs stop enabling it)')
    .option(...orgOption)
    .action(async (name: string, options: { org?: string }) => {
      await api('DELETE', await providerPath(options.org, name));
      out(`deleted OAuth provider ${name}`);
    });
  group
    .command('rotate-key <name>')
    .description('sign new tokens with a new key; the old key verifies until its tokens expire')
    .option(...orgOption)
    .action(async (name: string, options: { org?: string }) => {
      const { kid } = (await api('POST', `${await providerPath(options.org, name)}/rotate-key`)) as {
        kid: string;
      };
      out(`OAuth provider ${name} signs with key ${kid}`);
    });
  for (const verb of ['enable', 'disable'] as const) {
    group
      .command(`${verb} <name>`)
      .description(
        `${verb} an OAuth provider in a catalog (its gateway endpoints ${verb === 'enable' ? 'appear' : 'go away'})`,
      )
      .option(...orgOption)
      .option(...catalogOption)
      .action(async (name: string, options: { org?: string; catalog: string }) => {
        const catalog = encodeURIComponent(options.catalog);
        await api(
          verb === 'enable' ? 'PUT' : 'DELETE',
          `${await orgPath(options.org)}/catalogs/${catalog}/oauth-providers/${encodeURIComponent(name)}`,
        );
        out(`OAuth provider ${name} is ${verb}d in ${options.catalog}`);
      });
  }
}
