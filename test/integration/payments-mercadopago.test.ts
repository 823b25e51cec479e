import { createServer, type Server } from 'node:http';
import { MercadoPagoConfig, Payment, PaymentRefund, Preference } from 'mercadopago';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProviderError, type ChargeRequest, type NotificationCheck, type ProviderCredentials } from '#lib/payments/adapter.ts';
import { mercadoPagoAdapter } from '#lib/payments/mercadopago.ts';
import { startFakeMercadoPago, type FakeMercadoPago } from '../support/fake-mercadopago.ts';

/**
 * The Mercado Pago adapter over HTTP against the fake Mercado Pago (test/support/fake-mercadopago.ts):
 * the requests it sends (paths, headers, bodies, idempotency keys), the answers it reads, and
 * what it does when Mercado Pago is down, slow or failing. A short timeout keeps the timeout cases fast.
 */
const TOKEN = 'APP_USR-store-one';
const OTHER_TOKEN = 'APP_USR-store-two';
const ACCOUNT = 123_456_789;
const TIMEOUT_MS = 300;

let fake: FakeMercadoPago;
const adapter = () => mercadoPagoAdapter({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
const credentials: ProviderCredentials = { secrets: { access_token: TOKEN, webhook_secret: 'whsec-one' }, accountId: String(ACCOUNT) };

const charge = (overrides: Partial<ChargeRequest['payment']> = {}, extra: Partial<ChargeRequest> = {}): ChargeRequest => ({
  payment: { id: `pay_${Math.random().toString(36).slice(2)}`, gateway: 'PIX', amount: 25.5, currency: 'BRL', expires_at: '2026-11-26T10:30:00.000Z', ...overrides },
  order: { id: 42, internal_id: 'int-42', description: 'Order #42', payer: { email: 'alex@example.com', name: 'Alex Doe', document: null } },
  notificationUrl: 'https://api.example.com/v1/payment/notify/mercadopago/key',
  returnUrl: 'https://shop.example.com/return',
  ...extra,
});

const failureOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return (error as ProviderError).failure;
};

beforeAll(async () => {
  fake = await startFakeMercadoPago();
  fake.addAccount(TOKEN, ACCOUNT);
  fake.addAccount(OTHER_TOKEN, 987_654_321);
});
afterAll(() => fake.stop());
afterEach(() => fake.recover());

describe('the credential check: GET /users/me', () => {
  it('names the account of a valid token', async () => {
    await expect(adapter().checkCredentials({ access_token: TOKEN })).resolves.toEqual({ accountId: String(ACCOUNT) });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/users/me', headers: { authorization: `Bearer ${TOKEN}` } });
  });

  it('refuses a wrong token as credentials, and a down provider as unavailable', async () => {
    expect(await failureOf(adapter().checkCredentials({ access_token: 'APP_USR-wrong' }))).toBe('credentials');
    fake.fail('down');
    expect(await failureOf(adapter().checkCredentials({ access_token: TOKEN }))).toBe('unavailable');
  });
});

describe('PIX: POST /v1/payments', () => {
  it('creates a PIX charge and answers the PIX screen: pix_code, qr_code, expires_at', async () => {
    const request = charge();
    const created = await adapter().createCharge(credentials, request);
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/payments', headers: { 'x-idempotency-key': `create:${request.payment.id}`, authorization: `Bearer ${TOKEN}` } });
    expect(sent.body).toEqual({
      transaction_amount: 25.5,
      description: 'Order #42',
      payment_method_id: 'pix',
      external_reference: request.payment.id,
      notification_url: request.notificationUrl,
      date_of_expiration: '2026-11-26T10:30:00.000+00:00',
      payer: { email: 'alex@example.com', first_name: 'Alex', last_name: 'Doe' },
    });
    expect(created).toMatchObject({ checkout_url: null, expires_at: '2026-11-26T10:30:00.000Z' });
    expect(created.pix_code).toMatch(/^000201/);
    expect(Buffer.from(created.qr_code!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(created.snapshot).toEqual({
      provider_ref: created.provider_ref,
      reference: request.payment.id,
      account: String(ACCOUNT),
      amount_cents: 2550,
      currency: 'BRL',
      status: 'PENDING',
      refunded_cents: 0,
      dispute: null,
      paid_at: null,
    });
  });

  it('sends the CPF when the buyer gave one', async () => {
    await adapter().createCharge(
      credentials,
      charge({}, { order: { id: 1, internal_id: 'i', description: 'Order #1', payer: { email: 'a@example.com', name: 'Ana', document: '12345678909' } } }),
    );
    expect(fake.requests.at(-1)!.body).toMatchObject({ payer: { identification: { type: 'CPF', number: '12345678909' } } });
  });

  it('retries a lost answer once with the same key, and Mercado Pago answers the first payment: one charge, not two', async () => {
    const request = charge();
    const before = fake.payments.size;
    fake.slowMs = TIMEOUT_MS + 100;
    fake.fail('slow', 1);
    const created = await adapter().createCharge(credentials, request);
    const keys = fake.requests.slice(-2).map((seen) => seen.headers['x-idempotency-key']);
    expect(keys).toEqual([`create:${request.payment.id}`, `create:${request.payment.id}`]);
    // The first attempt, given up on, still reaches Mercado Pago: its repeated key makes it the same payment.
    await new Promise((done) => setTimeout(done, 300));
    expect(fake.payments.size).toBe(before + 1);
    expect(Number(created.provider_ref)).toBe([...fake.payments.keys()].at(-1));
    const again = await adapter().createCharge(credentials, request);
    expect(again.provider_ref).toBe(created.provider_ref);
    expect(fake.payments.size).toBe(before + 1);
  });

  it.each([
    ['down', 'unreachable'],
    ['slow', `no answer within ${TIMEOUT_MS} ms`],
    ['error', 'HTTP 500'],
  ] as const)('Mercado Pago %s twice: unavailable after exactly one retry', async (kind, message) => {
    const before = fake.requests.length;
    fake.fail(kind, 2);
    const error = await adapter()
      .createCharge(credentials, charge())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ failure: 'unavailable', message: expect.stringContaining(message) });
    expect(fake.requests.length - before).toBe(2);
  });

  it('a refusal (400) is refused at once, not retried; a revoked token is credentials', async () => {
    const before = fake.requests.length;
    const error = await adapter()
      .createCharge(credentials, charge({ amount: 0 }))
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ failure: 'refused', status: 400, message: expect.stringContaining('transaction_amount') });
    expect(fake.requests.length - before).toBe(1);
    expect(await failureOf(adapter().createCharge({ ...credentials, secrets: { access_token: 'APP_USR-revoked' } }, charge()))).toBe('credentials');
  });

  it('never names the access token in an error, whatever went wrong', async () => {
    const messages: string[] = [];
    const collect = (promise: Promise<unknown>) => promise.catch((error: Error) => void messages.push(`${error.name} ${error.message} ${error.stack}`));
    await collect(adapter().createCharge({ ...credentials, secrets: { access_token: 'APP_USR-revoked-0000' } }, charge()));
    await collect(adapter().createCharge(credentials, charge({ amount: -1 })));
    fake.fail('down', 2);
    await collect(adapter().fetch(credentials, '1'));
    expect(messages).toHaveLength(3);
    for (const message of messages) expect(message).not.toMatch(/APP_USR/);
  });
});

