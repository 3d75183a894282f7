/**
 * The provider and consumer services: every change to the catalog goes through here, in one
 * transaction, and announces itself on the change bus so gateways rebuild their snapshot.
 * The management REST API, the console, the portal and the CLI all call these.
 */
import { EventEmitter } from 'node:events';
import { detectDocumentKind, parseApiDocument, parseProductDocument, securityProblems } from '../definitions/index.ts';
import type { ApiDefinition, ProductDefinition } from '../definitions/types.ts';
import { DefinitionError, PorticoError } from '../errors.ts';
import { addWsdlTarget } from '../soap/add-target.ts';
import { apiSourceFromWsdl } from '../soap/wsdl-import.ts';
import * as apisRepo from '../store/apis.ts';
import { recordChange } from '../store/changes.ts';
import * as consumers from '../store/consumers.ts';
import * as orgs from '../store/orgs.ts';
import * as products from '../store/products.ts';
import type { ApiRow, ApiState, Catalog, ProductRow, ProductState, Subscription } from '../store/schema.ts';
import { hashPassword, verifyPassword } from '../store/secrets.ts';
import type { Db, Store } from '../store/store.ts';
import { SignInLimiter } from '../web/sign-in-limiter.ts';

/** Announces committed changes; the in-process gateway listens (`change` events). */
export class ChangeBus extends EventEmitter {
  changed(kind: string): void {
    this.emit('change', kind);
  }
}

/** API Connect's product lifecycle: which state may follow which (IBM "The Product lifecycle"). */
const productTransitions: Record<ProductState, ProductState[]> = {
  staged: ['published', 'staged'],
  published: ['deprecated', 'retired', 'published'],
  deprecated: ['published', 'retired'],
  retired: ['archived', 'staged'],
  archived: [],
};

/** What a product may be moved to from its state. */
export function allowedProductTransitions(state: ProductState): ProductState[] {
  return productTransitions[state];
}

export const passwordRules = 'at least 10 characters, with at least one letter and one digit';

/** Checks a new password against the stated rules; throws naming the field. */
export function checkPasswordRules(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || password.length < 10 || !/[A-Za-z]/.test(password) || !/\d/.test(password)) {
    throw new PorticoError('MGMT_VALIDATION', { field, reason: `must be ${passwordRules}` });
  }
  if (password.length > 200) throw new PorticoError('MGMT_VALIDATION', { field, reason: 'must be at most 200 characters' });
  return password;
}

function notFound(kind: string, id: string): PorticoError {
  return new PorticoError('MGMT_NOT_FOUND', { kind, id });
}

/** A consumer organization a provider creates, with the portal user who owns it. */
export interface NewConsumerOrg {
  name: string;
  title?: string;
  owner: { email: string; password: string; name?: string };
}

export interface ImportedApi {
  api: ApiRow;
  definition: ApiDefinition;
  created: boolean;
  changed: boolean;
}

export interface PublishedProduct {
  product: ProductRow;
  definition: ProductDefinition;
  created: boolean;
  changed: boolean;
}

export class Services {
  constructor(
    readonly store: Store,
    readonly bus: ChangeBus = new ChangeBus(),
    /** One limiter for every sign-in (portal, console, `POST /api/login`), so none is a way around another. */
    readonly signInLimiter: SignInLimiter = new SignInLimiter(),
  ) {}

  private get db(): Db {
    return this.store.db;
  }

  /** Runs `work` in one transaction, then records and announces the change. */
  private async change<T>(kind: string, work: (trx: Db) => Promise<T>): Promise<T> {
    const result = await this.store.transaction(async (trx) => {
      const value = await work(trx);
      await recordChange(trx, kind, this.store.dialect);
      return value;
    });
    this.bus.changed(kind);
    return result;
  }

  // ── organizations, catalogs, provider users ─────────────────────────────────────────

  async ensureOrg(name: string, title = name): Promise<{ orgId: string; sandbox: Catalog }> {
    return this.store.transaction(async (trx) => {
      const org = (await orgs.findOrgByName(trx, name)) ?? (await orgs.createOrg(trx, { name, title }));
      const sandbox = (await orgs.findCatalog(trx, org.id, 'sandbox')) ?? (await orgs.createCatalog(trx, { orgId: org.id, name: 'sandbox', title: 'Sandbox' }));
      return { orgId: org.id, sandbox };
    });
  }

