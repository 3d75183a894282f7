/**
 * The load tools the suite needs — wrk (throughput), hey (fixed-rate latency), nginx (the
 * reverse-proxy peer) and taskset — installed from Debian with apt-get when missing
 * (shared/reference/tooling.md).
 */
import { spawnSync } from 'node:child_process';

const packages: Record<string, string> = {
  wrk: 'wrk',
  hey: 'hey',
  nginx: 'nginx-light',
  taskset: 'util-linux',
};

/** Whether `command` is on the PATH (or in /usr/sbin, where Debian puts nginx). */
export function hasCommand(command: string): boolean {
  return (
    spawnSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'ignore' }).status === 0
  );
}

/** Installs what is missing; throws with apt's output when that fails. */
export function ensureTools(): void {
  const missing = Object.keys(packages).filter((command) => !hasCommand(command));
  if (missing.length === 0) return;
  const names = [...new Set(missing.map((command) => packages[command]))];
  process.stderr.write(`bench: installing ${names.join(', ')} with apt-get\n`);
  const update = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8' });
  const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...names], {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (install.status !== 0)
    throw new Error(`apt-get install ${names.join(' ')} failed:\n${update.stderr}${install.stderr}`);
}

/** The nginx binary (Debian installs it in /usr/sbin, which may not be on PATH). */
export function nginxPath(): string {
  return spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).stdout.trim() || '/usr/sbin/nginx';
}