describe('Checkout Pro: POST /checkout/preferences', () => {
  it('creates a preference and answers its checkout_url; its payments are found by our payment id', async () => {
    const request = charge({ gateway: 'MERCADOPAGO', expires_at: null });
    const created = await adapter().createCharge(credentials, request);
    expect(created).toMatchObject({ snapshot: null, pix_code: null, qr_code: null, checkout_url: expect.stringContaining(`pref_id=${created.provider_ref}`) });
    expect(fake.requests.at(-1)).toMatchObject({
      path: '/checkout/preferences',
      headers: { 'x-idempotency-key': `create:${request.payment.id}` },
      body: {
        items: [{ id: '42', title: 'Order #42', quantity: 1, unit_price: 25.5, currency_id: 'BRL' }],
        external_reference: request.payment.id,
        back_urls: { success: request.returnUrl, pending: request.returnUrl, failure: request.returnUrl },
        auto_return: 'approved',
      },
    });
    expect(await adapter().findByReference(credentials, request.payment.id)).toEqual([]);
    const rejected = fake.payPreference(created.provider_ref, 'rejected');
    const approved = fake.payPreference(created.provider_ref, 'approved');
    const found = await adapter().findByReference(credentials, request.payment.id);
    expect(found.map((snapshot) => [snapshot.provider_ref, snapshot.status])).toEqual([
      [String(approved.id), 'PAID'],
      [String(rejected.id), 'FAILED'],
    ]);
  });
});