  async catalog(orgId: string, name: string): Promise<Catalog> {
    const catalog = await orgs.findCatalog(this.db, orgId, name);
    if (!catalog) throw notFound('catalog', name);
    return catalog;
  }

  async createCatalog(orgId: string, name: string, title: string): Promise<Catalog> {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
      throw new PorticoError('MGMT_VALIDATION', { field: 'name', reason: 'must be lower-case letters, digits and dashes, starting with a letter or digit' });
    }
    if (await orgs.findCatalog(this.db, orgId, name)) throw new PorticoError('MGMT_CONFLICT', { reason: `catalog ${name} already exists` });
    return this.change('catalog', (trx) => orgs.createCatalog(trx, { orgId, name, title }));
  }

  async addProviderUser(orgId: string, input: { username: string; email: string; password: string }) {
    if (!/^[A-Za-z0-9._@-]{2,64}$/.test(input.username ?? '')) {
      throw new PorticoError('MGMT_VALIDATION', { field: 'username', reason: 'must be 2-64 letters, digits or ._@-' });
    }
    checkPasswordRules(input.password);
    const passwordHash = await hashPassword(input.password);
    // User names are the one sign-in identifier of the console, the API and the CLI, so they are
    // unique across organizations; a taken name is refused without saying whose it is (issue 12).
    if (await orgs.findProviderUser(this.db, input.username)) {
      const reason = `the user name ${input.username} is not available; choose another`;
      throw new PorticoError('MGMT_CONFLICT', { field: 'username', reason });
    }
    return orgs.createProviderUser(this.db, { orgId, username: input.username, email: input.email ?? '', passwordHash });
  }

  /**
   * The provider user for these credentials; a generic error when either is wrong, and
   * MGMT_TOO_MANY_ATTEMPTS past the sign-in limits for this name and client `address`.
   */
  async authenticateProvider(username: string, password: string, address: string) {
    const name = typeof username === 'string' ? username : '';
    return this.signInLimiter.guard({ account: `provider|${name.toLowerCase()}`, address }, async () => {
      const user = name ? await orgs.findProviderUser(this.db, name) : undefined;
      // Verify against a dummy hash when the user is unknown, so timing does not tell.
      const ok = await verifyPassword(user?.password_hash ?? dummyHash, typeof password === 'string' ? password : '');
      if (!user || !ok) throw new PorticoError('MGMT_BAD_CREDENTIALS');
      return user;
    });
  }

  // ── APIs ────────────────────────────────────────────────────────────────────────────

  /**
   * Imports an API document (created offline). With `replace`, an existing name:version gets
   * the new document (its state kept); without it, a duplicate is a 409.
   */
  async importApi(
    orgId: string,
    input: { text: string; file: string; attachments?: Record<string, string>; replace?: boolean; state?: ApiState },
  ): Promise<ImportedApi> {
    // A WSDL is imported as the REST API generated from it (src/soap/wsdl-import.ts).
    const source = input.text.trimStart().startsWith('<') && detectDocumentKind(input.text, input.file) === 'wsdl' ? apiSourceFromWsdl(input) : input;
    const definition = parseApiDocument(source.text, source.file);
    const existing = await apisRepo.findApi(this.db, orgId, definition.name, definition.version);
    if (existing && !input.replace) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `API ${definition.name}:${definition.version} already exists (${input.file})` });
    }
    const documentText = JSON.stringify(definition.document);
    if (existing) {
      const changed = existing.document !== documentText || (input.state !== undefined && input.state !== existing.state);
      if (!changed) return { api: existing, definition, created: false, changed: false };
      await this.change('api', async (trx) => {
        await apisRepo.replaceApiDocument(trx, existing.id, { title: definition.title, basePath: definition.basePath, document: definition.document, attachments: source.attachments });
        if (input.state !== undefined) await apisRepo.setApiState(trx, existing.id, input.state);
      });
      return { api: (await apisRepo.findApiById(this.db, existing.id))!, definition, created: false, changed: true };
    }
    const api = await this.change('api', (trx) =>
      apisRepo.insertApi(trx, {
        orgId,
        name: definition.name,
        version: definition.version,
        title: definition.title,
        basePath: definition.basePath,
        document: definition.document,
        attachments: source.attachments,
        state: input.state ?? 'offline',
      }),
    );
    return { api, definition, created: true, changed: true };
  }

  /**
   * Adds a WSDL service to an existing API as an `x-ibm-configuration.targets` entry (mode b
   * of the WSDL import); the result is validated like any import before it is stored.
   */
  async addWsdlTarget(orgId: string, name: string, version: string, wsdl: { text: string; file: string; attachments?: Record<string, string> }): Promise<{ api: ApiRow; service: string }> {
    const api = await this.api(orgId, name, version);
    const { document, service } = addWsdlTarget(JSON.parse(api.document) as Record<string, unknown>, wsdl);
    const definition = parseApiDocument(JSON.stringify(document), `${name}:${version}`);
    const attachments = { ...(JSON.parse(api.attachments) as Record<string, string>), ...wsdl.attachments, [wsdl.file.split(/[\\/]/).pop() ?? wsdl.file]: wsdl.text };
    await this.change('api', (trx) => apisRepo.replaceApiDocument(trx, api.id, { title: definition.title, basePath: definition.basePath, document: definition.document, attachments }));
    return { api: (await apisRepo.findApiById(this.db, api.id))!, service };
  }

  async api(orgId: string, name: string, version: string): Promise<ApiRow> {
    const api = await apisRepo.findApi(this.db, orgId, name, version);
    if (!api) throw notFound('API', `${name}:${version}`);
    return api;
  }

  listApis(orgId: string): Promise<ApiRow[]> {
    return apisRepo.listApis(this.db, orgId);
  }

  async setApiState(orgId: string, name: string, version: string, state: ApiState): Promise<ApiRow> {
    const api = await this.api(orgId, name, version);
    if (api.state === state) return api;
    await this.change('api-state', (trx) => apisRepo.setApiState(trx, api.id, state));
    return { ...api, state };
  }

  async deleteApi(orgId: string, name: string, version: string): Promise<void> {
    const api = await this.api(orgId, name, version);
    const users = await apisRepo.productsUsingApi(this.db, api.id);
    if (users.length > 0) {
      throw new PorticoError('MGMT_CONFLICT', {
        reason: `API ${name}:${version} is used by product ${users.map((p) => `${p.name}:${p.version}`).join(', ')}`,
      });
    }
    await this.change('api-delete', (trx) => apisRepo.deleteApi(trx, api.id));
  }

  // ── products ────────────────────────────────────────────────────────────────────────

  /**
   * Creates or updates a product in a catalog from its YAML, resolving the APIs it names.
   * `attachments` holds the API files a product names by `$ref`, by file name.
   */
  async putProduct(
    orgId: string,
    catalogName: string,
    input: { text: string; file: string; state?: ProductState; attachments?: Record<string, string> },
  ): Promise<PublishedProduct> {
    const definition = parseProductDocument(input.text, input.file);
    const catalog = await this.catalog(orgId, catalogName);
    const apiLinks: Array<{ apiId: string; key: string }> = [];
    for (const [index, entry] of definition.apis.entries()) {
      const target = 'ref' in entry ? refTarget(entry.ref, input.attachments) : { name: entry.name, version: entry.version };
      if (!target) {
        throw new PorticoError('DEF_INVALID', {
          file: input.file,
          path: `$.apis.${entry.key}`,
          rule: 'unresolved-ref',
          reason: `the API file ${'ref' in entry ? entry.ref : ''} was not given with the product`,
        });
      }
      const api = await apisRepo.findApi(this.db, orgId, target.name, target.version);
      if (!api) {
        throw new PorticoError('DEF_INVALID', {
          file: input.file,
          path: `$.apis.${entry.key}`,
          rule: 'unknown-api',
          reason: `the product names API ${target.name}:${target.version}, which does not exist (import it first)`,
          index,
        });
      }
      apiLinks.push({ apiId: api.id, key: entry.key });
    }
    const existing = await products.findProduct(this.db, catalog.id, definition.name, definition.version);
    const state = input.state ?? existing?.state ?? 'staged';
    if (state === 'published') {
      await this.checkBasePaths(catalog.id, apiLinks.map((l) => l.apiId), existing?.id);
      await this.checkSecurity(apiLinks.map((l) => l.apiId));
    }
    if (existing && existing.state !== state && !productTransitions[existing.state].includes(state)) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `product ${definition.name}:${definition.version} is ${existing.state} and cannot become ${state}` });
    }
    const documentText = JSON.stringify(definition.document);
    const sameApis = existing ? await this.sameApiLinks(existing.id, apiLinks) : false;
    if (existing && existing.document === documentText && existing.state === state && sameApis) {
      return { product: existing, definition, created: false, changed: false };
    }
    const { product, created } = await this.change('product', (trx) =>
      products.upsertProduct(trx, {
        catalogId: catalog.id,
        name: definition.name,
        version: definition.version,
        title: definition.title,
        state,
        viewType: definition.visibility.view.type,
        subscribeType: definition.visibility.subscribe.type,
        viewOrgs: definition.visibility.view.orgs,
        subscribeOrgs: definition.visibility.subscribe.orgs,
        document: definition.document,
        plans: definition.plans.map((plan) => ({
          name: plan.name,
          title: plan.title,
          description: plan.description ?? '',
          approval: plan.approval,
          rateLimits: plan.rateLimits,
          burstLimits: plan.burstLimits,
        })),
        apis: apiLinks,
      }),
    );
    return { product, definition, created, changed: true };
  }

  /**
   * A catalog serves one API per base path: publishing a product whose API would share a base
   * path with a different API already published there is a conflict (as in API Connect).
   */
  private async checkBasePaths(catalogId: string, apiIds: string[], productId: string | undefined): Promise<void> {
    if (apiIds.length === 0) return;
    const mine = await this.db.selectFrom('apis').select(['id', 'name', 'version', 'base_path']).where('id', 'in', apiIds).execute();
    let others = this.db
      .selectFrom('product_apis')
      .innerJoin('products', 'products.id', 'product_apis.product_id')
      .innerJoin('apis', 'apis.id', 'product_apis.api_id')
      .select(['apis.id', 'apis.name', 'apis.version', 'apis.base_path', 'products.name as product_name', 'products.version as product_version'])
      .where('products.catalog_id', '=', catalogId)
      .where('products.state', 'in', ['published', 'deprecated']);
    if (productId !== undefined) others = others.where('products.id', '!=', productId);
    for (const other of await others.execute()) {
      const clash = mine.find((api) => api.id !== other.id && api.base_path.replace(/\/$/, '') === other.base_path.replace(/\/$/, ''));
      if (clash) {
        throw new PorticoError('MGMT_CONFLICT', {
          reason: `API ${clash.name}:${clash.version} has base path ${clash.base_path || '/'}, already served in this catalog by ${other.name}:${other.version} (product ${other.product_name}:${other.product_version})`,
        });
      }
    }
  }

  /** An API stored before the fail-closed rule is refused at publish as it would be at import. */
  private async checkSecurity(apiIds: string[]): Promise<void> {
    for (const id of apiIds) {
      const api = await apisRepo.findApiById(this.db, id);
      if (!api) continue;
      const problems = securityProblems(JSON.parse(api.document) as Record<string, unknown>);
      if (problems.length > 0) throw new DefinitionError(`${api.name}:${api.version}`, problems);
    }
  }

  private async sameApiLinks(productId: string, links: Array<{ apiId: string; key: string }>): Promise<boolean> {
    const current = await products.listProductApis(this.db, productId);
    const key = (id: string, k: string) => `${id}|${k}`;
    const a = new Set(current.map((c) => key(c.id, c.api_key)));
    return a.size === links.length && links.every((l) => a.has(key(l.apiId, l.key)));
  }

  async product(orgId: string, catalogName: string, name: string, version: string): Promise<ProductRow> {
    const catalog = await this.catalog(orgId, catalogName);
    const product = await products.findProduct(this.db, catalog.id, name, version);
    if (!product) throw notFound('product', `${name}:${version}`);
    return product;
  }

  async listProducts(orgId: string, catalogName: string, states?: ProductState[]): Promise<ProductRow[]> {
    const catalog = await this.catalog(orgId, catalogName);
    return products.listProducts(this.db, catalog.id, states);
  }

  /** Moves a product along its lifecycle; retiring cancels its subscriptions. */
  async setProductState(orgId: string, catalogName: string, name: string, version: string, state: ProductState): Promise<ProductRow> {
    const product = await this.product(orgId, catalogName, name, version);
    if (product.state === state) return product;
    if (!productTransitions[product.state].includes(state)) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `product ${name}:${version} is ${product.state} and cannot become ${state}` });
    }
    if (state === 'published') {
      await this.checkSecurity((await products.listProductApis(this.db, product.id)).map((api) => api.id));
    }
    await this.change('product-state', async (trx) => {
      await products.setProductState(trx, product.id, state);
      if (state === 'retired' || state === 'archived') {
        await trx
          .updateTable('subscriptions')
          .set({ state: 'cancelled', updated_at: new Date().toISOString() })
          .where('product_id', '=', product.id)
          .where('state', 'in', ['active', 'pending'])
          .execute();
      }
    });
    return { ...product, state };
  }

  // ── consumer organizations, portal users, apps ──────────────────────────────────────

  /**
   * Signs up a developer: a consumer organization and its first portal user, in one
   * transaction. The organization's name comes from its title but never takes a name a
   * product's visibility lists or another organization has: those get a numbered suffix.
   * The password is hashed before the email is looked up, so a taken email (MGMT_CONFLICT,
   * field `email`) costs the same time as a new account.
   */
  async signUp(catalogId: string, input: { email: string; password: string; name?: string; orgTitle?: string }) {
    const email = checkEmail(input.email);
    checkPasswordRules(input.password);
    const passwordHash = await hashPassword(input.password);
    if (await consumers.findPortalUserByEmail(this.db, catalogId, email)) {
      throw new PorticoError('MGMT_CONFLICT', { field: 'email', reason: 'an account with this email already exists' });
    }
    const name = (input.name ?? '').trim() || email.split('@')[0];
    const orgTitle = (input.orgTitle ?? '').trim() || `${name}'s organization`;
    return this.store.transaction(async (trx) => {
      const orgName = await unclaimedConsumerOrgName(trx, catalogId, orgTitle);
      return createOrgWithOwner(trx, catalogId, { name: orgName, title: orgTitle }, { email, name, passwordHash });
    });
  }

  /**
   * Creates a consumer organization with the exact `name` a provider chose (the one its
   * products' custom visibility lists) and its owner, a portal user who signs in with
   * `owner.email`. This is how a partner gets the organization a product is meant for.
   */
  async createConsumerOrg(orgId: string, catalogName: string, input: NewConsumerOrg) {
    const catalog = await this.catalog(orgId, catalogName);
    if (typeof input.name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.name)) {
      const reason = 'must be lower-case letters, digits and dashes, starting with a letter or digit';
      throw new PorticoError('MGMT_VALIDATION', { field: 'name', reason });
    }
    const email = checkEmail(input.owner?.email, 'owner.email');
    checkPasswordRules(input.owner.password, 'owner.password');
    if (await consumers.findConsumerOrgByName(this.db, catalog.id, input.name)) {
      const reason = `consumer organization ${input.name} already exists in catalog ${catalogName}`;
      throw new PorticoError('MGMT_CONFLICT', { field: 'name', reason });
    }
    if (await consumers.findPortalUserByEmail(this.db, catalog.id, email)) {
      const reason = `a portal user with this email already exists in catalog ${catalogName}`;
      throw new PorticoError('MGMT_CONFLICT', { field: 'owner.email', reason });
    }
    const passwordHash = await hashPassword(input.owner.password);
    const owner = { email, name: (input.owner.name ?? '').trim() || email.split('@')[0], passwordHash };
    const org = { name: input.name, title: (input.title ?? '').trim() || input.name };
    return this.store.transaction((trx) => createOrgWithOwner(trx, catalog.id, org, owner));
  }

  /** The portal user for these credentials, under the same limits as `authenticateProvider`. */
  async authenticatePortalUser(catalogId: string, email: string, password: string, address: string) {
    const wanted = typeof email === 'string' ? email.trim().toLowerCase() : '';
    return this.signInLimiter.guard({ account: `portal|${catalogId}|${wanted}`, address }, async () => {
      const user = wanted ? await consumers.findPortalUserByEmail(this.db, catalogId, wanted) : undefined;
      const ok = await verifyPassword(user?.password_hash ?? dummyHash, typeof password === 'string' ? password : '');
      if (!user || !ok) throw new PorticoError('MGMT_BAD_CREDENTIALS');
      return user;
    });
  }

  async changePortalPassword(userId: string, current: string, next: string): Promise<void> {
    const user = await consumers.findPortalUserById(this.db, userId);
    if (!user || !(await verifyPassword(user.password_hash, current))) {
      throw new PorticoError('MGMT_VALIDATION', { field: 'currentPassword', reason: 'is not your current password' });
    }
    checkPasswordRules(next, 'newPassword');
    await consumers.setPortalUserPassword(this.db, userId, await hashPassword(next));
  }

  /** Creates an app with its first credential pair; the secret is returned once. */
  async createApp(consumerOrgId: string, input: { title: string; description?: string }) {
    const title = typeof input.title === 'string' ? input.title.trim() : '';
    if (title.length === 0 || title.length > 100) throw new PorticoError('MGMT_VALIDATION', { field: 'title', reason: 'is required (1-100 characters)' });
    const description = typeof input.description === 'string' ? input.description.slice(0, 1000) : '';
    return this.change('app', async (trx) => {
      const app = await consumers.createApp(trx, { consumerOrgId, title, description });
      const issued = await consumers.addCredential(trx, app.id, 'Default credentials');
      return { app, credential: issued.credential, clientSecret: issued.clientSecret };
    });
  }

  async app(consumerOrgId: string, appId: string) {
    const app = await consumers.findApp(this.db, consumerOrgId, appId);
    if (!app) throw notFound('app', appId);
    return app;
  }

  async deleteApp(consumerOrgId: string, appId: string): Promise<void> {
    await this.app(consumerOrgId, appId);
    await this.change('app-delete', (trx) => consumers.deleteApp(trx, appId));
  }

  /** Adds a second credential pair (rotation without downtime); the secret is returned once. */
  async addCredential(consumerOrgId: string, appId: string, description = '') {
    await this.app(consumerOrgId, appId);
    return this.change('credential', (trx) => consumers.addCredential(trx, appId, description));
  }

  async resetSecret(consumerOrgId: string, appId: string, credentialId: string): Promise<{ clientId: string; clientSecret: string }> {
    await this.app(consumerOrgId, appId);
    const credential = (await consumers.listCredentials(this.db, appId)).find((c) => c.id === credentialId);
    if (!credential) throw notFound('credential', credentialId);
    const clientSecret = await this.change('secret-reset', (trx) => consumers.resetCredentialSecret(trx, credentialId));
    return { clientId: credential.client_id, clientSecret };
  }

  async deleteCredential(consumerOrgId: string, appId: string, credentialId: string): Promise<void> {
    await this.app(consumerOrgId, appId);
    const all = await consumers.listCredentials(this.db, appId);
    if (!all.some((c) => c.id === credentialId)) throw notFound('credential', credentialId);
    if (all.length === 1) throw new PorticoError('MGMT_CONFLICT', { reason: 'an app keeps at least one credential pair; add another before deleting this one' });
    await this.change('credential-delete', (trx) => consumers.deleteCredential(trx, credentialId));
  }

  // ── subscriptions ───────────────────────────────────────────────────────────────────

  /**
   * Subscribes an app to a plan of a published product. Plans needing approval start
   * `pending`; others are `active` at once. One live subscription per app and product.
   */
  async subscribe(consumerOrgId: string, input: { appId: string; productId: string; planName: string }): Promise<Subscription> {
    const app = await this.app(consumerOrgId, input.appId);
    const product = await products.findProductById(this.db, input.productId);
    const org = await consumers.findConsumerOrgById(this.db, consumerOrgId);
    if (!product || !org || product.catalog_id !== org.catalog_id || !canSee(product, org.name)) throw notFound('product', input.productId);
    if (product.state !== 'published') {
      throw new PorticoError('MGMT_CONFLICT', { reason: `product ${product.name}:${product.version} is ${product.state} and takes no new subscriptions` });
    }
    if (product.subscribe_type === 'custom' && !(JSON.parse(product.subscribe_orgs) as string[]).includes(org.name)) {
      throw new PorticoError('MGMT_FORBIDDEN', { reason: 'your organization may not subscribe to this product' });
    }
    const plan = (await products.listPlans(this.db, product.id)).find((p) => p.name === input.planName);
    if (!plan) throw new PorticoError('MGMT_VALIDATION', { field: 'plan', reason: `product ${product.name} has no plan ${input.planName}` });
    const live = (await consumers.listSubscriptionDetails(this.db, { appId: app.id })).find(
      (s) => s.product_id === product.id && (s.state === 'active' || s.state === 'pending'),
    );
    if (live) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `app ${app.title} is already subscribed to ${product.title} (${live.plan_title}, ${live.state})` });
    }
    return this.change('subscription', (trx) =>
      consumers.createSubscription(trx, { appId: app.id, productId: product.id, planId: plan.id, state: plan.approval ? 'pending' : 'active' }),
    );
  }

  /** Approves or rejects a pending subscription (the provider's task list). */
  async decideSubscription(orgId: string, catalogName: string, subscriptionId: string, decision: 'approve' | 'reject'): Promise<Subscription> {
    const catalog = await this.catalog(orgId, catalogName);
    const subscription = await consumers.findSubscriptionById(this.db, subscriptionId);
    const product = subscription ? await products.findProductById(this.db, subscription.product_id) : undefined;
    if (!subscription || !product || product.catalog_id !== catalog.id) throw notFound('subscription', subscriptionId);
    if (subscription.state !== 'pending') {
      throw new PorticoError('MGMT_CONFLICT', { reason: `subscription ${subscriptionId} is ${subscription.state}, not pending` });
    }
    const state = decision === 'approve' ? 'active' : 'rejected';
    await this.change('subscription-decision', (trx) => consumers.setSubscriptionState(trx, subscription.id, state));
    return { ...subscription, state };
  }

  /** Cancels a subscription of one of the consumer org's apps. */
  async cancelSubscription(consumerOrgId: string, subscriptionId: string): Promise<void> {
    const subscription = await consumers.findSubscriptionById(this.db, subscriptionId);
    if (!subscription || !(await consumers.findApp(this.db, consumerOrgId, subscription.app_id))) throw notFound('subscription', subscriptionId);
    await this.change('subscription-cancel', (trx) => consumers.setSubscriptionState(trx, subscriptionId, 'cancelled'));
  }

  /** Revokes (cancels) any subscription of the catalog, as the provider. */
  async revokeSubscription(orgId: string, catalogName: string, subscriptionId: string): Promise<void> {
    const catalog = await this.catalog(orgId, catalogName);
    const subscription = await consumers.findSubscriptionById(this.db, subscriptionId);
    const product = subscription ? await products.findProductById(this.db, subscription.product_id) : undefined;
    if (!subscription || !product || product.catalog_id !== catalog.id) throw notFound('subscription', subscriptionId);
    await this.change('subscription-revoke', (trx) => consumers.setSubscriptionState(trx, subscriptionId, 'cancelled'));
  }
}

