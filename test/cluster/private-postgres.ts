/**
 * A PostgreSQL server of the test's own (initdb + pg_ctl from /usr/lib/postgresql/<n>/bin, run
 * as the `postgres` user), so a test can stop and start it: the machine's server is shared.
 * Fails with a clear message when it cannot be set up; never skips.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/portico`. */
  url: string;
  stop(): void;
  start(): void;
  dispose(): void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  if (versions.length === 0) throw new Error(`private PostgreSQL: no pg_ctl under ${root}/*/bin; install postgresql`);
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** initdb's a fresh cluster in a temp folder, starts it on a free port and creates `portico`. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'portico-pg-'));
  chmodSync(dir, 0o755);
  const ids = execFileSync('id', ['-u', 'postgres']).toString().trim();
  const gid = execFileSync('id', ['-g', 'postgres']).toString().trim();
  chownSync(dir, Number(ids), Number(gid));
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (tool: string, args: string[]) => {
    try {
      execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' });
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
      throw new Error(`private PostgreSQL: ${tool} failed: ${(error as Error).message}\n${stderr}`);
    }
  };
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query('create database portico');
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/portico`,
    stop: () => asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    dispose() {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already stopped.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
