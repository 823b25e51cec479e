import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ATTEMPTS_MAX,
  attemptOutcome,
  eventBody,
  eventIdOf,
  eventOrigin,
  eventsOf,
  isPublicAddress,
  isOrderDelivered,
  signatureHeader,
  signatureHeaders,
  standardWebhookKey,
  standardWebhookSecret,
  webhookUrlProblem,
} from '#lib/domain/webhook.ts';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '#lib/crypto.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { standardSecret, verifyDelivery, verifySignature } from '../../examples/webhook-receiver/receiver.ts';

describe('which changes are events', () => {
  const order = { entity: 'ORDER', store_id: 1, id: 7, status: 'PENDING' };
  it.each([
    [undefined, order, ['order.created']],
    [order, { ...order, status: 'APPROVED' }, ['order.approved']],
    [order, { ...order, status: 'CANCELED' }, ['order.canceled']],
    [{ ...order, status: 'APPROVED' }, { ...order, status: 'REFUNDED' }, ['order.refunded']],
    [{ ...order, status: 'APPROVED' }, { ...order, status: 'CHARGEBACK' }, ['order.chargeback']],
    [{ ...order, status: 'APPROVED' }, { ...order, status: 'APPROVED', commission_pending: false }, []],
  ])('order %j -> %j is %j', (old, item, types) => {
    expect(eventsOf({ old, new: item }).map((e) => e.type)).toEqual(types);
  });

  const command = { entity: 'COMMAND', store_id: 1, order_id: 7, status: 'PENDING', tries: 0 };
  it.each([
    [undefined, command, []],
    [command, { ...command, status: 'FAILED', tries: 1 }, ['command.failed']],
    // a failed ack that puts the command back on the queue: one more try, status PENDING
    [{ ...command, tries: 1 }, { ...command, tries: 2 }, ['command.failed']],
    [{ ...command, tries: 4 }, { ...command, status: 'DEAD', tries: 5 }, ['command.dead']],
    [{ ...command, status: 'FAILED', tries: 1 }, { ...command, status: 'FAILED', tries: 1, response: 'again' }, []],
    [command, { ...command, status: 'DONE' }, ['order.delivered']],
    [command, { ...command, status: 'DONE', stage: 'REFUNDED' }, []],
    [{ ...command, status: 'DONE' }, { ...command, status: 'DONE', response: 'x' }, []],
  ])('command %j -> %j is %j', (old, item, types) => {
    expect(eventsOf({ old, new: item }).map((e) => e.type)).toEqual(types);
  });

  it('a withdrawal request and a new chat message are events; a commission and an edited message are not', () => {
    expect(eventsOf({ new: { entity: ENTITY.AFFILIATE_TRANSACTION, operation: 'WITHDRAW_PENDING' } }).map((e) => e.type)).toEqual(['affiliate.withdrawal_requested']);
    expect(eventsOf({ new: { entity: ENTITY.AFFILIATE_TRANSACTION, operation: 'COMMISSION' } })).toEqual([]);
    expect(eventsOf({ new: { entity: 'CHAT_MESSAGE' } }).map((e) => e.type)).toEqual(['chat.message_created']);
    expect(eventsOf({ old: { entity: 'CHAT_MESSAGE' }, new: { entity: 'CHAT_MESSAGE' } })).toEqual([]);
    expect(eventsOf({ new: { entity: 'TAG' } })).toEqual([]);
    expect(eventsOf({ old: order })).toEqual([]);
  });

  const payment = { entity: 'PAYMENT', store_id: 1, order_id: 7, id: 'pay_x', status: 'CREATED', attention: null, provider_ref: null, revision: 1 };
  const pending = { ...payment, status: 'PENDING', provider_ref: 'tst_x', pix_code: '000201...', revision: 2 };
  it.each([
    // written CREATED before the provider call: nothing to pay with yet, no event
    [undefined, payment, []],
    // the provider's charge made: payment.created, with what the buyer pays with
    [payment, pending, ['payment.created']],
    // created with its provider object already known
    [undefined, pending, ['payment.created']],
    // the provider refused: CANCELED, never created
    [payment, { ...payment, status: 'CANCELED' }, []],
    [pending, { ...pending, status: 'FAILED' }, ['payment.failed']],
    [pending, { ...pending, status: 'EXPIRED' }, ['payment.expired']],
    [pending, { ...pending, status: 'CANCELED' }, []],
    [pending, { ...pending, status: 'PAID' }, []],
    [pending, { ...pending, attention: 'MISMATCH' }, ['payment.attention']],
    [{ ...pending, status: 'PAID' }, { ...pending, status: 'PAID', attention: 'DUPLICATE' }, ['payment.attention']],
    [{ ...pending, status: 'PAID', attention: 'DISPUTE_OPEN' }, { ...pending, status: 'PAID', attention: 'DISPUTE_WON' }, ['payment.attention']],
    // money after expiry: PAID with UNFULFILLED is one attention event, not a second expiry
    [{ ...pending, status: 'EXPIRED' }, { ...pending, status: 'PAID', attention: 'UNFULFILLED' }, ['payment.attention']],
    // an expiry that also flags: both events, from one change
    [pending, { ...pending, status: 'FAILED', attention: 'MISMATCH' }, ['payment.failed', 'payment.attention']],
    // cleared is not an event
    [{ ...pending, attention: 'MISMATCH' }, { ...pending, attention: null }, []],
  ])('payment %j -> %j is %j', (old, item, types) => {
    expect(eventsOf({ old, new: item }).map((e) => e.type)).toEqual(types);
  });

  it('a repeated write of a payment with nothing changed is no event, whatever its status and flag', () => {
    for (const status of ['CREATED', 'PENDING', 'FAILED', 'EXPIRED', 'PAID']) {
      for (const attention of [null, 'MISMATCH', 'DUPLICATE']) {
        const item = { ...payment, status, attention };
        // a raised revision and a new updated_at (a poll that found nothing new) change nothing an event is about
        expect(eventsOf({ old: item, new: { ...item, revision: 9, updated_at: '2026-11-26T12:00:00.000Z' } })).toEqual([]);
      }
    }
  });

  it("each crossing of a payment's life is sent once: a sequence of writes with repeats gives each event once", () => {
    const writes = [
      payment,
      payment,
      pending,
      pending,
      { ...pending, attention: 'MISMATCH' },
      { ...pending, attention: 'MISMATCH' },
      { ...pending, status: 'EXPIRED', attention: 'MISMATCH' },
      { ...pending, status: 'EXPIRED', attention: 'MISMATCH' },
      { ...pending, status: 'PAID', attention: 'UNFULFILLED' },
      { ...pending, status: 'PAID', attention: 'UNFULFILLED' },
    ];
    const types = writes.flatMap((item, index) => eventsOf({ old: writes[index - 1], new: item }).map((e) => e.type));
    expect(types).toEqual(['payment.created', 'payment.attention', 'payment.expired', 'payment.attention']);
  });

  it('an order is delivered when every APPROVED-stage command is DONE', () => {
    expect(isOrderDelivered([{ status: 'DONE' }, { status: 'DONE', stage: 'APPROVED' }, { status: 'PENDING', stage: 'EXPIRED' }])).toBe(true);
    expect(isOrderDelivered([{ status: 'DONE' }, { status: 'FAILED' }])).toBe(false);
    expect(isOrderDelivered([{ status: 'PENDING', stage: 'EXPIRED' }])).toBe(false);
    expect(isOrderDelivered([])).toBe(false);
  });

  it('derives stable event ids: one per stream record and type, one order.delivered per order', () => {
    expect(eventIdOf(eventOrigin('order.created', 'rec-1', 1, 7))).toBe(eventIdOf(eventOrigin('order.created', 'rec-1', 1, 7)));
    expect(eventIdOf(eventOrigin('order.created', 'rec-1', 1, 7))).not.toBe(eventIdOf(eventOrigin('order.created', 'rec-2', 1, 7)));
    expect(eventIdOf(eventOrigin('order.delivered', 'rec-1', 1, 7))).toBe(eventIdOf(eventOrigin('order.delivered', 'rec-9', 1, 7)));
    expect(eventIdOf(eventOrigin('order.delivered', 'rec-1', 2, 7))).not.toBe(eventIdOf(eventOrigin('order.delivered', 'rec-1', 1, 7)));
    // a payment change that is two events (failed and flagged at once) names two; a replay of the record names the same two
    expect(eventIdOf(eventOrigin('payment.failed', 'rec-3', 1, 7))).not.toBe(eventIdOf(eventOrigin('payment.attention', 'rec-3', 1, 7)));
    expect(eventIdOf(eventOrigin('payment.attention', 'rec-3', 1, 7))).toBe(eventIdOf(eventOrigin('payment.attention', 'rec-3', 1, 7)));
  });
});

