/**
 * What a portal page hands to the page after it in the server-side session (Post/Redirect/Get):
 * a client secret to show once, and the subscribe wizard's place while an app is created inside
 * it. Neither ever travels in a URL; both are kept briefly and the secret is deleted as it is read.
 */
import type { FastifyRequest } from 'fastify';
import type { Session } from '../store/schema.ts';
import type { PortalDeps } from './deps.ts';

/** A credential pair just issued, shown once on the page the POST redirects to. */
export interface SecretFlash {
  appId: string;
  clientId: string;
  clientSecret: string;
  heading: string;
}

/** Where the subscribe wizard was when the developer created an app inside it. */
export interface WizardPlace {
  productId: string;
  planName: string;
  appId: string;
}

// Long enough to follow a redirect on a slow link; a secret never shown is gone after this.
const secretTtlMs = 5 * 60_000;
const wizardTtlMs = 60 * 60_000;

function parsed<T>(value: string | undefined): T | undefined {
  return value === undefined ? undefined : (JSON.parse(value) as T);
}

// One per app: opening one app's page leaves another app's new secret where it is.
const secretName = (appId: string) => `secret:${appId}`;

export function flashSecret(deps: PortalDeps, session: Session, flash: SecretFlash): Promise<void> {
  return deps.services.sessions.putValue(session, secretName(flash.appId), JSON.stringify(flash), secretTtlMs);
}

/**
 * Whether a GET is a navigation that started on the portal itself, as the redirect after one of
 * its forms is. A link from another site is a top-level GET that carries the SameSite=Lax session
 * cookie: it must not use up a secret the developer has not seen. Fetch Metadata says where the
 * navigation started (https://www.w3.org/TR/fetch-metadata/); a browser without it sends the
 * page's own Referer (the portal's Referrer-Policy is same-origin), which another site cannot.
 */
function startedOnThePortal(deps: PortalDeps, request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const referer = URL.parse(request.headers.referer ?? '');
  if (referer === null) return false;
  return referer.host === request.headers.host || referer.origin === URL.parse(deps.portalPublicUrl())?.origin;
}

/**
 * The secret flashed for `appId`, removed from the session as it is read (a reload shows it no
 * more), for a navigation that started on the portal only: any other leaves it for the redirect.
 */
export async function takeSecret(
  deps: PortalDeps,
  request: FastifyRequest,
  session: Session,
  appId: string,
): Promise<SecretFlash | undefined> {
  if (!startedOnThePortal(deps, request)) return undefined;
  return parsed<SecretFlash>(await deps.services.sessions.takeValue(session, secretName(appId)));
}

export function rememberWizard(deps: PortalDeps, session: Session, place: WizardPlace): Promise<void> {
  return deps.services.sessions.putValue(session, 'wizard', JSON.stringify(place), wizardTtlMs);
}

/** The wizard's place for `productId`, left in the session until the subscription is made. */
export async function wizardPlace(
  deps: PortalDeps,
  session: Session,
  productId: string,
): Promise<WizardPlace | undefined> {
  const place = parsed<WizardPlace>(await deps.services.sessions.readValue(session, 'wizard'));
  return place?.productId === productId ? place : undefined;
}

export async function forgetWizard(deps: PortalDeps, session: Session): Promise<void> {
  await deps.services.sessions.takeValue(session, 'wizard');
}