describe('fetch, refund, cancel', () => {
  it.each([
    ['pending', 'pending_waiting_transfer', { status: 'PENDING', dispute: null }],
    ['in_process', 'pending_review_manual', { status: 'PENDING', dispute: null }],
    ['approved', 'accredited', { status: 'PAID', dispute: null }],
    ['in_mediation', 'in_mediation', { status: 'PAID', dispute: 'OPEN' }],
    ['rejected', 'cc_rejected_other_reason', { status: 'FAILED', dispute: null }],
    ['cancelled', 'expired', { status: 'EXPIRED', dispute: null }],
    ['cancelled', 'by_collector', { status: 'CANCELED', dispute: null }],
    ['refunded', 'refunded', { status: 'REFUNDED', dispute: null }],
    ['charged_back', 'settled', { status: 'CHARGEBACK', dispute: 'LOST' }],
    ['charged_back', 'reimbursed', { status: 'CHARGEBACK', dispute: 'WON' }],
  ] as const)('reads %s (%s) as %j', async (status, detail, expected) => {
    const created = await adapter().createCharge(credentials, charge());
    fake.setStatus(Number(created.provider_ref), status, detail);
    await expect(adapter().fetch(credentials, created.provider_ref)).resolves.toMatchObject(expected);
  });

  it("another account's payment is not found (a notification naming it fetches nothing)", async () => {
    const created = await adapter().createCharge(credentials, charge());
    expect(await failureOf(adapter().fetch({ secrets: { access_token: OTHER_TOKEN }, accountId: '987654321' }, created.provider_ref))).toBe('not_found');
  });

  it('refunds in full with refund:<id>, answers the refunded state, and a second refund (its answer lost) is no error', async () => {
    const request = charge();
    const created = await adapter().createCharge(credentials, request);
    fake.setStatus(Number(created.provider_ref), 'approved');
    const payment = { id: request.payment.id, gateway: 'PIX' as const, amount: 25.5, provider_ref: created.provider_ref, charge_ref: created.provider_ref };
    const refunded = await adapter().refund(credentials, payment);
    expect(refunded).toMatchObject({ status: 'REFUNDED', refunded_cents: 2550 });
    const refundCall = fake.requests.find((seen) => seen.path === `/v1/payments/${created.provider_ref}/refunds`)!;
    expect(refundCall.headers['x-idempotency-key']).toBe(`refund:${request.payment.id}`);
    await expect(adapter().refund(credentials, payment)).resolves.toMatchObject({ status: 'REFUNDED' });
    expect(fake.payments.get(Number(created.provider_ref))!.refunds).toHaveLength(1);
  });

  it('a refund with Mercado Pago down fails as unavailable and refunds nothing', async () => {
    const request = charge();
    const created = await adapter().createCharge(credentials, request);
    fake.setStatus(Number(created.provider_ref), 'approved');
    fake.fail('error', 2);
    const payment = { id: request.payment.id, gateway: 'PIX' as const, amount: 25.5, provider_ref: created.provider_ref, charge_ref: created.provider_ref };
    expect(await failureOf(adapter().refund(credentials, payment))).toBe('unavailable');
    expect(fake.payments.get(Number(created.provider_ref))!.status).toBe('approved');
  });

  it('refusing to refund a payment that took no money', async () => {
    const created = await adapter().createCharge(credentials, charge());
    const payment = { id: 'pay_x', gateway: 'PIX' as const, amount: 25.5, provider_ref: created.provider_ref, charge_ref: created.provider_ref };
    expect(await failureOf(adapter().refund(credentials, payment))).toBe('refused');
    expect(await failureOf(adapter().refund(credentials, { ...payment, gateway: 'MERCADOPAGO', charge_ref: null }))).toBe('refused');
  });

  it('cancels a pending PIX charge (PUT status cancelled, cancel:<id>) and ends a preference', async () => {
    const request = charge();
    const created = await adapter().createCharge(credentials, request);
    await adapter().cancel(credentials, { id: request.payment.id, gateway: 'PIX', amount: 25.5, provider_ref: created.provider_ref, charge_ref: null });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'PUT', body: { status: 'cancelled' }, headers: { 'x-idempotency-key': `cancel:${request.payment.id}` } });
    await expect(adapter().fetch(credentials, created.provider_ref)).resolves.toMatchObject({ status: 'CANCELED' });
    const preference = await adapter().createCharge(credentials, charge({ gateway: 'MERCADOPAGO' }));
    await adapter().cancel(credentials, { id: 'pay_p', gateway: 'MERCADOPAGO', amount: 25.5, provider_ref: preference.provider_ref, charge_ref: null });
    expect(fake.preferences.get(preference.provider_ref)).toMatchObject({ expires: true });
  });
});

