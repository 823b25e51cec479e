import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mailer } from '#lib/mail/mailer.ts';
import { outboxMailer } from '#lib/mail/outbox.ts';
import { sesClient, sesMailer } from '#lib/mail/ses.ts';

const message = { storeDomain: 'shop.example.com', to: 'ana@example.com', subject: 'Your login code', text: 'Your code is 123456.', code: '123456' };

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('mailers', () => {
  it('picks SES when MAILER=ses, the outbox otherwise', () => {
    vi.stubEnv('MAILER', 'ses');
    expect(mailer()).toBe(sesMailer);
    vi.stubEnv('MAILER', '');
    expect(mailer()).toBe(outboxMailer);
  });

  it('sends through SES v2 SendEmail from MAIL_FROM', async () => {
    vi.stubEnv('MAIL_FROM', 'login@shop.example.com');
    const send = vi.spyOn(sesClient, 'send').mockResolvedValue({} as never);
    await sesMailer.send(message);
    const command = send.mock.calls[0]![0] as SendEmailCommand;
    expect(command).toBeInstanceOf(SendEmailCommand);
    expect(command.input).toEqual({
      FromEmailAddress: 'login@shop.example.com',
      Destination: { ToAddresses: ['ana@example.com'] },
      Content: { Simple: { Subject: { Data: 'Your login code', Charset: 'UTF-8' }, Body: { Text: { Data: 'Your code is 123456.', Charset: 'UTF-8' } } } },
    });
  });

  it('appends one JSON line per message to the outbox file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'outbox-')), 'nested', 'outbox.jsonl');
    vi.stubEnv('OUTBOX_FILE', file);
    await Promise.all([outboxMailer.send(message), outboxMailer.send({ ...message, to: 'bob@example.com', code: '654321' })]);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual({ store_domain: 'shop.example.com', to: 'ana@example.com', subject: 'Your login code', text: 'Your code is 123456.', code: '123456' });
    expect(lines.map((line) => line.to).sort()).toEqual(['ana@example.com', 'bob@example.com']);
  });
});