describe('retry schedule', () => {
  it('waits about 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, then fails the event', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) => attemptOutcome(false, attempt));
    expect(delays).toEqual([60, 300, 1800, 7200, 21600, 43200].map((s) => ({ kind: 'retry', delayMs: s * 1000 })));
    expect(attemptOutcome(false, ATTEMPTS_MAX)).toEqual({ kind: 'failed' });
    expect(attemptOutcome(true, 3)).toEqual({ kind: 'delivered' });
    expect(attemptOutcome(false, 1, 0.001)).toEqual({ kind: 'retry', delayMs: 60 });
  });
});

describe('signature', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, and the example receiver accepts exactly it', () => {
    const body = eventBody({ id: 'evt_1', type: 'order.created', created_at: '2026-01-01T00:00:00.000Z', store_id: 1, data: { id: 7 } });
    const header = signatureHeader('whsec_s', body, 1_800_000_000_500);
    expect(header).toBe(`t=1800000000,v1=${createHmac('sha256', 'whsec_s').update(`1800000000.${body}`).digest('hex')}`);
    expect(verifySignature('whsec_s', body, header, 1_800_000_010)).toBe(true);
    expect(verifySignature('whsec_s', `${body} `, header, 1_800_000_010)).toBe(false);
    expect(verifySignature('whsec_other', body, header, 1_800_000_010)).toBe(false);
    expect(verifySignature('whsec_s', body, header, 1_800_000_400)).toBe(false);
    expect(verifySignature('whsec_s', body, undefined)).toBe(false);
  });
});