describe('notifications the fake sends, checked by the adapter on the receiving side', () => {
  let receiver: Server;
  let receiverUrl = '';
  const checks: NotificationCheck[] = [];
  let secret: string | null = 'whsec-one';

  beforeAll(async () => {
    // The notify route's first step, standing alone: the raw body and headers as received, checked.
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const url = new URL(req.url!, 'http://receiver');
        const check = await adapter().verifyNotification({
          rawBody: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value])),
          query: Object.fromEntries(url.searchParams),
          secret,
          now: Date.now(),
        });
        checks.push(check);
        res.writeHead(check.outcome === 'refused' ? 401 : 200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/v1/payment/notify/mercadopago/key`;
  });
  afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

  it('accepts a signed notification and names the payment to fetch; refuses a forged id or signature and an unsigned one', async () => {
    secret = 'whsec-one';
    const created = await adapter().createCharge(credentials, charge({}, { notificationUrl: receiverUrl }));
    const id = Number(created.provider_ref);
    expect((await fake.notify(id, { secret: 'whsec-one' })).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'verified', refs: [created.provider_ref] });
    expect((await fake.notify(id, { secret: 'whsec-one', tamper: 'id' })).status).toBe(401);
    expect((await fake.notify(id, { secret: 'whsec-one', tamper: 'signature' })).status).toBe(401);
    expect((await fake.notify(id, { secret: 'another-secret' })).status).toBe(401);
    expect((await fake.notify(id, { secret: null })).status).toBe(401);
    expect(checks.at(-1)).toEqual({ outcome: 'refused', reason: 'no x-signature header' });
  });

  it('without a webhook secret: hint-only, the id is fetched only if the store knows it', async () => {
    secret = null;
    const created = await adapter().createCharge(credentials, charge({}, { notificationUrl: receiverUrl }));
    expect((await fake.notify(Number(created.provider_ref), { secret: null })).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'hint', refs: [created.provider_ref] });
  });
});

describe("the fake, as Mercado Pago's own SDK sees it", () => {
  // The SDK calls the global fetch with its hard-coded https://api.mercadopago.com: sent to the fake instead.
  beforeAll(() => {
    const realFetch = globalThis.fetch;
    vi.stubGlobal('fetch', (url: string | URL, init?: RequestInit) => realFetch(String(url).replace('https://api.mercadopago.com', fake.url), init));
  });
  afterAll(() => vi.unstubAllGlobals());
  // A fresh config per call: a shared one carries one call's idempotency key into the next (sdk-nodejs #481).
  const config = () => new MercadoPagoConfig({ accessToken: TOKEN, options: { timeout: 2_000 } });

  it('creates, reads and refunds a PIX payment and creates a preference through the SDK', async () => {
    const pix = await new Payment(config()).create({
      body: { transaction_amount: 12.5, payment_method_id: 'pix', description: 'Order #7', external_reference: 'pay_sdk', payer: { email: 'a@example.com' } },
      requestOptions: { idempotencyKey: 'create:pay_sdk' },
    });
    expect(pix).toMatchObject({
      status: 'pending',
      external_reference: 'pay_sdk',
      collector_id: ACCOUNT,
      point_of_interaction: { transaction_data: { qr_code: expect.any(String), qr_code_base64: expect.any(String) } },
    });
    expect(fake.requests.at(-1)!.headers['x-idempotency-key']).toBe('create:pay_sdk');
    fake.setStatus(pix.id!, 'approved');
    await expect(new Payment(config()).get({ id: pix.id! })).resolves.toMatchObject({ id: pix.id, status: 'approved', status_detail: 'accredited' });
    await expect(new PaymentRefund(config()).create({ payment_id: pix.id!, body: {}, requestOptions: { idempotencyKey: 'refund:pay_sdk' } })).resolves.toMatchObject({
      payment_id: pix.id,
      amount: 12.5,
      status: 'approved',
    });
    await expect(new Payment(config()).get({ id: pix.id! })).resolves.toMatchObject({ status: 'refunded', transaction_amount_refunded: 12.5 });
    const preference = await new Preference(config()).create({
      body: { items: [{ id: '7', title: 'Order #7', quantity: 1, unit_price: 12.5, currency_id: 'BRL' }], external_reference: 'pay_sdk_pref' },
      requestOptions: { idempotencyKey: 'create:pay_sdk_pref' },
    });
    expect(preference).toMatchObject({ id: expect.any(String), init_point: expect.stringContaining(preference.id!), external_reference: 'pay_sdk_pref' });
  });

  it("answers the SDK's errors in Mercado Pago's envelope", async () => {
    const refused = await new Payment(new MercadoPagoConfig({ accessToken: 'APP_USR-wrong' })).get({ id: 1 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 401, message: 'invalid access token' });
  });
});
