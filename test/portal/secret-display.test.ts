/**
 * A client secret issued by a portal POST is shown once, by the navigation that POST started:
 * a page opened from another site (a top-level GET carries the SameSite=Lax session cookie), or
 * typed in, neither shows nor uses it up, and neither does another app's page. Fetch Metadata
 * (`Sec-Fetch-Site`) tells them apart; without it, the Referer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { verificationLink } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
let counter = 0;

const secretField = /id="client-secret" value="([^"]+)"/;
const sameOrigin = { 'sec-fetch-site': 'same-origin' };

async function signedInClient(): Promise<WebClient> {
  counter++;
  const email = `secret-${counter}-${Date.now()}@example.org`;
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const orgTitle = `Secret Org ${counter}`;
  assert.equal((await client.post('/sign-up', { email, password: 'secret-password-1', orgTitle })).status, 303);
  assert.equal(await client.signIn(email, 'secret-password-1'), 303);
  assert.equal((await client.openLink(await verificationLink(running.mail, email))).status, 200);
  return client;
}

/** Creates an app; the URL of its page, which the POST redirected to. */
async function createApp(client: WebClient, title: string): Promise<string> {
  await client.get('/apps/new');
  const posted = await client.post('/apps', { title });
  assert.equal(posted.status, 303);
  return posted.location;
}

const open = (client: WebClient, path: string, headers: Record<string, string>) =>
  client.request('GET', path, undefined, headers);

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

test('a cross-site GET of the app page neither shows nor uses up the new secret', async () => {
  const client = await signedInClient();
  const appPage = await createApp(client, 'Lured Shop');
  for (const site of ['cross-site', 'same-site', 'none']) {
    const lured = await open(client, appPage, { 'sec-fetch-site': site });
    assert.equal(lured.status, 200);
    assert.doesNotMatch(lured.text, secretField, `Sec-Fetch-Site: ${site}`);
  }
  const rightful = await open(client, appPage, sameOrigin);
  assert.ok((secretField.exec(rightful.text)?.[1] ?? '').length >= 20, 'the redirect from the POST shows it');
  assert.doesNotMatch((await open(client, appPage, sameOrigin)).text, secretField, 'and only once');
});

test("another app's page does not use up the secret", async () => {
  const client = await signedInClient();
  const first = await createApp(client, 'First Shop');
  await open(client, first, sameOrigin);
  const second = await createApp(client, 'Second Shop');
  assert.doesNotMatch((await open(client, first, sameOrigin)).text, secretField);
  assert.match((await open(client, second, sameOrigin)).text, secretField);
});

test('without Sec-Fetch-Site, a Referer on the portal shows the secret; another or none does not', async () => {
  const client = await signedInClient();
  const appPage = await createApp(client, 'Old Browser Shop');
  assert.doesNotMatch((await open(client, appPage, {})).text, secretField, 'no Referer');
  const elsewhere = { referer: 'https://evil.example/page' };
  assert.doesNotMatch((await open(client, appPage, elsewhere)).text, secretField, 'a Referer of another site');
  const here = { referer: `${running.portal}/apps/new` };
  assert.match((await open(client, appPage, here)).text, secretField, 'a Referer on the portal');
});

test('a reset secret: a cross-site GET leaves it to the redirect', async () => {
  const client = await signedInClient();
  const appPage = await createApp(client, 'Reset Shop');
  const shown = await open(client, appPage, sameOrigin);
  const credentialId = /\/credentials\/([^/]+)\/reset/.exec(shown.text)![1];
  const reset = await client.post(`${appPage}/credentials/${credentialId}/reset`);
  assert.equal(reset.status, 303);
  assert.doesNotMatch((await open(client, appPage, { 'sec-fetch-site': 'cross-site' })).text, secretField);
  assert.match((await open(client, reset.location, sameOrigin)).text, /New client secret/);
});

test("the wizard's review: a cross-site GET leaves the new app's secret to the redirect", async () => {
  const client = await signedInClient();
  await client.get('/products/accessories/1.0.0/subscribe?plan=silver');
  const posted = await client.post('/products/accessories/1.0.0/subscribe/app', { plan: 'silver', title: 'Wiz' });
  assert.equal(posted.status, 303);
  const lured = await open(client, posted.location, { 'sec-fetch-site': 'cross-site' });
  assert.match(lured.text, /Wiz/);
  assert.doesNotMatch(lured.text, secretField);
  assert.match((await open(client, posted.location, sameOrigin)).text, secretField);
});
