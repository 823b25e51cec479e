import { config } from '#lib/config.ts';
import type { Mailer } from '#lib/mail/message.ts';
import { outboxMailer } from '#lib/mail/outbox.ts';
import { sesMailer } from '#lib/mail/ses.ts';

/**
 * Amazon SES when deployed; the outbox file on the local stack (config.mailer). Importing this
 * module bundles the SES client: only the flow that sends mail (lib/flows/login-code.ts) does.
 */
export const mailer = (): Mailer => (config.mailer === 'ses' ? sesMailer : outboxMailer);
