/**
 * `portico apis` (list, activate, deactivate) and `portico users` (add, list, set-role, remove):
 * the provider's own APIs and users with their roles. Lists take `--json` for scripts.
 */
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, printJson, printLine as out } from '../client.ts';

type Row = Record<string, string>;

const roleNames = 'owner, administrator, developer, community-manager, viewer';

export function registerApiCommands(program: Command): void {
  const apis = program.command('apis').description('list, activate or deactivate APIs');
  apis
    .command('list')
    .description('list APIs')
    .option('--json', 'print the answer as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = (await api('GET', '/api/apis')) as Array<Record<'name' | 'version' | 'state' | 'basePath', string>>;
      if (options.json) return printJson(rows);
      for (const a of rows) out(`${a.name}:${a.version}\t${a.state}\t${a.basePath}`);
    });
  for (const verb of ['activate', 'deactivate'] as const) {
    apis
      .command(`${verb} <api>`)
      .description(`${verb === 'activate' ? 'bring an API online' : 'take an API offline'} (name:version)`)
      .action(async (ref: string) => {
        const [name, version] = ref.split(':');
        if (!name || !version) {
          throw new PorticoError('CONFIG_INVALID', { setting: 'api', reason: 'expected name:version' });
        }
        const path = `/api/apis/${encodeURIComponent(name)}/${encodeURIComponent(version)}/${verb}`;
        const result = (await api('POST', path)) as Row;
        out(`api ${name}:${version} is ${result.state}`);
      });
  }
}

export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('provider users');
  users
    .command('add <username>')
    .description('add a provider user')
    .option('--email <email>', 'email', '')
    .option('--password <password>', 'password (or PORTICO_NEW_PASSWORD)')
    .option('--role <role>', `role: ${roleNames} (default developer)`)
    .action(async (username: string, options: { email: string; password?: string; role?: string }) => {
      const password = options.password ?? process.env.PORTICO_NEW_PASSWORD;
      if (!password) {
        const reason = 'give --password or set PORTICO_NEW_PASSWORD';
        throw new PorticoError('CONFIG_INVALID', { setting: '--password', reason });
      }
      const role = options.role === undefined ? {} : { role: options.role };
      await api('POST', '/api/users', { username, email: options.email, password, ...role });
      out(`added provider user ${username}`);
    });
  users
    .command('set-role <username> <role>')
    .description(`change a provider user's role (${roleNames})`)
    .action(async (username: string, role: string) => {
      const user = (await api('PATCH', `/api/users/${encodeURIComponent(username)}`, { role })) as Row;
      out(`provider user ${user.username} is now ${user.role}`);
    });
  users
    .command('remove <username>')
    .description('remove a provider user; its console sessions and API tokens end at once')
    .action(async (username: string) => {
      await api('DELETE', `/api/users/${encodeURIComponent(username)}`);
      out(`removed provider user ${username}`);
    });
  users
    .command('list')
    .description('list provider users')
    .option('--json', 'print the answer as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = (await api('GET', '/api/users')) as Array<{ username: string; email: string; role: string }>;
      if (options.json) return printJson(rows);
      for (const u of rows) out(`${u.username}\t${u.email}\t${u.role}`);
    });
}
