/** A consumer organization's applications and their credential pairs. */
import { PorticoError } from '../../errors.ts';
import { recordDeleted } from '../../store/changes.ts';
import * as consumers from '../../store/consumers.ts';
import type { Db } from '../../store/store.ts';
import type { App, PortalUser } from '../../store/schema.ts';
import { countApps, countCredentials, lockApp, lockConsumerOrg } from '../../store/consumer-limits.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';

/** What an app is created with. */
export interface NewApp {
  title: string;
  description?: string;
}

/** Creates an app with its first credential pair; the secret is returned once. */
export function createApp(context: ServiceContext, consumerOrgId: string, input: NewApp) {
  const title = typeof input.title === 'string' ? input.title.trim() : '';
  if (title.length === 0 || title.length > 100) {
    throw new PorticoError('MGMT_VALIDATION', { field: 'title', reason: 'is required (1-100 characters)' });
  }
  const description = typeof input.description === 'string' ? input.description.slice(0, 1000) : '';
  return change(
    context,
    'app',
    async (trx) => {
      await lockConsumerOrg(trx, context.store.dialect, consumerOrgId);
      const most = context.consumerLimits.appsPerConsumerOrg;
      if ((await countApps(trx, consumerOrgId)) >= most) {
        const reason = `the organization has ${most} apps, the most allowed: delete one to create another`;
        throw new PorticoError('MGMT_CONFLICT', { reason });
      }
      const app = await consumers.createApp(trx, { consumerOrgId, title, description });
      const issued = await consumers.addCredential(trx, app.id, 'Default credentials');
      return { app, credential: issued.credential, clientSecret: issued.clientSecret };
    },
    (created) => created.app.id,
  );
}

/**
 * What the portal calls: `createApp` for the user's organization, once the user's address is
 * verified. Anyone can sign up with an address they do not own; an app (its secret, its redirect
 * URIs, an OAuth client of the catalog's native providers) made before the mailbox is proved
 * would stay in the owner's account when the owner takes it over by a password reset.
 */
export function createAppAs(context: ServiceContext, user: PortalUser, input: NewApp) {
  if (!user.email_verified_at) {
    throw new PorticoError('MGMT_EMAIL_UNVERIFIED', { reason: 'open the link we emailed you, then create your app' });
  }
  return createApp(context, user.consumer_org_id, input);
}

/** The consumer org's app, or MGMT_NOT_FOUND (also for another org's app). */
export async function app(context: ServiceContext, consumerOrgId: string, appId: string): Promise<App> {
  const found = await consumers.findApp(context.store.db, consumerOrgId, appId);
  if (!found) throw notFound('app', appId);
  return found;
}

export async function deleteApp(context: ServiceContext, consumerOrgId: string, appId: string): Promise<void> {
  await app(context, consumerOrgId, appId);
  const deleteApp = async (trx: Db) =>
    recordDeleted(trx, context.store.dialect, await consumers.deleteApp(trx, appId), appId);
  await change(context, 'app-delete', deleteApp, appId);
}

/**
 * Adds a credential pair (rotation without downtime), up to the app's limit; the secret is
 * returned once.
 */
export async function addCredential(context: ServiceContext, consumerOrgId: string, appId: string, description = '') {
  await app(context, consumerOrgId, appId);
  const add = async (trx: Db) => {
    await lockApp(trx, context.store.dialect, appId);
    const most = context.consumerLimits.credentialsPerApp;
    if ((await countCredentials(trx, appId)) >= most) {
      const reason = `the app has ${most} credentials, the most allowed: delete one to add another`;
      throw new PorticoError('MGMT_CONFLICT', { reason });
    }
    return consumers.addCredential(trx, appId, description);
  };
  return change(context, 'credential', add, appId);
}

export async function resetSecret(
  context: ServiceContext,
  consumerOrgId: string,
  appId: string,
  credentialId: string,
): Promise<{ clientId: string; clientSecret: string }> {
  await app(context, consumerOrgId, appId);
  const credential = (await consumers.listCredentials(context.store.db, appId)).find((c) => c.id === credentialId);
  if (!credential) throw notFound('credential', credentialId);
  const clientSecret = await change(
    context,
    'secret-reset',
    (trx) => consumers.resetCredentialSecret(trx, credentialId),
    appId,
  );
  return { clientId: credential.client_id, clientSecret };
}

export async function deleteCredential(
  context: ServiceContext,
  consumerOrgId: string,
  appId: string,
  credentialId: string,
): Promise<void> {
  await app(context, consumerOrgId, appId);
  const all = await consumers.listCredentials(context.store.db, appId);
  if (!all.some((c) => c.id === credentialId)) throw notFound('credential', credentialId);
  if (all.length === 1) {
    const reason = 'an app keeps at least one credential pair; add another before deleting this one';
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  await change(context, 'credential-delete', (trx) => consumers.deleteCredential(trx, credentialId), appId);
}

// RFC 6749 §3.1.2: an absolute URI without a fragment; a handful per app.
const maxRedirectUris = 10;

/** The redirect URIs as written (one per line or a list), checked, or MGMT_VALIDATION. */
export function checkRedirectUris(written: string | readonly string[]): string[] {
  const list = (typeof written === 'string' ? written.split(/\s+/) : [...written])
    .map((uri) => uri.trim())
    .filter(Boolean);
  if (list.length > maxRedirectUris) {
    throw new PorticoError('MGMT_VALIDATION', {
      field: 'redirect_uris',
      reason: `at most ${maxRedirectUris}`,
    });
  }
  for (const uri of list) {
    let parsed: URL | undefined;
    try {
      // A control character or space would be stripped by the URL parser (so "\x01javascript:"
      // would parse as javascript:): refuse it instead of parsing around it.
      parsed = /[\u0000-\u0020\u007f-\u009f]/.test(uri) ? undefined : new URL(uri);
    } catch {
      parsed = undefined;
    }
    if (
      parsed === undefined ||
      uri.length > 2000 ||
      uri.includes('#') ||
      !['http:', 'https:'].includes(parsed.protocol)
    ) {
      const shown = uri.slice(0, 100).replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
      const reason = `${shown} is not an absolute URI without a fragment, with http or https (RFC 6749 §3.1.2)`;
      throw new PorticoError('MGMT_VALIDATION', { field: 'redirect_uris', reason });
    }
  }
  // Kept as written: the authorize endpoint compares the client's redirect_uri by simple string
  // comparison (RFC 6749 §3.1.2.3), and with no control characters it parses to the same target.
  return [...new Set(list)];
}

/** Replaces the app's registered OAuth redirect URIs (matched exactly by the authorize endpoint). */
export async function setRedirectUris(
  context: ServiceContext,
  consumerOrgId: string,
  appId: string,
  written: string | readonly string[],
): Promise<string[]> {
  await app(context, consumerOrgId, appId);
  const uris = checkRedirectUris(written);
  await change(context, 'app', (trx) => consumers.setRedirectUris(trx, appId, uris), appId);
  return uris;
}
