/** `portico login` and `portico whoami`: the management server and token the other commands use. */
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, callServer, credentialsFile, loadCredentials, printLine as out } from '../client.ts';
import { saveCredentials } from '../client.ts';

/** Registers `login`. */
export function registerLoginCommand(program: Command): void {
  program
    .command('login')
    .description('sign in to a management server and keep the token in your user config')
    .requiredOption('--server <url>', 'management server, e.g. http://127.0.0.1:8082')
    .requiredOption('--username <name>', 'provider user')
    .option('--password <password>', 'password (or PORTICO_PASSWORD)')
    .option('--expires-in-days <n>', "days the token lives (default: the server's, 30)")
    .action(async (options: { server: string; username: string; password?: string; expiresInDays?: string }) => {
      const password = options.password ?? process.env.PORTICO_PASSWORD;
      if (!password)
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--password',
          reason: 'give --password or set PORTICO_PASSWORD',
        });
      const days = options.expiresInDays;
      if (days !== undefined && !/^[1-9]\d{0,3}$/.test(days))
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--expires-in-days',
          reason: 'must be a whole number of days',
        });
      const answer = (await callServer(options.server, 'POST', '/api/login', {
        body: { username: options.username, password, ...(days === undefined ? {} : { expiresInDays: Number(days) }) },
      })) as { token: string; expiresAt: string };
      const file = saveCredentials({ server: options.server, token: answer.token });
      out(`logged in to ${options.server} as ${options.username} until ${answer.expiresAt} (token saved in ${file})`);
    });
}

/** Registers `whoami`. */
export function registerWhoamiCommand(program: Command): void {
  program
    .command('whoami')
    .description('show the server and user you are logged in as')
    .action(async () => {
      const { server } = loadCredentials();
      const me = (await api('GET', '/api/me')) as { username: string };
      out(`${me.username} at ${server} (${credentialsFile()})`);
    });
}
