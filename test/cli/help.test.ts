/**
 * Every `portico` command answers `--help`: read in-process from the command tree main.ts parses
 * with (src/cli/program.ts), every command and group of it rather than a list that falls behind;
 * and through the real binary for the top level and one nested command (exit 0, on stdout).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import type { Command } from 'commander';
import { porticoProgram } from '../../src/cli/program.ts';

const bin = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));

/** Every command under `command`, with its path of names. */
function allCommands(command: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  return command.commands.flatMap((sub) => [
    { path: [...path, sub.name()], command: sub },
    ...allCommands(sub, [...path, sub.name()]),
  ]);
}

test('every command and group has a description and a usage line naming its whole path', () => {
  const commands = allCommands(porticoProgram());
  assert.ok(commands.length >= 40, `only ${commands.length} commands found`);
  for (const { path, command } of commands) {
    const name = path.join(' ');
    assert.ok(command.description().length > 0, `${name} has no description`);
    const help = command.helpInformation();
    assert.ok(help.startsWith(`Usage: portico ${name}`), `${name}: ${help.split('\n')[0]}`);
  }
  // The groups the consumer onboarding and the OAuth providers added are in the tree.
  const names = new Set(commands.map(({ path }) => path.join(' ')));
  for (const name of ['consumer-orgs get', 'apps create', 'subscriptions create', 'oauth-providers rotate-key'])
    assert.ok(names.has(name), `no ${name}`);
});

test('the binary answers --help with exit 0 on stdout, at the top and for a nested command', async () => {
  const run = promisify(execFile);
  const env = { PATH: process.env.PATH ?? '' };
  const top = await run(process.execPath, [bin, '--help'], { env });
  assert.match(top.stdout, /^Usage: portico \[options\] \[command\]/);
  assert.match(top.stdout, /^ {2}serve /m);
  const nested = await run(process.execPath, [bin, 'apps', 'create', '--help'], { env });
  assert.match(nested.stdout, /^Usage: portico apps create/);
});
