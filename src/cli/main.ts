/**
 * The `portico` command. `serve` and `demo` run the platform; every other command talks to a
 * management server over its REST API (like `apic` and decK), so the same CLI drives a laptop
 * or a cluster. Errors go to stderr, one line each; the exit code is 0 or 1.
 *
 * A command loads what it uses when it runs (the definition parsers, the WSDL reader, the store),
 * so a gateway cluster's primary and its workers, which run this file too, hold none of it.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import cluster from 'node:cluster';
import { Command } from 'commander';
import { loadSettings } from '../config/config.ts';
import type { Settings } from '../config/config.ts';
import { DefinitionError, PorticoError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import type { Platform, Role } from '../platform.ts';
import { callManagement as api, callServer, credentialsFile, loadCredentials } from './client.ts';
import { printLine, saveCredentials, ServerError } from './client.ts';
import { registerApiCommands, registerUserCommands } from './commands/provider.ts';
import { registerConsumerCommands } from './commands/consumers.ts';
import { orgPath, registerUserRegistryCommands } from './commands/user-registries.ts';
import { addOAuthProviderCommands } from './commands/oauth-providers.ts';
import { demo } from './demo-scenario.ts';
import { runGatewayWorker, startCluster } from './serve.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

/** Prints an error as one line per problem and exits 1. */
function fail(error: unknown): never {
  const lines: string[] = [];
  if (error instanceof ServerError) {
    const problems = error.body.error?.problems;
    if (problems && problems.length > 0) {
      for (const p of problems)
        lines.push(`${error.body.error?.file ?? 'document'}: ${p.path}: ${p.reason} [${p.rule}]`);
    } else lines.push(error.message);
  } else if (error instanceof DefinitionError) {
    for (const p of error.problems) lines.push(`${error.file}: ${p.path}: ${p.reason} [${p.rule}]`);
  } else if (error instanceof PorticoError) {
    lines.push(error.message);
  } else {
    lines.push((error as Error)?.message ?? String(error));
  }
  for (const line of lines) process.stderr.write(`portico: ${line}\n`);
  process.exit(1);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new PorticoError('CLI_FILE', {
      file,
      reason: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message,
    });
  }
}

/** Files beside `file` that a document may refer to (WSDL, XSD, API files for `$ref`s). */
async function siblings(file: string): Promise<Record<string, string>> {
  const { readDefinitionFolder } = await import('../management/folder.ts');
  try {
    const folder = readDefinitionFolder(dirname(file));
    const all: Record<string, string> = {};
    for (const doc of [...folder.apis, ...folder.products]) all[basename(doc.file)] = doc.text;
    for (const name of folder.others) all[name] = readFileSync(join(dirname(file), name), 'utf8');
    delete all[basename(file)];
    return all;
  } catch {
    return {};
  }
}

/** What `import` sends: an API document, or a WSDL (alone or from a zip) with its sibling files as attachments. */
async function importSource(
  file: string,
): Promise<{ text: string; file: string; attachments: Record<string, string> }> {
  const { mainWsdlOf, readWsdlFolder, readWsdlZip } = await import('../soap/wsdl-files.ts');
  if (/\.zip$/i.test(file)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new PorticoError('CLI_FILE', { file, reason: (error as Error).message });
    }
    const files = readWsdlZip(bytes, file);
    const main = mainWsdlOf(files, file);
    const { [main]: text, ...attachments } = files;
    return { text, file: main, attachments };
  }
  const text = readText(file);
  const { detectDocumentKind } = await import('../definitions/index.ts');
  const kind = detectDocumentKind(text, file);
  if (kind === 'product')
    throw new PorticoError('CLI_FILE', {
      file,
      reason: 'is a product document; import takes an API document or a WSDL',
    });
  return {
    text,
    file: basename(file),
    attachments: kind === 'wsdl' ? readWsdlFolder(dirname(file)) : await siblings(file),
  };
}

/** What the server answers to an import or a product upsert. */
interface Applied {
  name: string;
  version: string;
  state: string;
  created: boolean;
  changed: boolean;
  /** The product's APIs its publish brought online. */
  activated?: string[];
}

const verdict = (result: Applied) => (result.created ? 'created' : result.changed ? 'changed' : 'unchanged');
const broughtOnline = (result: Applied) =>
  result.activated?.length ? `; brought online: ${result.activated.join(', ')}` : '';

function putApi(body: {
  document: string;
  file: string;
  attachments: Record<string, string>;
  replace: boolean;
  state?: string;
}): Promise<Applied> {
  return api('POST', '/api/apis', body) as Promise<Applied>;
}

interface ProductBody {
  document: string;
  file: string;
  attachments: Record<string, string>;
  state: string;
  activate?: boolean;
}

function putProduct(catalog: string, body: ProductBody): Promise<Applied> {
  return api('POST', `/api/catalogs/${encodeURIComponent(catalog)}/products`, body) as Promise<Applied>;
}

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

