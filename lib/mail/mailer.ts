import { config } from '#lib/config.ts';
import { outboxMailer } from '#lib/mail/outbox.ts';
import { sesMailer } from '#lib/mail/ses.ts';

export interface MailMessage {
  /** The store the message speaks for. */
  storeDomain: string;
  to: string;
  subject: string;
  text: string;
  /** The one-time code the text carries; only the local outbox records it on its own. */
  code?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Amazon SES when deployed; the outbox file on the local stack (config.mailer). */
export const mailer = (): Mailer => (config.mailer === 'ses' ? sesMailer : outboxMailer);
