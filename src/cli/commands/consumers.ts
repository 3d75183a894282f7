/**
 * `portico consumer-orgs`, `apps`, `subscriptions` and `approvals`: a provider onboards a
 * consumer with the CLI alone (organization, app with credentials, subscription, approval),
 * as `apic` scripts API Connect's. Every list and get takes `--json` for scripts.
 */
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, catalogPath, printJson, printLine as out } from '../client.ts';

interface CatalogOptions {
  catalog: string;
  json?: boolean;
}

interface ConsumerOrgOptions extends CatalogOptions {
  title?: string;
  ownerEmail: string;
  ownerName?: string;
  ownerPassword?: string;
}

interface AppOptions extends CatalogOptions {
  consumerOrg: string;
  description?: string;
}

interface SubscribeOptions extends AppOptions {
  app: string;
  product: string;
  plan: string;
}

type Row = Record<string, string>;

/** The `--catalog` and `--json` options every command here shares. */
function withCatalog(command: Command, json = true): Command {
  command.option('--catalog <name>', 'catalog', 'sandbox');
  return json ? command.option('--json', 'print the answer as JSON') : command;
}

/** Prints `value` as JSON with `--json`, else as the lines `text` makes of it. */
function show<T>(options: { json?: boolean }, value: T, text: (value: T) => string[]): void {
  if (options.json) return printJson(value);
  for (const line of text(value)) out(line);
}

const subscriptionLine = (s: Row) => {
  const who = `${s.consumer_org_name} / ${s.app_title}`;
  return [s.id, s.state, who, `${s.product_name}:${s.product_version}`, s.plan_name].join('\t');
};

/** The path of a consumer organization's apps, or of one of them. */
const appsPath = (options: AppOptions, ...rest: string[]) =>
  catalogPath(options.catalog, 'consumer-orgs', options.consumerOrg, 'apps', ...rest);

function registerConsumerOrgs(program: Command): void {
  const group = program.command('consumer-orgs').description('consumer organizations of a catalog');
  withCatalog(group.command('create <name>'), false)
    .description('create a consumer organization with this exact name (as custom visibility lists it) and its owner')
    .option('--title <title>', 'display title')
    .requiredOption('--owner-email <email>', 'the owner: a portal user who signs in with this email')
    .option('--owner-name <name>', "the owner's name")
    .option('--owner-password <password>', "the owner's initial password (or PORTICO_NEW_PASSWORD)")
    .action(async (name: string, options: ConsumerOrgOptions) => {
      const password = options.ownerPassword ?? process.env.PORTICO_NEW_PASSWORD;
      if (!password) {
        const reason = 'give --owner-password or set PORTICO_NEW_PASSWORD';
        throw new PorticoError('CONFIG_INVALID', { setting: '--owner-password', reason });
      }
      const owner = {
        email: options.ownerEmail,
        password,
        ...(options.ownerName ? { name: options.ownerName } : {}),
      };
      const body = { name, ...(options.title ? { title: options.title } : {}), owner };
      await api('POST', catalogPath(options.catalog, 'consumer-orgs'), body);
      out(`created consumer organization ${name} in ${options.catalog}, owned by ${options.ownerEmail}`);
    });
  withCatalog(group.command('list'))
    .description('list the consumer organizations of a catalog')
    .action(async (options: CatalogOptions) => {
      const rows = (await api('GET', catalogPath(options.catalog, 'consumer-orgs'))) as Row[];
      show(options, rows, (all) => all.map((o) => `${o.name}\t${o.title}`));
    });
  withCatalog(group.command('get <name>'))
    .description('show a consumer organization and its apps')
    .action(async (name: string, options: CatalogOptions) => {
      const org = (await api('GET', catalogPath(options.catalog, 'consumer-orgs', name))) as Row & {
        apps: Row[];
      };
      const lines = (o: typeof org) => [
        `${o.name}\t${o.title}\t${o.apps.length} apps`,
        ...o.apps.map((a) => `  app ${a.id}\t${a.title}`),
      ];
      show(options, org, lines);
    });
  withCatalog(group.command('delete <name>'), false)
    .description('delete a consumer organization with its users, apps, credentials and subscriptions')
    .action(async (name: string, options: CatalogOptions) => {
      await api('DELETE', catalogPath(options.catalog, 'consumer-orgs', name));
      out(`deleted consumer organization ${name} from ${options.catalog}`);
    });
}