const program = new Command();
program
  .name('portico')
  .description('Portico API management: gateway, management API and developer portal')
  .showHelpAfterError();

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
    const { startPlatform } = await import('../platform.ts');
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
    const { startDemo } = await import('./demo.ts');
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
    });
    out(`created provider user ${admin}`);
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

program
  .command('login')
  .description('sign in to a management server and keep the token in your user config')
  .requiredOption('--server <url>', 'management server, e.g. http://127.0.0.1:8082')
  .requiredOption('--username <name>', 'provider user')
  .option('--password <password>', 'password (or PORTICO_PASSWORD)')
  .action(async (options: { server: string; username: string; password?: string }) => {
    const password = options.password ?? process.env.PORTICO_PASSWORD;
    if (!password)
      throw new PorticoError('CONFIG_INVALID', {
        setting: '--password',
        reason: 'give --password or set PORTICO_PASSWORD',
      });
    const answer = (await callServer(options.server, 'POST', '/api/login', {
      body: { username: options.username, password },
    })) as { token: string };
    const file = saveCredentials({ server: options.server, token: answer.token });
    out(`logged in to ${options.server} as ${options.username} (token saved in ${file})`);
  });

program
  .command('import <file>')
  .description(
    'import an API definition (YAML or JSON), or a WSDL (.wsdl, or a .zip with its XSDs) as a REST API; it is created offline',
  )
  .option('--replace', 'replace an API with the same name and version')
  .option('--target-of <api>', 'add the WSDL service to an existing API (name:version) as a targets entry instead')
  .action(async (file: string, options: { replace?: boolean; targetOf?: string }) => {
    const source = await importSource(file);
    if (options.targetOf !== undefined) {
      const [name, version] = options.targetOf.split(':');
      if (!name || !version)
        throw new PorticoError('CONFIG_INVALID', { setting: '--target-of', reason: 'expected name:version' });
      if (!source.text.trimStart().startsWith('<'))
        throw new PorticoError('CLI_FILE', { file, reason: '--target-of takes a WSDL (.wsdl or .zip)' });
      const added = (await api('POST', `/api/apis/${encodeURIComponent(name)}/${encodeURIComponent(version)}/targets`, {
        document: source.text,
        file: source.file,
        attachments: source.attachments,
      })) as { target: string };
      out(`added target ${added.target} to api ${name}:${version}`);
      return;
    }
    const result = await putApi({
      document: source.text,
      file: source.file,
      attachments: source.attachments,
      replace: options.replace === true,
    });
    out(`${verdict(result)} api ${result.name}:${result.version} (${result.state})`);
  });

program
  .command('publish <product>')
  .description('create or update a product from its YAML and publish it to a catalog, bringing its offline APIs online')
  .option('--catalog <name>', 'catalog', 'sandbox')
  .option('--stage', 'stage instead of publishing')
  .option('--no-activate', 'refuse to publish when an API of the product is offline, instead of bringing it online')
  .action(async (file: string, options: { catalog: string; stage?: boolean; activate: boolean }) => {
    const state = options.stage ? 'staged' : 'published';
    const document = { document: readText(file), file: basename(file), attachments: await siblings(file) };
    const result = await putProduct(options.catalog, { ...document, state, activate: options.activate });
    const said = `${verdict(result)} product ${result.name}:${result.version} (${result.state}) in ${options.catalog}`;
    out(`${said}${broughtOnline(result)}`);
  });

program
  .command('apply <dir>')
  .description('make the catalog match a folder of API and product files (idempotent)')
  .option('--catalog <name>', 'catalog', 'sandbox')
  .option('--activate', 'bring the folder’s APIs online')
  .option('--stage', 'stage products instead of publishing them')
  .action(async (dir: string, options: { catalog: string; activate?: boolean; stage?: boolean }) => {
    const { readDefinitionFolder } = await import('../management/folder.ts');
    const folder = readDefinitionFolder(dir);
    for (const doc of folder.apis) {
      const result = await putApi({
        document: doc.text,
        file: basename(doc.file),
        attachments: doc.attachments,
        replace: true,
        state: options.activate ? 'online' : undefined,
      });
      out(`${verdict(result)}  api ${result.name}:${result.version} (${result.state})`);
    }
    for (const doc of folder.products) {
      const result = await putProduct(options.catalog, {
        document: doc.text,
        file: basename(doc.file),
        attachments: doc.attachments,
        state: options.stage ? 'staged' : 'published',
      });
      out(`${verdict(result)}  product ${result.name}:${result.version} (${result.state})${broughtOnline(result)}`);
    }
  });

registerApiCommands(program);
registerConsumerCommands(program);
registerUserCommands(program);
registerUserRegistryCommands(program);
addOAuthProviderCommands(program, { api, orgPath, readText, out: printLine });

program
  .command('whoami')
  .description('show the server and user you are logged in as')
  .action(async () => {
    const { server } = loadCredentials();
    const me = (await api('GET', '/api/me')) as { username: string };
    out(`${me.username} at ${server} (${credentialsFile()})`);
  });

program.parseAsync(process.argv).catch(fail);
