/**
 * `portico user-registries`: user registries (authentication URL, LDAP) of the provider org and
 * the catalogs that enable them, as `apic user-registries:*` manages API Connect's.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, printJson, printLine as out } from '../client.ts';

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new PorticoError('CLI_FILE', { file, reason });
  }
}

interface RegistryView {
  name: string;
  title: string;
  registry_type: string;
  configuration: Record<string, unknown>;
}

/** The `/api/orgs/:org/...` prefix: `--org`, else the signed-in user's org. */
export async function orgPath(org: string | undefined): Promise<string> {
  const name = org ?? ((await api('GET', '/api/me')) as { org?: string }).org;
  if (!name)
    throw new PorticoError('CONFIG_INVALID', {
      setting: '--org',
      reason: 'the server did not say which org you belong to; give --org',
    });
  return `/api/orgs/${encodeURIComponent(name)}`;
}

/** A registry file (YAML or JSON): `{name, title, registry_type, configuration}`. */
async function registryFile(file: string): Promise<Record<string, unknown>> {
  const { parseText } = await import('../../definitions/parse-text.ts');
  const { value } = parseText(readText(file), basename(file));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PorticoError('CLI_FILE', {
      file,
      reason: 'is not a user registry object (name, registry_type, configuration)',
    });
  }
  return value as Record<string, unknown>;
}

const registryLine = (r: RegistryView) =>
  `${r.name}\t${r.registry_type}\t${r.title}\t${String(r.configuration.url ?? '')}`;
const orgOption = ['--org <name>', 'provider org (default: yours)'] as const;

export function registerUserRegistryCommands(program: Command): void {
  const userRegistries = program
    .command('user-registries')
    .description('user registries (authentication URL, LDAP) and the catalogs that enable them');
  userRegistries
    .command('create <file>')
    .description('create a user registry from a YAML or JSON file')
    .option(...orgOption)
    .action(async (file: string, options: { org?: string }) => {
      const created = (await api(
        'POST',
        `${await orgPath(options.org)}/user-registries`,
        await registryFile(file),
      )) as RegistryView;
      out(`created user registry ${created.name} (${created.registry_type})`);
    });
  userRegistries
    .command('update <file>')
    .description('replace the title and configuration of the registry the file names')
    .option(...orgOption)
    .action(async (file: string, options: { org?: string }) => {
      const { name, ...body } = await registryFile(file);
      if (typeof name !== 'string' || name === '')
        throw new PorticoError('CLI_FILE', { file, reason: 'names no registry (name)' });
      await api('PUT', `${await orgPath(options.org)}/user-registries/${encodeURIComponent(name)}`, body);
      out(`updated user registry ${name}`);
    });
  userRegistries
    .command('list')
    .description("list the org's user registries, or those a catalog enables (--catalog)")
    .option(...orgOption)
    .option('--catalog <name>', 'only the registries this catalog enables')
    .option('--json', 'print JSON')
    .action(async (options: { org?: string; catalog?: string; json?: boolean }) => {
      const where = options.catalog === undefined ? '' : `/catalogs/${encodeURIComponent(options.catalog)}`;
      const rows = (await api('GET', `${await orgPath(options.org)}${where}/user-registries`)) as RegistryView[];
      if (options.json) printJson(rows);
      else for (const r of rows) out(registryLine(r));
    });
  userRegistries
    .command('get <name>')
    .description('show one user registry (the LDAP bind password is never shown)')
    .option(...orgOption)
    .option('--json', 'print JSON')
    .action(async (name: string, options: { org?: string; json?: boolean }) => {
      const r = (await api(
        'GET',
        `${await orgPath(options.org)}/user-registries/${encodeURIComponent(name)}`,
      )) as RegistryView;
      const lines = [`name: ${r.name}`, `title: ${r.title}`, `registry_type: ${r.registry_type}`];
      for (const [key, value] of Object.entries(r.configuration)) lines.push(`configuration.${key}: ${String(value)}`);
      out(options.json ? JSON.stringify(r, null, 2) : lines.join('\n'));
    });
  userRegistries
    .command('delete <name>')
    .description('delete a user registry (catalogs stop enabling it)')
    .option(...orgOption)
    .action(async (name: string, options: { org?: string }) => {
      await api('DELETE', `${await orgPath(options.org)}/user-registries/${encodeURIComponent(name)}`);
      out(`deleted user registry ${name}`);
    });
  for (const verb of ['enable', 'disable'] as const) {
    userRegistries
      .command(`${verb} <name>`)
      .description(`${verb} a user registry for a catalog's APIs`)
      .option(...orgOption)
      .option('--catalog <name>', 'catalog', 'sandbox')
      .action(async (name: string, options: { org?: string; catalog: string }) => {
        const path = `${await orgPath(options.org)}/catalogs/${encodeURIComponent(options.catalog)}/user-registries/${encodeURIComponent(name)}`;
        await api(verb === 'enable' ? 'PUT' : 'DELETE', path);
        out(`user registry ${name} is ${verb}d in ${options.catalog}`);
      });
  }
}