describe('Standard Webhooks headers', () => {
  const body = eventBody({ id: 'evt_1', type: 'order.created', created_at: '2026-01-01T00:00:00.000Z', store_id: 1, data: { id: 7 } });
  it('sign "<id>.<t>.<body>" with the key a new secret names, as the standardwebhooks library checks it, beside X-Store-Signature at the same t', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const nowMs = Date.now();
    const headers = signatureHeaders(secret, 'evt_1', body, nowMs);
    const t = Math.floor(nowMs / 1000);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(t));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('evt_1', new Date(t * 1000), body));
    expect(headers['x-store-signature']).toBe(signatureHeader(secret, body, nowMs));
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verifyDelivery(secret, body, headers)?.id).toBe('evt_1');
    expect(verifyDelivery(secret, `${body} `, headers)).toBeNull();
    expect(verifyDelivery(newWebhookSecret(), body, headers)).toBeNull();
    expect(verifyDelivery(secret, body, { ...headers, 'webhook-id': 'evt_2' })).toBeNull();
    expect(verifyDelivery(secret, body, { ...headers, 'webhook-timestamp': String(t - 600) })).toBeNull();
  });

  it('read an older base64url secret as the same 32 bytes, whose library form standardSecret gives', () => {
    const bytes = Buffer.from('fb'.repeat(32), 'hex');
    const older = `whsec_${bytes.toString('base64url')}`;
    expect(older).toMatch(/[-_]/);
    expect(standardWebhookKey(older)).toEqual(bytes);
    expect(standardSecret(older)).toBe(`whsec_${bytes.toString('base64')}`);
    expect(standardWebhookSecret(older)).toBe(standardSecret(older));
    const headers = signatureHeaders(older, 'evt_1', body, Date.now());
    expect(() => new Webhook(older)).toThrow();
    expect(verifyDelivery(older, body, headers)?.id).toBe('evt_1');
  });
});

