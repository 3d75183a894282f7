/**
 * The consumer services: what the developer portal does for a visitor and a signed-in
 * developer. Changes reach the gateways by the change bus; the work itself is in
 * src/services/consumer/, one file per subject.
 */
import { providerConfig } from '../oauth/provider-config.ts';
import type { ProviderConfig } from '../oauth/provider-config.ts';
import * as consumers from '../store/consumers.ts';
import { listCatalogProviders } from '../store/oauth.ts';
import * as orgs from '../store/orgs.ts';
import { listPlans, listProductApis } from '../store/products.ts';
import { listCatalogUserRegistries } from '../store/user-registries.ts';
import type { PlanRow, PortalUser, ProductRow } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { SignInLimiter } from '../web/sign-in-limiter.ts';
import { ChangeBus } from './change-bus.ts';
import * as accountEmail from './consumer/account-email.ts';
import type { AccountMail, MailRequest } from './consumer/account-email.ts';
import * as accounts from './consumer/accounts.ts';
import type { SignUp } from './consumer/accounts.ts';
import * as apps from './consumer/apps.ts';
import * as catalog from './consumer/catalog.ts';
import type { Visitor } from './consumer/catalog.ts';
import * as subscriptions from './consumer/subscriptions.ts';
import type { NewSubscription } from './consumer/subscriptions.ts';
import * as usage from './consumer/usage.ts';
import { defaultConsumerLimits } from './service-context.ts';
import type { ConsumerLimits, ServiceContext } from './service-context.ts';
import { MailLimiter } from './mail-limiter.ts';
import { SessionService } from './sessions.ts';

export { canSee } from './consumer/subscriptions.ts';
export type { SubscriptionDetail, Visitor } from './consumer/catalog.ts';

export class ConsumerServices implements ServiceContext {
  readonly sessions: SessionService;

  constructor(
    readonly store: Store,
    readonly bus: ChangeBus = new ChangeBus(),
    readonly signInLimiter: SignInLimiter = new SignInLimiter(),
    /** Account email; without a mailer, new accounts stay unverified (no mail is sent). */
    readonly mail: AccountMail = { mailer: undefined, limiter: new MailLimiter(), portalUrl: () => '' },
    readonly consumerLimits: ConsumerLimits = defaultConsumerLimits,
  ) {
    this.sessions = new SessionService(store);
  }

  // ── the catalog a portal serves ──

  /** The catalog `catalogName` of the provider organization `orgName`, or of the first organization. */
  async findCatalog(orgName: string | undefined, catalogName: string) {
    const org = orgName ? await orgs.findOrgByName(this.store.db, orgName) : (await orgs.listOrgs(this.store.db))[0];
    const found = org ? await orgs.findCatalog(this.store.db, org.id, catalogName) : undefined;
    return org && found ? { org, catalog: found } : undefined;
  }

  visibleProducts(visitor: Visitor) {
    return catalog.visibleProducts(this, visitor);
  }

  visibleProduct(visitor: Visitor, name: string, version: string) {
    return catalog.visibleProduct(this, visitor, name, version);
  }

  visibleProductApi(visitor: Visitor, product: ProductRow, apiName: string, apiVersion: string) {
    return catalog.visibleProductApi(this, visitor, product, apiName, apiVersion);
  }

  productPlans(productId: string) {
    return listPlans(this.store.db, productId);
  }

  productApis(productId: string) {
    return listProductApis(this.store.db, productId);
  }

  /** The native OAuth providers the catalog enables, by name (API pages show their endpoints). */
  async catalogOAuthProviders(catalogId: string): Promise<Map<string, ProviderConfig>> {
    const rows = await listCatalogProviders(this.store.db, catalogId);
    return new Map(
      rows.map((row) => [row.name, providerConfig(JSON.parse(row.configuration) as Record<string, unknown>)]),
    );
  }

  /** The user registries the catalog enables: name → title (API pages name the one a basic scheme uses). */
  async catalogUserRegistryTitles(catalogId: string): Promise<Map<string, string>> {
    const rows = await listCatalogUserRegistries(this.store.db, catalogId);
    return new Map(rows.map((row) => [row.name, row.title]));
  }

  // ── accounts ──

  /** Signs up a developer and sends the verification link (or tells the owner of a taken address). */
  signUp(catalogId: string, input: SignUp, request: MailRequest = {}) {
    return accounts.signUp(this, catalogId, input, this.mail, request);
  }

