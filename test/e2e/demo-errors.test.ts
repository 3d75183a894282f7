import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

const bin = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/accessories/', import.meta.url));

function demo(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, 'demo', ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          PORTICO_PORTAL_PORT: '0',
          PORTICO_MANAGEMENT_PORT: '0',
          PORTICO_GATEWAY_PORT: '0',
          PORTICO_SAMPLE_PORTS: '0,0,0,0',
          ...env,
        },
        timeout: 90_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('portico demo refuses bad starts cleanly', () => {
  let dir: string;
  let blocker: Server;
  let port: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portico-demo-errors-'));
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test('a port already taken is one line naming the port and the setting, exit 1', async () => {
    const run = await demo(['--data-dir', join(dir, 'a')], { PORTICO_GATEWAY_PORT: String(port) });
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('portico:')).length,
      1,
    );
    assert.match(
      run.stderr,
      new RegExp(
        `^portico: Port ${port} is already in use; change PORTICO_GATEWAY_PORT or stop the other process$`,
        'm',
      ),
    );
    assert.doesNotMatch(run.stdout, /curl/);
  });

  test('a broken file in the examples gives the import error and the demo does not start half way', async () => {
    const broken = join(dir, 'examples');
    cpSync(examples, broken, { recursive: true });
    writeFileSync(
      join(broken, 'logistics.yaml'),
      'swagger: "2.0"\ninfo: {title: logistics, version: 2.0.0, x-ibm-name: logistics}\npaths: {}\nx-ibm-configuration: {assembly: {execute: [{invok: {}}]}}\n',
    );
    const run = await demo(['--data-dir', join(dir, 'b'), '--examples', broken], {});
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^portico: .*logistics\.yaml: \$\.x-ibm-configuration\.assembly\.execute\[0\]\.invok: .* \[unknown-policy\]$/m,
    );
    assert.doesNotMatch(run.stdout, /curl/);
  });
});