describe('URL safety', () => {
  const deployed = { localTargets: false };
  const local = { localTargets: true };
  it.each([
    ['https://hooks.example.com/x', undefined],
    ['http://hooks.example.com/x', 'https'],
    ['https://localhost/x', 'public host'],
    ['https://metadata.google.internal/x', 'public host'],
    ['https://127.0.0.1/x', 'private'],
    ['https://10.1.2.3/x', 'private'],
    ['https://172.16.0.1/x', 'private'],
    ['https://192.168.1.1/x', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'private'],
    ['https://0x7f.0.0.1/x', 'private'],
    ['https://2130706433/x', 'private'],
    ['https://[::1]/x', 'private'],
    ['https://[fd00:ec2::254]/x', 'private'],
    ['https://[::ffff:10.0.0.1]/x', 'private'],
    ['https://u:p@hooks.example.com/x', 'credentials'],
    ['ftp://hooks.example.com/x', 'https'],
  ])('deployed: %s -> %s', (url, problem) => {
    const found = webhookUrlProblem(url, deployed);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('on the local stack allows http only to localhost and 127.0.0.1', () => {
    expect(webhookUrlProblem('http://127.0.0.1:4000/x', local)).toBeUndefined();
    expect(webhookUrlProblem('http://localhost:4000/x', local)).toBeUndefined();
    expect(webhookUrlProblem('http://192.168.1.5/x', local)).toContain('https');
    expect(webhookUrlProblem('http://127.0.0.1:4000/x', deployed)).toContain('https');
  });

  // Every written form section 12 lists: an IPv4 address inside an IPv6 one (mapped, SIIT,
  // compatible, NAT64, 6to4) and the URL's decimal, hex and octal IPv4 forms.
  const inward = [
    '::a9fe:a9fe', // compatible: 169.254.169.254
    '::7f00:1', // compatible: 127.0.0.1
    '64:ff9b::7f00:1', // NAT64: 127.0.0.1
    '64:ff9b::a9fe:a9fe', // NAT64: 169.254.169.254
    '64:ff9b:1::a00:1', // NAT64 local-use prefix
    '::ffff:0:7f00:1', // SIIT: 127.0.0.1
    '::ffff:7f00:1',
    '::ffff:127.0.0.1',
    '::ffff:192.168.0.1', // mapped
    '2002:a00:1::', // 6to4: 10.0.0.1
    '2002:7f00:1::1', // 6to4: 127.0.0.1
    '2002:a9fe:a9fe::', // 6to4: 169.254.169.254
    '2001::1', // Teredo
    '127.0.0.1',
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.2.1',
    '240.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '100::1',
    '2001:db8::1',
  ];
  it.each(inward)('refuses %s, as resolved or connected to', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each(['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])('lets %s through', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
  it('refuses what is not an address at all', () => {
    expect(isPublicAddress('')).toBe(false);
    expect(isPublicAddress('hooks.example.com')).toBe(false);
  });
  it.each(
    [
      ...inward.map((address) => `https://[${address}]/x`).filter((url) => url.includes(':')),
      'https://[::a9fe:a9fe]/latest/meta-data',
      'https://[64:ff9b::7f00:1]/x',
      'https://[::ffff:0:7f00:1]/x',
      'https://[2002:a00:1::]/x',
      'https://0x7f000001/x',
      'https://017700000001/x',
      'https://0xa9.0xfe.0xa9.0xfe/x',
      'https://2852039166/x',
      'https://127.1/x',
    ].filter((url) => !/\[\d+\.\d+\.\d+\.\d+\]/.test(url)),
  )('deployed: refuses the URL %s', (url) => {
    expect(webhookUrlProblem(url, deployed)).toContain('private');
  });
});