function registerApps(program: Command): void {
  const group = program.command('apps').description('applications of consumer organizations, with their credentials');
  withCatalog(group.command('create <title>'))
    .description('create an app with a credential pair; its client secret is shown this once')
    .requiredOption('--consumer-org <name>', 'the consumer organization that owns the app')
    .option('--description <text>', 'description')
    .action(async (title: string, options: AppOptions) => {
      const body = { title, ...(options.description ? { description: options.description } : {}) };
      const app = (await api('POST', appsPath(options), body)) as Row;
      show(options, app, (a) => [
        `created app ${a.id} "${a.title}" in ${a.consumerOrg}`,
        `  client id      ${a.clientId}`,
        `  client secret  ${a.clientSecret}   (shown once: keep it now)`,
      ]);
    });
  withCatalog(group.command('list'))
    .description("list the catalog's apps, or one consumer organization's")
    .option('--consumer-org <name>', 'only this consumer organization')
    .action(async (options: Partial<AppOptions> & CatalogOptions) => {
      const path = options.consumerOrg ? appsPath(options as AppOptions) : catalogPath(options.catalog, 'apps');
      const rows = (await api('GET', path)) as Row[];
      show(options, rows, (all) => all.map((a) => `${a.id}\t${a.consumerOrg ?? a.consumer_org_name}\t${a.title}`));
    });
  withCatalog(group.command('get <app>'))
    .description('show an app (by id) with its client ids and subscriptions')
    .requiredOption('--consumer-org <name>', 'the consumer organization that owns the app')
    .action(async (id: string, options: AppOptions) => {
      const app = (await api('GET', appsPath(options, id))) as Row & {
        credentials: Row[];
        subscriptions: Row[];
      };
      show(options, app, (a) => [
        `${a.id}\t${a.consumerOrg}\t${a.title}`,
        ...a.credentials.map((c) => `  client id ${c.clientId}\t${c.description}`),
        ...a.subscriptions.map((s) => `  subscription ${subscriptionLine(s)}`),
      ]);
    });
  withCatalog(group.command('delete <app>'), false)
    .description('delete an app (by id) with its credentials and subscriptions')
    .requiredOption('--consumer-org <name>', 'the consumer organization that owns the app')
    .action(async (id: string, options: AppOptions) => {
      await api('DELETE', appsPath(options, id));
      out(`deleted app ${id} of ${options.consumerOrg}`);
    });
}

/** `name:version` as the API wants it, or a CONFIG_INVALID naming the option. */
function productRef(ref: string): { product: string; version: string } {
  const [product, version, extra] = ref.split(':');
  if (!product || !version || extra !== undefined) {
    const reason = 'expected name:version, e.g. accessories:1.0.0';
    throw new PorticoError('CONFIG_INVALID', { setting: '--product', reason });
  }
  return { product, version };
}

function registerSubscriptions(program: Command): void {
  const group = program.command('subscriptions').description('subscriptions of apps to product plans');
  withCatalog(group.command('create'))
    .description("subscribe an app to a product's plan; a plan needing approval gives a pending subscription")
    .requiredOption('--consumer-org <name>', 'the consumer organization that owns the app')
    .requiredOption('--app <id>', 'the app')
    .requiredOption('--product <name:version>', 'a published product of the catalog')
    .requiredOption('--plan <name>', 'one of its plans')
    .action(async (options: SubscribeOptions) => {
      const body = { ...productRef(options.product), plan: options.plan };
      const created = (await api('POST', appsPath(options, options.app, 'subscriptions'), body)) as Row;
      const approve = (s: Row) =>
        `  the plan needs approval: portico approvals approve ${s.id} --catalog ${options.catalog}`;
      const plan = (s: Row) => `${s.product_name}:${s.product_version} ${s.plan_name}`;
      show(options, created, (s) => [
        `subscription ${s.id} of app ${s.app_id} to ${plan(s)} is ${s.state}`,
        ...(s.state === 'pending' ? [approve(s)] : []),
      ]);
    });
  withCatalog(group.command('list'))
    .description('list the subscriptions of a catalog')
    .option('--state <state>', 'pending, active, rejected or cancelled')
    .action(async (options: CatalogOptions & { state?: string }) => {
      const query = options.state ? `?state=${encodeURIComponent(options.state)}` : '';
      const rows = (await api('GET', `${catalogPath(options.catalog, 'subscriptions')}${query}`)) as Row[];
      show(options, rows, (all) => all.map(subscriptionLine));
    });
  withCatalog(group.command('get <subscription>'))
    .description('show a subscription')
    .action(async (id: string, options: CatalogOptions) => {
      const subscription = (await api('GET', catalogPath(options.catalog, 'subscriptions', id))) as Row;
      show(options, subscription, (s) => [subscriptionLine(s)]);
    });
}

function registerApprovals(program: Command): void {
  const group = program.command('approvals').description('the subscription approval task list');
  withCatalog(group.command('list'))
    .description('list pending subscriptions')
    .action(async (options: CatalogOptions) => {
      const rows = (await api('GET', `${catalogPath(options.catalog, 'subscriptions')}?state=pending`)) as Row[];
      const line = (r: Row) => {
        const who = `${r.consumer_org_title} / ${r.app_title}`;
        return [r.id, who, `${r.product_title} ${r.product_version}`, r.plan_title].join('\t');
      };
      show(options, rows, (all) => (all.length === 0 ? ['no pending subscriptions'] : all.map(line)));
    });
  for (const verb of ['approve', 'reject'] as const) {
    withCatalog(group.command(`${verb} <subscription>`), false)
      .description(`${verb} a pending subscription`)
      .action(async (id: string, options: CatalogOptions) => {
        const result = (await api('POST', catalogPath(options.catalog, 'subscriptions', id, verb))) as Row;
        out(`subscription ${id} is ${result.state}`);
      });
  }
}

/** Adds the consumer-side command groups to `program`. */
export function registerConsumerCommands(program: Command): void {
  registerApprovals(program);
  registerConsumerOrgs(program);
  registerApps(program);
  registerSubscriptions(program);
}
