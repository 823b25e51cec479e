import { randomUUID, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationCheck } from '#lib/payments/adapter.ts';
import { paypalEventRefs, paypalSignedMessage, paypalVerifier } from '#lib/payments/paypal.ts';
import { makeTestPki, type TestPki } from '../support/test-pki.ts';

/**
 * PayPal's transmission signature, verified locally: a root, an intermediate and a signing leaf
 * made per run with openssl, messages signed in the documented format
 * (`<transmission id>|<time>|<webhook id>|<crc32 of the body>`, SHA256withRSA), and each way a
 * notification can be forged refused. The certificate is served on loopback for PayPal's URL
 * (what `PAYPAL_API_URL` does on the local stack).
 */
const WEBHOOK_ID = '1JE4291016473214C';
const CERT_URL = 'https://api-m.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77';
const BODY = JSON.stringify({ id: 'WH-1', event_type: 'CHECKOUT.ORDER.APPROVED', resource: { id: '5O190127TN364715T', status: 'APPROVED', amount: { value: '10.00' } } });

let pki: TestPki;
let stranger: TestPki;
let wrongName: TestPki;
let served: string;
let server: Server;
let origin: string;
let certFetches = 0;

beforeAll(async () => {
  [pki, stranger, wrongName] = [makeTestPki(), makeTestPki(), makeTestPki({ cn: 'messageverificationcerts.paypal.com.evil.example' })];
  served = pki.chainPem;
  server = createServer((req, res) => {
    certFetches += 1;
    res.writeHead(req.url?.startsWith('/v1/notifications/certs/') ? 200 : 404).end(served);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 30_000);
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const headersFor = (body: string, options: { webhookId?: string; key?: string; certUrl?: string; algo?: string } = {}) => {
  const transmissionId = randomUUID();
  const transmissionTime = new Date().toISOString();
  return {
    'paypal-transmission-id': transmissionId,
    'paypal-transmission-time': transmissionTime,
    'paypal-transmission-sig': sign(
      'sha256',
      Buffer.from(paypalSignedMessage(transmissionId, transmissionTime, options.webhookId ?? WEBHOOK_ID, body)),
      options.key ?? pki.leafKeyPem,
    ).toString('base64'),
    'paypal-cert-url': options.certUrl ?? CERT_URL,
    'paypal-auth-algo': options.algo ?? 'SHA256withRSA',
  };
};

/** A fresh verifier (an empty certificate cache) trusting this run's root. */
const verifier = () => paypalVerifier({ trustedRoots: [pki.rootPem], certOrigin: origin });
const check = (body: string, headers: Record<string, string | undefined>, now = Date.now(), secret: string | null = WEBHOOK_ID): Promise<NotificationCheck> =>
  verifier()({ rawBody: body, headers, query: {}, secret, now });

describe('the PayPal transmission signature', () => {
  it('signs the documented message: the CRC32 of the raw body in unsigned decimal', () => {
    expect(paypalSignedMessage('id-1', '2026-11-26T12:00:00Z', WEBHOOK_ID, BODY)).toBe(`id-1|2026-11-26T12:00:00Z|${WEBHOOK_ID}|${crc32(Buffer.from(BODY))}`);
    expect(paypalSignedMessage('a', 'b', 'c', '\u00ff')).toBe(`a|b|c|${crc32(Buffer.from([0xc3, 0xbf]))}`);
  });

  it('accepts a notification signed by the leaf of a chain to a trusted root, and names the order', async () => {
    await expect(check(BODY, headersFor(BODY))).resolves.toEqual({ outcome: 'verified', refs: ['5O190127TN364715T'] });
  });

  it('refuses a changed body and a signature made for another webhook_id', async () => {
    expect(await check(BODY.replace('10.00', '99.00'), headersFor(BODY))).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/SIG/) });
    expect(await check(BODY, headersFor(BODY, { webhookId: 'OTHERWEBHOOK0001' }))).toMatchObject({ outcome: 'refused' });
    expect(await check(BODY, headersFor(BODY), Date.now(), 'OTHERWEBHOOK0001')).toMatchObject({ outcome: 'refused' });
  });

  it('refuses a chain to no trusted root, and a leaf whose key did not sign', async () => {
    served = stranger.chainPem;
    try {
      expect(await check(BODY, headersFor(BODY, { key: stranger.leafKeyPem }))).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/no trusted root/) });
    } finally {
      served = pki.chainPem;
    }
    expect(await check(BODY, headersFor(BODY, { key: stranger.leafKeyPem }))).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/SIG/) });
  });

  it("refuses a leaf that is not PayPal's message-verification certificate", async () => {
    const trusting = paypalVerifier({ trustedRoots: [wrongName.rootPem], certOrigin: origin });
    served = wrongName.chainPem;
    try {
      const result = await trusting({ rawBody: BODY, headers: headersFor(BODY, { key: wrongName.leafKeyPem }), query: {}, secret: WEBHOOK_ID, now: Date.now() });
      expect(result).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/not PayPal's/) });
    } finally {
      served = pki.chainPem;
    }
  });

  it('refuses a certificate outside its dates (expired, or not yet valid)', async () => {
    const day = 86_400_000;
    expect(await check(BODY, headersFor(BODY), Date.now() + 4 * day)).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/dates/) });
    expect(await check(BODY, headersFor(BODY), Date.now() - day)).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/dates/) });
  });

  it("refuses a certificate URL off PayPal's hosts, before fetching anything", async () => {
    const before = certFetches;
    for (const certUrl of [
      'https://evil.example/v1/notifications/certs/CERT-1',
      'https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1',
      'http://api.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com:8443/v1/notifications/certs/CERT-1',
      'https://api.paypal.com/v1/oauth2/token',
      'https://user@api.paypal.com.evil.example/v1/notifications/certs/CERT-1',
      'not a url',
    ]) {
      expect(await check(BODY, headersFor(BODY, { certUrl })), certUrl).toMatchObject({ outcome: 'refused' });
    }
    expect(certFetches).toBe(before);
  });

  it('refuses another algorithm, missing headers and a store with no webhook_id', async () => {
    expect(await check(BODY, headersFor(BODY, { algo: 'SHA1withRSA' }))).toMatchObject({ outcome: 'refused' });
    const { 'paypal-transmission-sig': _sig, ...unsigned } = headersFor(BODY);
    expect(await check(BODY, unsigned)).toMatchObject({ outcome: 'refused' });
    expect(await check(BODY, headersFor(BODY), Date.now(), null)).toMatchObject({ outcome: 'refused' });
  });

  it('fetches the certificate once per URL and keeps it', async () => {
    const verify = verifier();
    const before = certFetches;
    for (let index = 0; index < 3; index += 1) {
      expect((await verify({ rawBody: BODY, headers: headersFor(BODY), query: {}, secret: WEBHOOK_ID, now: Date.now() })).outcome).toBe('verified');
    }
    expect(certFetches - before).toBe(1);
  });
});

