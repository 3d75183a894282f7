/**
 * Target processes: started pinned to a core, awaited until they announce themselves (or
 * answer on their port), measured from /proc (CPU ticks, RSS of the whole process tree),
 * and stopped. Every wait is bounded.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { Announcement } from './announce.ts';

export interface Running {
  name: string;
  pid: number;
  port: number;
  announcement: Announcement & { pid?: number };
  /** Stops the process; resolves with its last `{"final":true}` line, if it printed one. */
  stop(): Promise<Record<string, unknown> | undefined>;
  /** The tail of what it wrote on stderr, for error messages. */
  stderr(): string;
}

export interface StartOptions {
  name: string;
  /** CPU list for taskset, e.g. '1'; undefined = not pinned. */
  cpus: string | undefined;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  /**
   * How the process says it is ready: its handshake line, a port that answers, or a stdout line
   * matching `pattern` (a program that is not a bench target, e.g. `portico serve`), whose
   * `port` group is the port it listens on.
   */
  ready: { kind: 'announce' } | { kind: 'port'; port: number } | { kind: 'line'; pattern: RegExp };
  timeoutMs?: number;
  /** Every stdout line, as it arrives (e.g. V8's `--trace-gc-nvp` records). */
  onLine?: (line: string) => void;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 6 s; a profile takes longer to write). */
  stopGraceMs?: number;
}

/** Starts a process and waits until it is ready. */
export async function startProcess(options: StartOptions): Promise<Running> {
  const argv =
    options.cpus === undefined
      ? [options.command, ...options.args]
      : ['taskset', '-c', options.cpus, options.command, ...options.args];
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  let final: Record<string, unknown> | undefined;
  const lines = createInterface({ input: child.stdout! });
  const announced = new Promise<Announcement>((resolve) => {
    lines.on('line', (line) => {
      options.onLine?.(line);
      if (options.ready.kind === 'line') {
        const port = options.ready.pattern.exec(line)?.groups?.port;
        if (port !== undefined) resolve({ port: Number(port), facts: { line } });
        return;
      }
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.ready === true) resolve(parsed as unknown as Announcement);
      else if (parsed.final === true) final = parsed;
    });
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`${options.name} exited (${code ?? signal}) before it was ready:\n${stderr}`)),
    ),
  );
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${options.name} not ready after ${timeoutMs} ms:\n${stderr}`)),
      timeoutMs,
    );
  });
  const ready =
    options.ready.kind !== 'port'
      ? announced
      : waitForPort(options.ready.port, timeoutMs).then(() => ({
          port: (options.ready as { port: number }).port,
        }));
  let announcement: Announcement;
  try {
    announcement = await Promise.race([ready, exited, timeout]);
  } catch (error) {
    await stopChild(child);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  exited.catch(() => {});
  return {
    name: options.name,
    pid: child.pid!,
    port: announcement.port,
    announcement,
    async stop() {
      await stopChild(child, options.stopGraceMs);
      return final;
    },
    stderr: () => stderr,
  };
}

async function stopChild(child: ChildProcess, graceMs = 6000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const grace = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(grace);
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`nothing answers on port ${port} after ${timeoutMs} ms`);
}

/** A free loopback port (bound then released: a tiny race, fine for a benchmark). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The process and all its descendants (nginx's workers are children of its master). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length && i < 1000; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8').trim();
        if (children) for (const child of children.split(/\s+/)) out.push(Number(child));
      } catch {
        // The task ended while we looked.
      }
    }
  }
  return out;
}

/** utime + stime of the process tree, in clock ticks (1/100 s): fields 14 and 15 of /proc/<pid>/stat. */
export function cpuTicks(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // The command name (field 2) may hold spaces; count fields after its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone.
    }
  }
  return ticks;
}

/** Resident memory of the process tree, in MiB (VmRSS). */
export function rssMb(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (match) kb += Number(match[1]);
    } catch {
      // Gone.
    }
  }
  return kb / 1024;
}
