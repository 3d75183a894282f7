/**
 * `portico serve` and `portico demo`: the commands that run the platform in this process (and,
 * with `--workers`, a gateway cluster), as opposed to the ones that call a management server.
 */
import cluster from 'node:cluster';
import type { Command } from 'commander';
import { loadSettings } from '../../config/config.ts';
import type { Settings } from '../../config/config.ts';
import { PorticoError } from '../../errors.ts';
import { createLogger } from '../../logger.ts';
import type { Platform, Role } from '../../platform.ts';
import { printLine as out } from '../client.ts';
import { demo } from '../demo-scenario.ts';
import { fail } from '../fail.ts';

/** Settings from PORTICO_* variables, `--data-dir` overriding the data folder. */
function settingsFrom(options: { dataDir?: string }): Readonly<Settings> {
  return loadSettings(process.env, options.dataDir ? { dataDir: options.dataDir } : {});
}

/** Stops cleanly on Ctrl-C / SIGTERM. */
function stopOn(signalsClose: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    out(`\n${signal}: stopping…`);
    signalsClose()
      .then(() => process.exit(0))
      .catch((error) => fail(error));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Prints where each part listens; the gateway once per catalog it serves, with the
 * `/<org>/<catalog>/` prefix its API paths follow (as API Connect's gateway URLs do).
 */
function printUrls(urls: Platform['urls'], catalogs: Array<{ org: string; catalog: string }>, gatewayNote = ''): void {
  for (const [part, url] of Object.entries(urls)) {
    const prefixes = part === 'gateway' && catalogs.length > 0 ? catalogs.map((c) => `/${c.org}/${c.catalog}/`) : [''];
    for (const prefix of prefixes) out(`${part.padEnd(10)} ${url}${prefix}${part === 'gateway' ? gatewayNote : ''}`);
  }
}

/**
 * The first start of a management node: the provider organization (`PORTICO_ORG`, default
 * `portico`, with its `sandbox` catalog) and, when `PORTICO_ADMIN_USER` and
 * `PORTICO_ADMIN_PASSWORD` are set and no such user exists, the first provider user.
 */
async function bootstrapProvider(platform: Platform): Promise<void> {
  const { orgId } = await platform.services.ensureOrg(process.env.PORTICO_ORG ?? 'portico');
  const admin = process.env.PORTICO_ADMIN_USER;
  if (!admin || !process.env.PORTICO_ADMIN_PASSWORD) return;
  if (!(await platform.services.providerUserNamed(admin))) {
    await platform.services.addProviderUser(orgId, {
      username: admin,
      email: '',
      password: process.env.PORTICO_ADMIN_PASSWORD,
      // The operator's own account, even when the org already has users.
      role: 'owner',
    });
    out(`created provider user ${admin} (owner)`);
  }
}

function parseSamplePorts(value: string | undefined): typeof demo.samplePorts {
  if (!value) return demo.samplePorts;
  const ports = value.split(',').map((p) => Number(p.trim()));
  if (ports.length !== 4 || ports.some((p) => !Number.isInteger(p) || p < 0 || p > 65535)) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_SAMPLE_PORTS',
      reason: 'expected four ports: financing,shipping,geocoder,inventory',
    });
  }
  return { financing: ports[0], shipping: ports[1], geocoder: ports[2], inventory: ports[3] };
}

