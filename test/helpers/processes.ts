/**
 * Real `portico` processes for tests, and a TCP relay that can be cut to simulate a
 * dependency going away.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));

/** What one `portico` command did: its exit code and everything it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one `portico` command to its end (60 s at most) with only `env` (plus `PATH`, and `HOME`
 * a temporary folder unless given): the credentials file the CLI keeps is the test's own.
 */
export function runPortico(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? tmpdir(), ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

export interface PorticoProcess {
  child: ChildProcess;
  /** `{gateway: url, status: url}` etc., as printed at start. */
  urls: Record<string, string>;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns `portico serve` with `env` (and `nodeArgs` for node itself); resolves once it printed the
 * URL of every role it runs.
 */
export function startPortico(
  args: string[],
  env: Record<string, string>,
  expect: string[],
  nodeArgs: string[] = [],
): Promise<PorticoProcess> {
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      PORTICO_LOG_LEVEL: 'warn',
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      // No drain on stop: a test that drains says so.
      PORTICO_DRAIN_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const urls: Record<string, string> = {};
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`portico did not start in time:\n${output}`)), 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // The origin only: `serve` prints the gateway once per catalog, with its /<org>/<catalog>/ prefix.
      const lines = output.matchAll(/^(gateway|status|management|portal)\s+(http:\/\/[^/\s]+)/gm);
      for (const match of lines) urls[match[1]] = match[2];
      if (expect.every((part) => urls[part])) {
        clearTimeout(timer);
        resolve({
          child,
          urls,
          output: () => output,
          async stop(signal = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`portico exited with ${code}:\n${output}`));
    });
  });
}

export interface Relay {
  port: number;
  /** Closes the listener and every relayed connection (the dependency "goes away"). */
  cut(): Promise<void>;
}

/** A TCP relay on a free port to `target`. */
export async function startRelay(targetPort: number, targetHost = '127.0.0.1'): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(targetPort, targetHost);
    sockets.add(inbound);
    sockets.add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    async cut() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