describe('what a verified PayPal event names', () => {
  const refs = (eventType: string, resource: unknown) => paypalEventRefs(JSON.stringify({ id: 'WH-2', event_type: eventType, resource }));

  it('the order of an approval, a completion and a reversed approval', () => {
    expect(refs('CHECKOUT.ORDER.APPROVED', { id: 'ORDER0000000001' })).toEqual({ outcome: 'verified', refs: ['ORDER0000000001'] });
    expect(refs('CHECKOUT.PAYMENT-APPROVAL.REVERSED', { order_id: 'ORDER0000000001' })).toEqual({ outcome: 'verified', refs: ['ORDER0000000001'] });
  });

  it("a capture event's order (supplementary_data), else the capture; a refund's or reversal's capture by its up link", () => {
    expect(refs('PAYMENT.CAPTURE.COMPLETED', { id: 'CAPTURE00000001', supplementary_data: { related_ids: { order_id: 'ORDER0000000001' } } })).toEqual({
      outcome: 'verified',
      refs: ['ORDER0000000001'],
    });
    expect(refs('PAYMENT.CAPTURE.DENIED', { id: 'CAPTURE00000001' })).toEqual({ outcome: 'verified', refs: ['CAPTURE00000001'] });
    const refund = { id: 'REFUND000000001', links: [{ rel: 'up', href: 'https://api.paypal.com/v2/payments/captures/CAPTURE00000001' }] };
    expect(refs('PAYMENT.CAPTURE.REFUNDED', refund)).toEqual({ outcome: 'verified', refs: ['CAPTURE00000001'] });
    expect(refs('PAYMENT.CAPTURE.REVERSED', refund)).toEqual({ outcome: 'verified', refs: ['CAPTURE00000001'] });
  });

  it("a dispute's disputed captures; nothing for other events", () => {
    expect(refs('CUSTOMER.DISPUTE.CREATED', { dispute_id: 'PP-D-1', disputed_transactions: [{ seller_transaction_id: 'CAPTURE00000001' }] })).toEqual({
      outcome: 'verified',
      refs: ['CAPTURE00000001'],
    });
    expect(refs('BILLING.SUBSCRIPTION.CREATED', { id: 'I-1' }).outcome).toBe('ignored');
    expect(refs('CHECKOUT.ORDER.APPROVED', { id: '../../admin' }).outcome).toBe('ignored');
  });
});
