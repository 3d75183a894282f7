/**
 * What a portal page hands to the page after it in the server-side session (Post/Redirect/Get):
 * a client secret to show once, and the subscribe wizard's place while an app is created inside
 * it. Neither ever travels in a URL; both are kept briefly and the secret is deleted as it is read.
 */
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

export function flashSecret(deps: PortalDeps, session: Session, flash: SecretFlash): Promise<void> {
  return deps.services.sessions.putValue(session, 'secret', JSON.stringify(flash), secretTtlMs);
}

/** The secret flashed for `appId`, removed from the session as it is read (a reload shows it no more). */
export async function takeSecret(deps: PortalDeps, session: Session, appId: string): Promise<SecretFlash | undefined> {
  const flash = parsed<SecretFlash>(await deps.services.sessions.takeValue(session, 'secret'));
  return flash?.appId === appId ? flash : undefined;
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
