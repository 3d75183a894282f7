/**
 * `portico apis` (list, activate, deactivate) and `portico users` (add, list): the provider's
 * own APIs and users. Lists take `--json` for scripts.
 */
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, printJson, printLine as out } from '../client.ts';

type Row = Record<string, string>;

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
    .action(async (username: string, options: { email: string; password?: string }) => {
      const password = options.password ?? process.env.PORTICO_NEW_PASSWORD;
      if (!password) {
        const reason = 'give --password or set PORTICO_NEW_PASSWORD';
        throw new PorticoError('CONFIG_INVALID', { setting: '--password', reason });
      }
      await api('POST', '/api/users', { username, email: options.email, password });
      out(`added provider user ${username}`);
    });
  users
    .command('list')
    .description('list provider users')
    .option('--json', 'print the answer as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = (await api('GET', '/api/users')) as Array<{ username: string; email: string }>;
      if (options.json) return printJson(rows);
      for (const u of rows) out(`${u.username}\t${u.email}`);
    });
}
