/**
 * The provider services: what the management REST API, the console and the CLI do. Every
 * change goes through here in one transaction and reaches the gateways by the change bus;
 * the work itself is in src/services/provider/, one file per subject.
 */
import * as analytics from '../store/analytics.ts';
import type { EventDimension, EventFilter } from '../store/analytics.ts';
import { productsUsingApi, productsUsingOrgApis, listApis } from '../store/apis.ts';
import * as consumers from '../store/consumers.ts';
import * as orgs from '../store/orgs.ts';
import * as productsRepo from '../store/products.ts';
import type { ApiState, ProductState, ProviderUser, Session, SubscriptionState } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { SignInLimiter } from '../web/sign-in-limiter.ts';
import { ChangeBus } from './change-bus.ts';
import * as apis from './provider/apis.ts';
import type { ApiImport, WsdlFile } from './provider/apis.ts';
import * as consumerApps from './provider/consumer-apps.ts';
import type { ConsumerOrgRef, ProviderSubscription } from './provider/consumer-apps.ts';
import * as consumerOrgs from './provider/consumer-orgs.ts';
import { gatewayFailures } from './provider/gateway-failures.ts';
import type { GatewayReport } from './provider/gateway-failures.ts';
import type { NewConsumerOrg } from './provider/consumer-orgs.ts';
import * as organizations from './provider/organizations.ts';
import * as products from './provider/products.ts';
import * as providerUsers from './provider/provider-users.ts';
import type { Actor, NewProviderUser } from './provider/provider-users.ts';
import type { ProductInput } from './provider/products.ts';
import { defaultConsumerLimits } from './service-context.ts';
import type { ConsumerLimits, ServiceContext } from './service-context.ts';
import { SessionService } from './sessions.ts';

export { allowedProductTransitions } from './provider/products.ts';
export type { ImportedApi } from './provider/apis.ts';
export type { ConsumerOrgRef, ProviderSubscription } from './provider/consumer-apps.ts';
export type { NewConsumerOrg } from './provider/consumer-orgs.ts';
export type { PublishedProduct } from './provider/products.ts';
export type { GatewayFailure, GatewayFailures, GatewayReport } from './provider/gateway-failures.ts';

export class ProviderServices implements ServiceContext {
  readonly sessions: SessionService;
  /** The compile failures of the gateway this process runs, if it runs one (set by the platform). */
  gatewayReport: GatewayReport | undefined;

  constructor(
    readonly store: Store,
    readonly bus: ChangeBus = new ChangeBus(),
    readonly signInLimiter: SignInLimiter = new SignInLimiter(),
    readonly consumerLimits: ConsumerLimits = defaultConsumerLimits,
  ) {
    this.sessions = new SessionService(store);
  }

  /** Published APIs of the org the gateway left out because they do not compile there. */
  gatewayFailures(orgId: string, filter: { catalog?: string; api?: string } = {}) {
    return gatewayFailures(this, this.gatewayReport, orgId, filter);
  }

  // ── organizations, catalogs, provider users ──

  ensureOrg(name: string, title = name) {
    return organizations.ensureOrg(this, name, title);
  }

  org(orgId: string) {
    return orgs.findOrgById(this.store.db, orgId);
  }

  catalog(orgId: string, name: string) {
    return organizations.catalog(this, orgId, name);
  }

  listCatalogs(orgId: string) {
    return orgs.listCatalogs(this.store.db, orgId);
  }

  createCatalog(orgId: string, name: string, title: string) {
    return organizations.createCatalog(this, orgId, name, title);
  }

  /** `actor`: the signed-in user asking (only an owner may give the owner role); none for the operator's tools. */
  addProviderUser(orgId: string, input: NewProviderUser, actor?: Actor) {
    return providerUsers.addProviderUser(this, orgId, input, actor);
  }

  changeProviderUserRole(actor: ProviderUser, username: string, role: unknown) {
    return providerUsers.changeRole(this, actor, username, role);
  }

  /** Removes a user of the actor's org and ends its sessions and tokens. */
  removeProviderUser(actor: ProviderUser, username: string) {
    return providerUsers.removeUser(this, actor, username);
  }

  /** Changes the user's own password; ends its sessions and tokens other than `current`. */
  changeProviderPassword(
    user: ProviderUser,
    input: { currentPassword: string; newPassword: string },
    current: Session | undefined,
    address: string,
  ) {
    return providerUsers.changePassword(this, user, input, current, address);
  }

  providerTokens(user: ProviderUser, current: Session | undefined) {
    return providerUsers.listTokens(this, user, current);
  }

  revokeProviderToken(user: ProviderUser, id: string) {
    return providerUsers.revokeToken(this, user, id);
  }

  providerUser(userId: string) {
    return orgs.findProviderUserById(this.store.db, userId);
  }

  providerUserNamed(username: string) {
    return orgs.findProviderUser(this.store.db, username);
  }

  listProviderUsers(orgId: string) {
    return orgs.listProviderUsers(this.store.db, orgId);
  }

  /** See `organizations.authenticateProvider`: limited per name and client address. */
  authenticateProvider(username: string, password: string, address: string) {
    return organizations.authenticateProvider(this, username, password, address);
  }

  // ── APIs ──

  importApi(orgId: string, input: ApiImport) {
    return apis.importApi(this, orgId, input);
  }

