/**
 * Issue 16 item 5: the mail settings are checked at start, the mailer really speaks SMTP with
 * the credentials of PORTICO_SMTP_URL (to an smtp-server sink that demands them), and a portal
 * without a mail server says so instead of promising emails it cannot send.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startMailSink } from '../../src/cli/mail-sink.ts';
import { loadSettings } from '../../src/config/config.ts';
import { createMailer } from '../../src/services/mail.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';

let platform: TestPlatform | undefined;
after(async () => {
  await platform?.close();
});

test('PORTICO_SMTP_URL, PORTICO_MAIL_FROM and PORTICO_PORTAL_URL are validated at start', () => {
  for (const bad of ['mail.example.com', 'http://mail.example.com', 'smtp://', 'smtp://:secret@mail.example.com']) {
    assert.throws(
      () => loadSettings({ PORTICO_SMTP_URL: bad }),
      { code: 'CONFIG_INVALID', message: /PORTICO_SMTP_URL/ },
      bad,
    );
  }
  const ok = loadSettings({
    PORTICO_SMTP_URL: 'smtps://user:p%40ss@mail.example.com:465',
    PORTICO_MAIL_FROM: 'API Team <api@example.com>',
  });
  assert.equal(ok.smtpUrl, 'smtps://user:p%40ss@mail.example.com:465');
  assert.equal(ok.mailFrom, 'API Team <api@example.com>');
  assert.equal(loadSettings({}).smtpUrl, undefined);
  assert.throws(() => loadSettings({ PORTICO_MAIL_FROM: 'not an address' }), { code: 'CONFIG_INVALID' });
  assert.throws(() => loadSettings({ PORTICO_PORTAL_URL: 'portal.example.com' }), { code: 'CONFIG_INVALID' });
  assert.equal(
    loadSettings({ PORTICO_PORTAL_URL: 'https://portal.example.com/' }).portalPublicUrl,
    'https://portal.example.com',
  );
});

test('the mailer signs in with the user and password of PORTICO_SMTP_URL; a wrong password delivers nothing and is logged', async () => {
  const sink = await startMailSink({ auth: { user: 'portico', pass: 'sink-secret-1' } });
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }),
  );
  try {
    const good = createMailer({ smtpUrl: sink.smtpUrl, mailFrom: 'Portico <portico@example.com>' }, logger)!;
    good.post({
      to: 'dev@example.com',
      subject: 'Hello',
      text: `A long line ${'x'.repeat(120)} https://portal.example/verify-email?token=abc=def`,
    });
    await good.close();
    assert.equal(sink.messages.length, 1);
    assert.equal(sink.messages[0].subject, 'Hello');
    assert.match(sink.messages[0].from, /portico@example\.com/);
    assert.ok(sink.messages[0].text.includes('https://portal.example/verify-email?token=abc=def'), 'decoded intact');

    const wrong = createMailer(
      { smtpUrl: sink.smtpUrl.replace('sink-secret-1', 'wrong'), mailFrom: 'portico@example.com' },
      logger,
    )!;
    wrong.post({ to: 'dev@example.com', subject: 'Refused', text: 'x' });
    await wrong.close();
    assert.equal(sink.messages.length, 1, 'nothing delivered without the right password');
    assert.ok(lines.some((line) => line.includes('mail could not be sent')));
  } finally {
    await sink.close();
  }
});

test('without PORTICO_SMTP_URL the portal says accounts cannot be verified and offers no reset by email', async () => {
  platform = await startTestPlatform();
  const portal = platform.platform.urls.portal!;
  const client = new WebClient(portal);
  await client.get('/sign-up');
  assert.equal((await client.post('/sign-up', { email: 'nomail@example.org', password: 'nomail-pass-1' })).status, 303);
  const notice = await client.get('/sign-in?registered=1');
  assert.match(notice.text, /Thank you\. Sign in with your email and password to continue\./, 'no promise of an email');
  assert.equal(await client.signIn('nomail@example.org', 'nomail-pass-1'), 303);
  const home = await client.get('/products');
  assert.match(home.text, /this portal cannot send email \(no mail server is\s+configured\)/);
  const forgot = await new WebClient(portal).get('/forgot-password');
  assert.match(forgot.text, /Password reset by email is not available/);
  assert.doesNotMatch(forgot.text, /Email me a link/);
  assert.equal(platform.platform.consumerServices.mailConfigured, false);
});
