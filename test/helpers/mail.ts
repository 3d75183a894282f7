/** Reading the demo's SMTP sink in tests: wait for a message, take a link out of it. */
import type { MailSink, SinkMessage } from '../../src/cli/mail-sink.ts';

/** The first message to `to` whose subject matches, among those after the first `skip`; waits up to `timeoutMs`. */
export async function waitForMail(
  sink: MailSink,
  to: string,
  subject: RegExp,
  timeoutMs = 10_000,
): Promise<SinkMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = sink.messages.find((m) => m.to.toLowerCase().includes(to.toLowerCase()) && subject.test(m.subject));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every message to `to` so far. */
export function mailTo(sink: MailSink, to: string): SinkMessage[] {
  return sink.messages.filter((m) => m.to.toLowerCase().includes(to.toLowerCase()));
}

/** The link to `path` in a message (the whole absolute URL). */
export function linkIn(message: SinkMessage, path: string): string {
  const match = new RegExp(`https?://[^\\s]+${path.replace(/[/?]/g, '\\$&')}[^\\s]*`).exec(message.text);
  if (!match) throw new Error(`no ${path} link in: ${message.text}`);
  return match[0];
}

/** The verification link sent to `email` (the latest). */
export async function verificationLink(sink: MailSink, email: string): Promise<string> {
  await waitForMail(sink, email, /Verify your email/);
  const latest = mailTo(sink, email)
    .filter((m) => /Verify your email/.test(m.subject))
    .at(-1)!;
  return linkIn(latest, '/verify-email?token=');
}
