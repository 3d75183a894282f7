/**
 * The `portico` command tree: every command, its options and its help, built without running
 * anything (main.ts parses the process's arguments with it; tests read its help in-process).
 */
import { Command } from 'commander';
import { callManagement as api, printLine } from './client.ts';
import { registerConsumerCommands } from './commands/consumers.ts';
import { readText, registerDefinitionCommands } from './commands/definitions.ts';
import { addOAuthProviderCommands } from './commands/oauth-providers.ts';
import { registerApiCommands, registerUserCommands } from './commands/provider.ts';
import { registerRunCommands } from './commands/run.ts';
import { registerLoginCommand, registerWhoamiCommand } from './commands/session.ts';
import { registerAccountCommands } from './commands/tokens.ts';
import { orgPath, registerUserRegistryCommands } from './commands/user-registries.ts';

/** A fresh command tree. */
export function porticoProgram(): Command {
  const program = new Command();
  program
    .name('portico')
    .description('Portico API management: gateway, management API and developer portal')
    .showHelpAfterError();

  // The order of `portico --help`.
  registerRunCommands(program);
  registerLoginCommand(program);
  registerDefinitionCommands(program);
  registerApiCommands(program);
  registerConsumerCommands(program);
  registerUserCommands(program);
  registerUserRegistryCommands(program);
  addOAuthProviderCommands(program, { api, orgPath, readText, out: printLine });
  registerWhoamiCommand(program);
  registerAccountCommands(program);
  return program;
}