  /** Whether account email can be sent (PORTICO_SMTP_URL is set). */
  get mailConfigured(): boolean {
    return this.mail.mailer !== undefined;
  }

  resendVerification(user: PortalUser, request: MailRequest = {}) {
    return accountEmail.resendVerification(this, this.mail, user, request);
  }

  /** Uses up a verification link in a session of its own account only (`userId`, the signed-in user). */
  verifyEmail(token: string, userId: string | undefined) {
    return accountEmail.verifyEmail(this, token, userId);
  }

  requestPasswordReset(catalogId: string, email: string, request: MailRequest = {}) {
    return accountEmail.requestPasswordReset(this, this.mail, catalogId, email, request);
  }

  resetLinkIsLive(token: string) {
    return accountEmail.resetLinkIsLive(this, token);
  }

  resetPassword(token: string, password: string) {
    return accountEmail.resetPassword(this, token, password);
  }

  /** The portal user for these credentials, limited per email and client address. */
  authenticatePortalUser(catalogId: string, email: string, password: string, address: string) {
    return accounts.authenticatePortalUser(this, catalogId, email, password, address);
  }

  /** Changes a signed-in developer's password; the current-password check is limited per account. */
  changePortalPassword(userId: string, current: string, next: string, address: string) {
    return accounts.changePortalPassword(this, userId, current, next, address);
  }

  portalUser(userId: string) {
    return consumers.findPortalUserById(this.store.db, userId);
  }

  portalUserByEmail(catalogId: string, email: string) {
    return consumers.findPortalUserByEmail(this.store.db, catalogId, email);
  }

  consumerOrg(consumerOrgId: string) {
    return consumers.findConsumerOrgById(this.store.db, consumerOrgId);
  }

  // ── apps and credentials ──

  createApp(consumerOrgId: string, input: { title: string; description?: string }) {
    return apps.createApp(this, consumerOrgId, input);
  }

  /** Creates an app for a signed-in developer: an unverified address may not (MGMT_EMAIL_UNVERIFIED). */
  createAppAs(user: PortalUser, input: { title: string; description?: string }) {
    return apps.createAppAs(this, user, input);
  }

  app(consumerOrgId: string, appId: string) {
    return apps.app(this, consumerOrgId, appId);
  }

  listApps(consumerOrgId: string) {
    return consumers.listApps(this.store.db, consumerOrgId);
  }

  deleteApp(consumerOrgId: string, appId: string) {
    return apps.deleteApp(this, consumerOrgId, appId);
  }

  setRedirectUris(consumerOrgId: string, appId: string, uris: string | readonly string[]) {
    return apps.setRedirectUris(this, consumerOrgId, appId, uris);
  }

  listCredentials(appId: string) {
    return consumers.listCredentials(this.store.db, appId);
  }

  addCredential(consumerOrgId: string, appId: string, description = '') {
    return apps.addCredential(this, consumerOrgId, appId, description);
  }

  resetSecret(consumerOrgId: string, appId: string, credentialId: string) {
    return apps.resetSecret(this, consumerOrgId, appId, credentialId);
  }

  deleteCredential(consumerOrgId: string, appId: string, credentialId: string) {
    return apps.deleteCredential(this, consumerOrgId, appId, credentialId);
  }

  // ── subscriptions ──

  subscribe(consumerOrgId: string, input: NewSubscription) {
    return subscriptions.subscribe(this, consumerOrgId, input);
  }

  /** Subscribes for a signed-in developer: an unverified address may not (MGMT_EMAIL_UNVERIFIED). */
  subscribeAs(user: PortalUser, input: NewSubscription) {
    return subscriptions.subscribeAs(this, user, input);
  }

  cancelSubscription(consumerOrgId: string, subscriptionId: string) {
    return subscriptions.cancelSubscription(this, consumerOrgId, subscriptionId);
  }

  /** The subscriptions of every app of the visitor's organization (none when anonymous). */
  /** Calls used and left in the current window of each limit of the subscription's plan. */
  limitUsage(subscriptionId: string, plan: PlanRow) {
    return usage.limitUsage(this, subscriptionId, plan);
  }

  usageOverTime(subscriptionId: string, fromTs: number, toTs: number, bucketMs: number) {
    return usage.usageOverTime(this, subscriptionId, fromTs, toTs, bucketMs);
  }

  orgSubscriptions(visitor: Visitor) {
    return catalog.orgSubscriptions(this, visitor);
  }

  appSubscriptions(appId: string) {
    return consumers.listSubscriptionDetails(this.store.db, { appId });
  }
}
