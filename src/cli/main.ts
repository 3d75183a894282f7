/**
 * The `portico` command. `serve` and `demo` run the platform; every other command talks to a
 * management server over its REST API (like `apic` and decK), so the same CLI drives a laptop
 * or a cluster. Errors go to stderr, one line each; the exit code is 0 or 1.
 *
 * A command loads what it uses when it runs (the definition parsers, the WSDL reader, the store),
 * so a gateway cluster's primary and its workers, which run this file too, hold none of it.
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
import { fail } from './fail.ts';

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

program.parseAsync(process.argv).catch(fail);