  addWsdlTarget(orgId: string, name: string, version: string, wsdl: WsdlFile) {
    return apis.addWsdlTarget(this, orgId, name, version, wsdl);
  }

  api(orgId: string, name: string, version: string) {
    return apis.api(this, orgId, name, version);
  }

  listApis(orgId: string) {
    return listApis(this.store.db, orgId);
  }

  setApiState(orgId: string, name: string, version: string, state: ApiState) {
    return apis.setApiState(this, orgId, name, version, state);
  }

  deleteApi(orgId: string, name: string, version: string) {
    return apis.deleteApi(this, orgId, name, version);
  }

  /** Products (any catalog) that bundle the API. */
  productsUsingApi(apiId: string) {
    return productsUsingApi(this.store.db, apiId);
  }

  /** For each of the org's APIs a product bundles, those products (any catalog). */
  productsUsingOrgApis(orgId: string) {
    return productsUsingOrgApis(this.store.db, orgId);
  }

  // ── products ──

  putProduct(orgId: string, catalogName: string, input: ProductInput) {
    return products.putProduct(this, orgId, catalogName, input);
  }

  product(orgId: string, catalogName: string, name: string, version: string) {
    return products.product(this, orgId, catalogName, name, version);
  }

  async listProducts(orgId: string, catalogName: string, states?: ProductState[]) {
    const catalog = await this.catalog(orgId, catalogName);
    return productsRepo.listProducts(this.store.db, catalog.id, states);
  }

  productPlans(productId: string) {
    return productsRepo.listPlans(this.store.db, productId);
  }

  productApis(productId: string) {
    return productsRepo.listProductApis(this.store.db, productId);
  }

  /** `activate: false` refuses to publish a product whose APIs are offline instead of bringing them online. */
  setProductState(orgId: string, catalog: string, name: string, version: string, state: ProductState, activate = true) {
    return products.setProductState(this, orgId, catalog, name, version, state, activate);
  }

  /** Every catalog the gateways serve, as `org/catalog` path prefixes. */
  async servedCatalogs(): Promise<Array<{ org: string; catalog: string }>> {
    const byId = new Map((await orgs.listOrgs(this.store.db)).map((o) => [o.id, o.name]));
    const all = await orgs.listCatalogs(this.store.db);
    return all.map((c) => ({ org: byId.get(c.org_id) ?? '', catalog: c.name })).filter((c) => c.org !== '');
  }

  // ── consumers of a catalog: organizations, apps, subscriptions and approvals ──

  createConsumerOrg(orgId: string, catalogName: string, input: NewConsumerOrg) {
    return consumerOrgs.createConsumerOrg(this, orgId, catalogName, input);
  }

  listConsumerOrgs(catalogId: string) {
    return consumers.listConsumerOrgs(this.store.db, catalogId);
  }

  consumerOrg(ref: ConsumerOrgRef) {
    return consumerApps.consumerOrg(this, ref);
  }

  deleteConsumerOrg(ref: ConsumerOrgRef) {
    return consumerApps.deleteConsumerOrg(this, ref);
  }

  /** The apps of one consumer organization. */
  consumerOrgApps(consumerOrgId: string) {
    return consumers.listApps(this.store.db, consumerOrgId);
  }

  /** Creates an app of the consumer organization with its first credential pair; the secret is returned once. */
  createApp(ref: ConsumerOrgRef, input: { title: string; description?: string }) {
    return consumerApps.createApp(this, ref, input);
  }

  app(ref: ConsumerOrgRef, appId: string) {
    return consumerApps.app(this, ref, appId);
  }

  deleteApp(ref: ConsumerOrgRef, appId: string) {
    return consumerApps.deleteApp(this, ref, appId);
  }

  subscribeApp(ref: ConsumerOrgRef, appId: string, input: ProviderSubscription) {
    return consumerApps.subscribeApp(this, ref, appId, input);
  }

  subscription(orgId: string, catalogName: string, subscriptionId: string) {
    return consumerApps.subscriptionDetail(this, orgId, catalogName, subscriptionId);
  }

  /** The catalog's applications with their consumer organization. */
  listApps(catalogId: string) {
    return consumers.listAppsInCatalog(this.store.db, catalogId);
  }

  listSubscriptions(catalogId: string, state?: SubscriptionState) {
    return consumers.listSubscriptionDetails(this.store.db, { catalogId, state });
  }

  decideSubscription(orgId: string, catalogName: string, subscriptionId: string, decision: 'approve' | 'reject') {
    return consumerOrgs.decideSubscription(this, orgId, catalogName, subscriptionId, decision);
  }

  revokeSubscription(orgId: string, catalogName: string, subscriptionId: string) {
    return consumerOrgs.revokeSubscription(this, orgId, catalogName, subscriptionId);
  }

  // ── analytics ──

  events(filter: EventFilter, limit?: number) {
    return analytics.listEvents(this.store.db, filter, limit);
  }

  event(id: number) {
    return analytics.findEvent(this.store.db, id);
  }

  eventCounts(filter: EventFilter, dimension: EventDimension) {
    return analytics.countBy(this.store.db, filter, dimension);
  }

  callsOverTime(filter: EventFilter, bucketMs: number) {
    return analytics.callsOverTime(this.store.db, filter, bucketMs);
  }

  latencyPercentiles(filter: EventFilter) {
    return analytics.latencyPercentiles(this.store.db, filter);
  }
}