/** Registers `serve` and `demo`. */
export function registerRunCommands(program: Command): void {
  program
    .command('serve')
    .description('run Portico (gateway :8080, portal :8081, management :8082); settings from PORTICO_* variables')
    .option('--role <role>', 'gateway | management | portal | all', 'all')
    .option('--workers <n>', 'gateway worker processes sharing the gateway port (PORTICO_WORKERS)')
    .option('--data-dir <dir>', 'folder for the SQLite store (PORTICO_DATA_DIR)')
    .action(async (options: { role: string; dataDir?: string; workers?: string }) => {
      if (!['gateway', 'management', 'portal', 'all'].includes(options.role)) {
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--role',
          reason: 'must be gateway, management, portal or all',
        });
      }
      const settings = settingsFrom(options);
      const logger = createLogger(settings.logLevel);
      const role = options.role as Role;
      const workers = options.workers === undefined ? settings.workers : Number(options.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 256) {
        throw new PorticoError('CONFIG_INVALID', {
          setting: '--workers',
          reason: 'must be a whole number from 1 to 256',
        });
      }
      // Loaded here, not at the top: the commands that call a management server never open a store.
      const { runGatewayWorker, startCluster } = await import('../serve.ts');
      if (cluster.isWorker) return runGatewayWorker(settings, logger);
      if (import.meta.url.endsWith('.ts')) {
        // Measured in bench/README.md: the compiled gateway uses about a third less CPU per request and ~60 MB less memory.
        logger.info(
          'running the TypeScript sources through tsx; for production, `npm run build` once and run `node dist/src/cli/main.js serve …`',
        );
      }
      if (workers > 1 && (role === 'all' || role === 'gateway')) {
        const handle = await startCluster(settings, logger, role, workers);
        if (handle.platform) await bootstrapProvider(handle.platform);
        const catalogs = handle.platform ? await handle.platform.services.servedCatalogs() : handle.catalogs;
        printUrls(handle.urls, catalogs, ` (${workers} workers)`);
        stopOn(() => handle.close());
        return;
      }
      const { startPlatform } = await import('../../platform.ts');
      const platform = await startPlatform(settings, logger, role);
      if (role === 'all' || role === 'management') await bootstrapProvider(platform);
      printUrls(platform.urls, await platform.services.servedCatalogs());
      stopOn(() => platform.close());
    });

  program
    .command('demo')
    .description('run the Accessories demo: samples, gateway, portal and console, all on 127.0.0.1')
    .option('--data-dir <dir>', 'folder for the SQLite store', 'data')
    .option('--examples <dir>', 'the definitions to apply', demo.examples)
    .action(async (options: { dataDir: string; examples: string }) => {
      const env = { ...process.env, PORTICO_HOST: '127.0.0.1' };
      const settings = loadSettings(env, { dataDir: options.dataDir });
      const logger = createLogger(process.env.PORTICO_LOG_LEVEL ?? 'warn');
      const samplePorts = parseSamplePorts(process.env.PORTICO_SAMPLE_PORTS);
      // Loaded only here: the demo brings the sample backends (and their zip-code data) along.
      const { startDemo } = await import('../demo.ts');
      const handle = await startDemo(settings, logger, samplePorts, options.examples);
      const urls = handle.platform.urls;
      out('Portico demo is running (Ctrl-C stops it).');
      out('');
      out(`  developer portal  ${urls.portal}   sign in: ${demo.developer.email} / ${demo.developer.password}`);
      out(
        `  provider console  ${urls.management}/console   sign in: ${demo.provider.username} / ${demo.provider.password}`,
      );
      out(
        `  management API    ${urls.management}/api   (portico login --server ${urls.management} --username ${demo.provider.username})`,
      );
      out(`  gateway           ${urls.gateway}/${demo.org}/${demo.catalog}/`);
      out(`  gateway status    ${urls.status}/ready   ${urls.status}/metrics`);
      const mailPage = handle.mailSink?.pageUrl;
      if (mailPage) out(`  demo mail         ${mailPage}   verification and password-reset emails (SMTP sink)`);
      out(`  store             ${settings.databaseUrl}`);
      out('');
      out(`Demo app "${demo.appTitle}" (Accessories Gold, approved) — client id ${handle.clientId}`);
      if (handle.clientSecret) out(`  its client secret, shown once: ${handle.clientSecret}`);
      out('');
      out('Try the APIs:');
      for (const line of handle.curlLines) out(`  ${line}`);
      stopOn(() => handle.close());
    });
}
