import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { config } from '#lib/config.ts';
import type { Mailer } from '#lib/mail/message.ts';

/**
 * The local stack's mailer: each message becomes one JSON line of the outbox file, where a
 * developer (or a test) reads the login code. One append per message keeps lines whole when
 * requests run concurrently.
 */
export const outboxMailer: Mailer = {
  async send(message) {
    const file = config.outboxFile;
    await mkdir(dirname(file), { recursive: true });
    const line = { store_domain: message.storeDomain, to: message.to, subject: message.subject, text: message.text, code: message.code ?? null };
    await appendFile(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  },
};