/**
 * Whether a consumer org (or an anonymous visitor, `undefined`) may see a product: public to
 * all, authenticated to any signed-in org, custom to listed orgs; deprecated products only
 * to existing subscribers (checked by the caller), retired and archived to nobody.
 */
export function canSee(product: ProductRow, consumerOrgName: string | undefined): boolean {
  if (product.state !== 'published' && product.state !== 'deprecated') return false;
  if (product.view_type === 'public') return true;
  if (consumerOrgName === undefined) return false;
  if (product.view_type === 'authenticated') return true;
  return (JSON.parse(product.view_orgs) as string[]).includes(consumerOrgName);
}

/** The name and version of the API defined by the file a product names by `$ref`. */
function refTarget(ref: string, attachments: Record<string, string> | undefined): { name: string; version: string } | undefined {
  const file = ref.replace(/^\.\//, '');
  const text = attachments?.[file];
  if (text === undefined) return undefined;
  const definition = parseApiDocument(text, file);
  return { name: definition.name, version: definition.version };
}

/** Checks and normalises an email address; throws naming `field`. */
function checkEmail(value: unknown, field = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) {
    throw new PorticoError('MGMT_VALIDATION', { field, reason: 'must be an email address' });
  }
  return email;
}

async function createOrgWithOwner(
  trx: Db,
  catalogId: string,
  org: { name: string; title: string },
  owner: { email: string; name: string; passwordHash: string },
) {
  const created = await consumers.createConsumerOrg(trx, { catalogId, name: org.name, title: org.title });
  const user = await consumers.createPortalUser(trx, { catalogId, consumerOrgId: created.id, ...owner });
  await trx.updateTable('consumer_orgs').set({ owner_id: user.id }).where('id', '=', created.id).execute();
  return { user, org: { ...created, owner_id: user.id } };
}

/**
 * A name for a self-registered organization: from its title, with a suffix when a product's
 * visibility (any catalog) or another organization of the catalog already uses it.
 */
async function unclaimedConsumerOrgName(db: Db, catalogId: string, title: string): Promise<string> {
  const base = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'org';
  const listed = await products.visibilityOrgNames(db);
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}-${n + 1}`;
    if (!listed.has(name) && !(await consumers.findConsumerOrgByName(db, catalogId, name))) return name;
  }
}

// An argon2id hash of a random string: verifying against it costs what a real check costs.
const dummyHash = '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';
