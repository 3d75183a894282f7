/**
 * Browser tests' tools: Debian's Chromium through playwright-core (never a downloaded
 * browser), the demo platform on free ports, and the portal and console steps a developer
 * and a provider take (sign in, create an app, subscribe), plus axe-core checks and
 * screenshots. The demo's acceptance test reuses these.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import pino from 'pino';
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startDemo } from '../../src/cli/demo.ts';
import type { DemoHandle } from '../../src/cli/demo.ts';
import { loadSettings } from '../../src/config/config.ts';
import type { MailSink } from '../../src/cli/mail-sink.ts';
import { verificationLink } from './mail.ts';

export const chromiumPath = '/usr/bin/chromium';

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches Debian's Chromium headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: chromiumArgs,
    headless: true,
    timeout: 60_000,
  });
}

export interface RunningDemo {
  handle: DemoHandle;
  portal: string;
  management: string;
  gateway: string;
  /** The demo's SMTP sink: the messages the portal sent. */
  mail: MailSink;
  close(): Promise<void>;
}

/** Starts the whole demo (samples, gateway, portal, management with console) on free ports and a temporary store. */
export async function startPortalDemo(env: Record<string, string> = {}): Promise<RunningDemo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-portal-'));
  const settings = loadSettings({
    PORTICO_GATEWAY_PORT: '0',
    PORTICO_PORTAL_PORT: '0',
    PORTICO_MANAGEMENT_PORT: '0',
    PORTICO_DRAIN_SECONDS: '0',
    PORTICO_ANALYTICS_FLUSH_MS: '50',
    PORTICO_DATA_DIR: dataDir,
    ...env,
  });
  const logger = pino({ level: process.env.PORTICO_TEST_LOG ?? 'silent' });
  const handle = await startDemo(settings, logger, { financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  return {
    handle,
    portal: handle.platform.urls.portal!,
    management: handle.platform.urls.management!,
    gateway: handle.platform.urls.gateway!,
    mail: handle.mailSink!,
    async close() {
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in to the portal; resolves once the signed-in header shows. */
export async function signIn(page: Page, portal: string, email: string, password: string): Promise<void> {
  await page.goto(`${portal}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

interface NewAccount {
  email: string;
  password: string;
  name?: string;
  orgTitle?: string;
}

/** Creates a portal account (and its consumer organization), then signs in: sign-up itself starts no session. */
export async function signUpUnverified(page: Page, portal: string, input: NewAccount): Promise<void> {
  await page.goto(`${portal}/sign-up`);
  if (input.name) await page.getByLabel('Your name').fill(input.name);
  if (input.orgTitle) await page.getByLabel('Organization').fill(input.orgTitle);
  await page.getByLabel('Email').fill(input.email);
  await page.getByLabel('Password').fill(input.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/sign-in\?registered=1$/);
  await signIn(page, portal, input.email, input.password);
}

/** Signs up, signs in and opens the verification link read from the demo's SMTP sink. */
export async function signUp(page: Page, running: RunningDemo, input: NewAccount): Promise<void> {
  await signUpUnverified(page, running.portal, input);
  await page.goto(await verificationLink(running.mail, input.email));
  await page.getByRole('heading', { name: 'Email address verified' }).waitFor();
}

/** Signs out of the portal. */
export async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('link', { name: 'Sign in' }).first().waitFor();
}

export interface CreatedApp {
  id: string;
  url: string;
  clientId: string;
  clientSecret: string;
}

/** Creates an app in the portal; returns the credentials shown once. */
export async function createApp(page: Page, portal: string, title: string, description = ''): Promise<CreatedApp> {
  await page.goto(`${portal}/apps/new`);
  await page.getByLabel('Title').fill(title);
  if (description) await page.getByLabel('Description').fill(description);
  await page.getByRole('button', { name: 'Submit' }).click();
  const clientId = await page.getByLabel('Client ID').inputValue();
  const clientSecret = await page.getByLabel('Client secret').inputValue();
  const deleteHref = await page.getByRole('link', { name: 'Delete app…' }).getAttribute('href');
  const id = decodeURIComponent(/\/apps\/([^/]+)\/delete$/.exec(deleteHref ?? '')?.[1] ?? '');
  return { id, url: `${portal}/apps/${encodeURIComponent(id)}`, clientId, clientSecret };
}

/**
 * Goes through the subscribe wizard: product page → Subscribe under the plan → select the app →
 * review (Next) → summary. Returns the state the summary shows ("Active", "Pending approval").
 */
export async function subscribe(
  page: Page,
  portal: string,
  input: { product: string; version: string; planTitle: string; appTitle: string },
): Promise<string> {
  await page.goto(`${portal}/products/${input.product}/${input.version}`);
  await page.getByRole('link', { name: `Subscribe to the ${input.planTitle} plan` }).click();
  await page.getByLabel(input.appTitle, { exact: true }).check();
  await page.getByRole('button', { name: 'Select app' }).click();
  await page.getByRole('heading', { name: 'Review the subscription' }).waitFor();
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByRole('heading', { name: 'Subscription summary' }).waitFor();
  const state = (await page.locator('dl.facts .pill').first().textContent()) ?? '';
  return state.trim();
}

/** Signs in to the provider console. */
export async function consoleSignIn(page: Page, management: string, username: string, password: string): Promise<void> {
  await page.goto(`${management}/console/sign-in`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** axe-core's own build, injected into a page once per document. */
const requireHere = createRequire(import.meta.url);
const axeSource = readFileSync(requireHere.resolve('axe-core/axe.min.js'), 'utf8');
const { version: axeVersion } = requireHere('axe-core/package.json') as { version: string };

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical findings on the page as it is now: every rule axe enables by
 * default, run in the page's own document. axe-core is injected once per document (through
 * the DevTools protocol, which the portal's Content-Security-Policy does not govern) and run with
 * `resultTypes: ['violations']`: ~0.3 s a run here, against ~2 s for `AxeBuilder.analyze()`,
 * which injects axe again at every call and finishes each run in a new page so that it can merge
 * the results of frames. A page with frames still goes through `AxeBuilder`.
 */
export async function seriousAccessibilityFindings(page: Page): Promise<AxeFinding[]> {
  const violations = page.frames().length > 1 ? await analyzeWithFrames(page) : await analyzeDocument(page);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact ?? '',
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    }));
}

async function analyzeDocument(page: Page): Promise<AxeViolation[]> {
  type AxeWindow = {
    axe?: { version: string; run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> };
  };
  const present = await page.evaluate((version) => (window as AxeWindow).axe?.version === version, axeVersion);
  if (!present) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const results = await (window as AxeWindow).axe!.run(document, { resultTypes: ['violations'] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
}

async function analyzeWithFrames(page: Page): Promise<AxeViolation[]> {
  return (await new AxeBuilder({ page }).analyze()).violations;
}

/** A page on a screen `width` px wide, and what the page's Content-Security-Policy refused on it. */
export interface ScreenPage {
  context: BrowserContext;
  page: Page;
  refusedByCsp: string[];
}

/**
 * A new context and page `width` px wide. Under 600 px it is a phone (`isMobile`, touch): a
 * narrow desktop window lays a page out at its width, a phone lays out a page without a
 * viewport meta 980 px wide.
 */
export async function screenPage(browser: Browser, width: number, height = 800): Promise<ScreenPage> {
  const phone = width < 600;
  const context = await browser.newContext({ viewport: { width, height }, isMobile: phone, hasTouch: phone });
  const page = await context.newPage();
  const refusedByCsp: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refusedByCsp.push(message.text());
  });
  return { context, page, refusedByCsp };
}

/** Asserts the page as it is now has no serious axe-core findings and no sideways scroll at `width`. */
export async function assertFitsScreen(page: Page, width: number, name: string): Promise<void> {
  assert.deepEqual(await seriousAccessibilityFindings(page), [], `${name} at ${width} px`);
  const scrollWidth = await page.evaluate(() => document.scrollingElement!.scrollWidth);
  assert.ok(scrollWidth <= width, `${name} is ${scrollWidth} px wide at ${width} px`);
}

const screenshotDir = join(process.cwd(), 'test-artifacts', 'screenshots');

/** Saves a full-page screenshot under test-artifacts/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}
