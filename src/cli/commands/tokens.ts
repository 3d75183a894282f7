/** `portico password` and `portico tokens` (list, revoke): the signed-in provider user's own account. */
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, printJson, printLine as out } from '../client.ts';

interface Token {
  id: string;
  createdAt: string;
  expiresAt: string;
  current: boolean;
}

/** Registers `password` and `tokens`. */
export function registerAccountCommands(program: Command): void {
  program
    .command('password')
    .description('change your password; your other console sessions and tokens end, this one stays')
    .option('--current <password>', 'your password now (or PORTICO_PASSWORD)')
    .option('--new <password>', 'the new password (or PORTICO_NEW_PASSWORD)')
    .action(async (options: { current?: string; new?: string }) => {
      const currentPassword = options.current ?? process.env.PORTICO_PASSWORD;
      const newPassword = options.new ?? process.env.PORTICO_NEW_PASSWORD;
      if (!currentPassword)
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--current',
          reason: 'give --current or set PORTICO_PASSWORD',
        });
      if (!newPassword)
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--new',
          reason: 'give --new or set PORTICO_NEW_PASSWORD',
        });
      await api('PUT', '/api/me/password', { currentPassword, newPassword });
      out('password changed; your other sessions and tokens have ended');
    });

  const tokens = program.command('tokens').description('your management API tokens');
  tokens
    .command('list')
    .description('list your live tokens (id, created, expires; * marks the one this CLI uses)')
    .option('--json', 'print the answer as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = (await api('GET', '/api/tokens')) as Token[];
      if (options.json) return printJson(rows);
      for (const t of rows) out(`${t.id}\t${t.createdAt}\t${t.expiresAt}${t.current ? '\t*' : ''}`);
    });
  tokens
    .command('revoke <id>')
    .description('end one of your tokens at once')
    .action(async (id: string) => {
      await api('DELETE', `/api/tokens/${encodeURIComponent(id)}`);
      out(`revoked token ${id}`);
    });
}
