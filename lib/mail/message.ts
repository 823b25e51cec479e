/**
 * What a mailer sends and the one method every mailer has. Its own module so that the mailers
 * (outbox, SES) and the choice between them (mailer.ts) depend on it, never on each other.
 */
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
