/**
 * Account email (verification, password reset, "someone tried to sign up with your address")
 * through a real SMTP server, `PORTICO_SMTP_URL`, by nodemailer. Messages leave in the
 * background: a request never waits for the SMTP server, so how long a page takes does not
 * tell whether a message was sent (sign-up and "forgot password" stay neutral), and a slow or
 * failing server cannot stall the portal. Failures are logged, never shown to the visitor.
 */
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Settings } from '../config/config.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** What a mail transport must do: nodemailer's, or none when mail is not configured. */
export interface MailTransport {
  sendMail(message: MailMessage & { from: string }): Promise<unknown>;
  close(): void;
}

/** Most messages on their way at once; beyond it new ones are dropped (logged) rather than queued without end. */
export const mailQueueLimit = 100;

export class Mailer {
  private pending = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly transport: MailTransport,
    private readonly from: string,
    private readonly logger: Logger,
  ) {}

  /** Sends `message` in the background; see the module comment. */
  post(message: MailMessage): void {
    if (this.pending >= mailQueueLimit) {
      const fields = { subject: message.subject, limit: mailQueueLimit };
      this.logger.warn(fields, 'mail dropped: too many messages in flight');
      return;
    }
    this.pending++;
    const sending = this.transport
      .sendMail({ ...message, from: this.from })
      .then(() => this.logger.debug({ subject: message.subject }, 'mail sent'))
      .catch((error: unknown) => this.logger.error({ err: error, subject: message.subject }, 'mail could not be sent'))
      .finally(() => {
        this.pending--;
        this.inFlight.delete(sending);
      });
    this.inFlight.add(sending);
  }

  /** Waits for the messages on their way, then closes the transport's connections. */
  async close(): Promise<void> {
    await Promise.all(this.inFlight);
    this.transport.close();
  }
}

/** The mailer for `PORTICO_SMTP_URL`, or undefined when none is set (accounts then stay unverified). */
export function createMailer(settings: Pick<Settings, 'smtpUrl' | 'mailFrom'>, logger: Logger): Mailer | undefined {
  if (!settings.smtpUrl) return undefined;
  // A pool of two connections: account mail is rare, and a burst should not open a socket per message.
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    pool: true,
    maxConnections: 2,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return new Mailer(transport as unknown as MailTransport, settings.mailFrom, logger.child({ part: 'mail' }));
}
