/**
 * The demo's mailbox: a real SMTP server (smtp-server) on 127.0.0.1 that keeps the messages it
 * receives in memory, and a small web page listing them, so a newcomer can open the
 * verification and password-reset links the portal sends. Not for production: it accepts mail
 * for anyone and keeps only the latest messages.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { html } from '../web/html.ts';

export interface SinkMessage {
  to: string;
  from: string;
  subject: string;
  text: string;
  receivedAt: string;
}

export interface MailSink {
  /** `smtp://127.0.0.1:PORT` (with the user and password when the sink asks for them). */
  smtpUrl: string;
  /** The page listing the messages. */
  pageUrl: string;
  /** Received messages, oldest first. */
  readonly messages: readonly SinkMessage[];
  close(): Promise<void>;
}

/** Messages kept at most; older ones are forgotten. */
const keptMessages = 200;
/** Largest message accepted, in bytes (account mail is a few hundred). */
const maxMessageBytes = 256 * 1024;

function decodeQuotedPrintable(text: string): string {
  const bytes = text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** Headers and text of a single-part message as nodemailer sends it (7bit, quoted-printable or base64). */
export function parseMessage(raw: string): Omit<SinkMessage, 'receivedAt'> {
  const split = raw.search(/\r?\n\r?\n/);
  const head = (split < 0 ? raw : raw.slice(0, split)).replace(/\r?\n[ \t]+/g, ' ');
  const body = split < 0 ? '' : raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  const text =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
      : encoding === 'quoted-printable'
        ? decodeQuotedPrintable(body)
        : body;
  const header = (name: string) => headers.get(name) ?? '';
  return {
    to: header('to'),
    from: header('from'),
    subject: header('subject'),
    text: text.replace(/\r\n/g, '\n'),
  };
}

function page(messages: readonly SinkMessage[]): string {
  const rows = [...messages].reverse().map((m) => {
    // Links become clickable; everything else stays escaped text.
    const parts = m.text.split(/(https?:\/\/[^\s<>"]+)/g);
    const linked = parts.map((part, i) => (i % 2 === 1 ? html`<a href="${part}">${part}</a>` : part));
    return html`<article>
      <h2>${m.subject}</h2>
      <p><b>To</b> ${m.to} · <b>From</b> ${m.from} · ${m.receivedAt}</p>
      <pre>${linked}</pre>
    </article>`;
  });
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Demo mail · Portico</title>
        <meta name="viewport" content="width=device-width, initial-scale=1" />
      </head>
      <body style="font-family: system-ui, sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem">
        <h1>Demo mail</h1>
        <p>Messages the demo's SMTP sink received, newest first. Reload to see new ones.</p>
        ${rows.length > 0 ? rows : html`<p>No messages yet.</p>`}
      </body>
    </html>`.value;
}

export interface MailSinkOptions {
  smtpPort?: number;
  pagePort?: number;
  /** Demand this user and password (AUTH PLAIN/LOGIN), as a real relay does. */
  auth?: { user: string; pass: string };
}

/** Starts the sink's SMTP server and page on 127.0.0.1 (port 0: free ports). */
export async function startMailSink(options: MailSinkOptions = {}): Promise<MailSink> {
  const messages: SinkMessage[] = [];
  const auth = options.auth;
  const smtp = new SMTPServer({
    secure: false,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    // Loopback only: a password in clear over 127.0.0.1 leaves the machine nowhere.
    allowInsecureAuth: true,
    authOptional: !auth,
    size: maxMessageBytes,
    logger: false,
    onAuth(login, _session, callback) {
      const valid = auth !== undefined && login.username === auth.user && login.password === auth.pass;
      if (valid) return callback(null, { user: login.username });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const parsed = parseMessage(Buffer.concat(chunks).toString('utf8'));
        messages.push({ ...parsed, receivedAt: new Date().toISOString() });
        if (messages.length > keptMessages) messages.splice(0, messages.length - keptMessages);
        callback();
      });
    },
  });
  let starting: ((error: Error) => void) | undefined;
  // A client's broken connection is an 'error' event too: without a listener it would end the process.
  smtp.on('error', (error: Error) => starting?.(error));
  await new Promise<void>((resolve, reject) => {
    starting = reject;
    smtp.listen(options.smtpPort ?? 0, '127.0.0.1', () => resolve());
  });
  starting = undefined;
  const web = createServer((request, response) => {
    response.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
    response.end(page(messages));
  });
  await new Promise<void>((resolve, reject) => {
    web.once('error', reject);
    web.listen(options.pagePort ?? 0, '127.0.0.1', () => resolve());
  });
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    smtpUrl: `smtp://${credentials}127.0.0.1:${smtpPort}`,
    pageUrl: `http://127.0.0.1:${(web.address() as AddressInfo).port}/`,
    messages,
    async close() {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await new Promise<void>((resolve) => {
        web.close(() => resolve());
        web.closeAllConnections();
      });
    },
  };
}
