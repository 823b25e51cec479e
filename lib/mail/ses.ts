import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '#lib/config.ts';
import type { Mailer } from '#lib/mail/message.ts';

/** One client per process, created at init (no network until the first send). */
export const sesClient = new SESv2Client({ region: config.region });

/** Amazon SES (v2 SendEmail): a plain-text message from config.mailFrom. */
export const sesMailer: Mailer = {
  async send(message) {
    await sesClient.send(
      new SendEmailCommand({
        FromEmailAddress: config.mailFrom,
        Destination: { ToAddresses: [message.to] },
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: message.text, Charset: 'UTF-8' } },
          },
        },
      }),
    );
  },
};
