/**
 * The credential index of a snapshot: every app's client ids, with the app and its consumer org,
 * as the security phase reads them per request (never the database). Built with the snapshot.
 */
import type { SnapshotData } from '../store/snapshot-data.ts';

export interface AppInfo {
  id: string;
  title: string;
  consumerOrgId: string;
  consumerOrgName: string;
  consumerOrgTitle: string;
  /** Registered OAuth redirect URIs (matched exactly by the authorize endpoint). */
  redirectUris: readonly string[];
  /** The catalog of the app's consumer org: the only catalog whose OAuth providers serve it. */
  catalogId?: string;
}

export interface CredentialInfo {
  secretHash: string;
  app: AppInfo;
}

const noRedirectUris: readonly string[] = Object.freeze([]);

function redirectUrisOf(written: string | undefined): readonly string[] {
  if (written === undefined || written === '[]') return noRedirectUris;
  const list = JSON.parse(written) as unknown;
  return Array.isArray(list) ? list.filter((uri): uri is string => typeof uri === 'string') : noRedirectUris;
}

/**
 * Keeps one copy of each repeated string: every row read from the store brings its own copy (an
 * app's id keys its subscriptions of every product; a consumer org's fields repeat per app). At
 * 100 000 subscriptions of 25 000 apps that is ~5 MB of a snapshot's ~35 MB.
 */
export function interner(): (value: string) => string {
  const seen = new Map<string, string>();
  return function one(value: string): string {
    const kept = seen.get(value);
    if (kept !== undefined) return kept;
    seen.set(value, value);
    return value;
  };
}

/**
 * Client id → credential (secret hash and app), for every credential of a known app. When the
 * loader read only some apps again (`data.appsOf`: those an app or credential change named), the
 * `previous` index with those apps' entries replaced by what was read.
 */
export function credentialIndex(
  data: SnapshotData,
  one: (value: string) => string,
  previous?: Map<string, CredentialInfo>,
): Map<string, CredentialInfo> {
  const read = data.appsOf ?? 'all';
  if (read === 'all' || previous === undefined) return indexOf(data, one);
  if (read.size === 0) return previous;
  const patched = new Map(previous);
  for (const [clientId, info] of previous) if (read.has(info.app.id)) patched.delete(clientId);
  for (const [clientId, info] of indexOf(data, one)) patched.set(clientId, info);
  return patched;
}

function indexOf(data: SnapshotData, one: (value: string) => string): Map<string, CredentialInfo> {
  const apps = new Map<string, AppInfo>();
  for (const app of data.apps) {
    const id = one(app.id);
    apps.set(id, {
      id,
      title: app.title,
      consumerOrgId: one(app.consumer_org_id),
      consumerOrgName: one(app.consumer_org_name),
      consumerOrgTitle: one(app.consumer_org_title),
      redirectUris: redirectUrisOf(app.redirect_uris),
      catalogId: app.catalog_id === undefined ? undefined : one(app.catalog_id),
    });
  }
  const credentials = new Map<string, CredentialInfo>();
  for (const credential of data.credentials) {
    const app = apps.get(credential.app_id);
    if (app) credentials.set(credential.client_id, { secretHash: credential.secret_hash, app });
  }
  return credentials;
}
