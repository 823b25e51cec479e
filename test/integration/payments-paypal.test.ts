import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ChargeRequest, type NotificationCheck, type PaymentAtProvider, type ProviderCredentials } from '#lib/payments/adapter.ts';
import { paypalAdapter } from '#lib/payments/paypal.ts';
import type { ChargebackOn } from '#lib/schemas/payment.ts';
import { startFakePayPal, type FakePayPal } from '../support/fake-paypal.ts';
import { ACCOUNT, aPayment, run, startScene } from '../support/payments.ts';

/**
 * The PayPal adapter over HTTP against the fake PayPal (test/support/fake-paypal.ts): the OAuth
 * token, orders with `custom_id`, the capture the service makes (once, under `capture:<id>`),
 * captures, refunds, reversals and disputes read back (through `settle`, with both
 * `chargeback_on` settings), notifications signed with this run's test CA, and PayPal down.
 */
const CLIENT_ID = 'AStoreOneClientId';
const CLIENT_SECRET = 'EStoreOneClientSecret';
const WEBHOOK_ID = '8PT597110X687430LKGECATA';
const TIMEOUT_MS = 300;

let fake: FakePayPal;
const adapter = () => paypalAdapter({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS, trustedRoots: [fake.pki.rootPem] });
const credentials: ProviderCredentials = {
  secrets: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, webhook_id: WEBHOOK_ID },
  accountId: ACCOUNT,
  settings: { environment: 'sandbox' },
};

const charge = (overrides: Partial<ChargeRequest['payment']> = {}, extra: Partial<ChargeRequest> = {}): ChargeRequest => ({
  payment: { id: `pay_${Math.random().toString(36).slice(2)}`, gateway: 'PAYPAL', amount: 25.5, currency: 'BRL', expires_at: null, ...overrides },
  order: { id: 42, internal_id: 'int-42', description: 'Order #42', payer: { email: 'alex@example.com', name: 'Alex Doe' } },
  notificationUrl: null,
  returnUrl: 'https://shop.example.com/return',
  ...extra,
});

const atProvider = (request: ChargeRequest, providerRef: string, chargeRef: string | null = null): PaymentAtProvider => ({
  id: request.payment.id,
  gateway: 'PAYPAL',
  amount: request.payment.amount,
  provider_ref: providerRef,
  charge_ref: chargeRef,
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
  fake = await startFakePayPal();
  fake.addApp(CLIENT_ID, CLIENT_SECRET, 'APP-80W284485P519543T');
  fake.addApp('AStoreTwoClientId', 'EStoreTwoSecret', 'APP-STORE-TWO');
}, 30_000);
afterAll(() => fake.stop());
afterEach(() => fake.recover());

describe('the credential check: an OAuth token', () => {
  it("names the credentials' REST app (Basic auth, client_credentials)", async () => {
    await expect(adapter().checkCredentials(credentials.secrets, { environment: 'sandbox' })).resolves.toEqual({ accountId: 'APP-80W284485P519543T' });
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/oauth2/token', body: { grant_type: 'client_credentials' } });
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`);
  });

  it('refuses a wrong secret as credentials, and a down PayPal as unavailable', async () => {
    expect(await failureOf(adapter().checkCredentials({ client_id: CLIENT_ID, client_secret: 'wrong' }))).toBe('credentials');
    fake.fail('down');
    expect(await failureOf(adapter().checkCredentials({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET }))).toBe('unavailable');
  });

  it('asks for a token once and keeps it for the following calls', async () => {
    const tokenCalls = () => fake.requests.filter((seen) => seen.path === '/v1/oauth2/token').length;
    const made = await adapter().createCharge(credentials, charge());
    const before = tokenCalls();
    await adapter().fetch(credentials, made.provider_ref);
    await adapter().fetch(credentials, made.provider_ref);
    expect(tokenCalls()).toBe(before);
  });
});

describe('an order: POST /v2/checkout/orders', () => {
  it('sends intent CAPTURE, our payment id as custom_id, the lines and the return URL; answers the approval link', async () => {
    const request = charge(
      {},
      {
        lines: [
          { name: 'VIP', quantity: 2, unit_price: 10 },
          { name: 'Key', quantity: 1, unit_price: 5.5 },
        ],
      },
    );
    const created = await adapter().createCharge(credentials, request);
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/v2/checkout/orders',
      headers: { 'paypal-request-id': `create:${request.payment.id}`, 'content-type': 'application/json' },
    });
    expect(sent.body).toEqual({
      intent: 'CAPTURE',
      purchase_units: [
        {
          reference_id: request.payment.id,
          custom_id: request.payment.id,
          invoice_id: request.payment.id,
          description: 'Order #42',
          amount: { currency_code: 'BRL', value: '25.50', breakdown: { item_total: { currency_code: 'BRL', value: '25.50' } } },
          items: [
            { name: 'VIP', quantity: '2', unit_amount: { currency_code: 'BRL', value: '10.00' }, category: 'DIGITAL_GOODS' },
            { name: 'Key', quantity: '1', unit_amount: { currency_code: 'BRL', value: '5.50' }, category: 'DIGITAL_GOODS' },
          ],
        },
      ],
      payment_source: {
        paypal: {
          experience_context: {
            return_url: 'https://shop.example.com/return',
            cancel_url: 'https://shop.example.com/return',
            user_action: 'PAY_NOW',
            shipping_preference: 'NO_SHIPPING',
          },
        },
      },
    });
    expect(created.checkout_url).toBe(`https://www.sandbox.paypal.com/checkoutnow?token=${created.provider_ref}`);
    expect(created.snapshot).toEqual({
      provider_ref: created.provider_ref,
      reference: request.payment.id,
      account: ACCOUNT,
      amount_cents: 2550,
      currency: 'BRL',
      status: 'PENDING',
      refunded_cents: 0,
      dispute: null,
      paid_at: null,
    });
  });

  it('answers the first order again to a repeated create (PayPal-Request-Id)', async () => {
    const request = charge();
    const first = await adapter().createCharge(credentials, request);
    fake.fail('down', 1);
    expect((await adapter().createCharge(credentials, request)).provider_ref).toBe(first.provider_ref);
    expect([...fake.orders.values()].filter((order) => order.purchase_units[0]!.custom_id === request.payment.id)).toHaveLength(1);
  });

  it('refuses a charge with no return URL without calling PayPal, and 500s after the retry as unavailable', async () => {
    const before = fake.requests.length;
    expect(await failureOf(adapter().createCharge(credentials, charge({}, { returnUrl: null })))).toBe('refused');
    expect(fake.requests.length).toBe(before);
    fake.fail('error', 2);
    expect(await failureOf(adapter().createCharge(credentials, charge()))).toBe('unavailable');
  });
});

describe('approval, capture and fetch', () => {
  const made = async () => {
    const request = charge();
    const { provider_ref: id } = await adapter().createCharge(credentials, request);
    return { request, id };
  };

  it('an approved order is PENDING and capturable; the capture takes the money once, however many sources ask', async () => {
    const { request, id } = await made();
    expect(await adapter().fetch(credentials, id)).toMatchObject({ status: 'PENDING' });
    expect((await adapter().fetch(credentials, id)).capturable).toBeUndefined();
    fake.approve(id);
    expect(await adapter().fetch(credentials, id)).toMatchObject({ status: 'PENDING', capturable: true });
    const captures = await Promise.all([1, 2, 3].map(() => adapter().capture!(credentials, atProvider(request, id))));
    const capture = fake.captureOfOrder(id);
    for (const snapshot of captures) expect(snapshot).toMatchObject({ status: 'PAID', provider_ref: capture.id, reference: request.payment.id, amount_cents: 2550 });
    expect(fake.captures.size).toBeGreaterThan(0);
    expect([...fake.captures.values()].filter((item) => item.order_id === id)).toHaveLength(1);
    expect(
      fake.requests.filter((seen) => seen.path === `/v2/checkout/orders/${id}/capture`).every((seen) => seen.headers['paypal-request-id'] === `capture:${request.payment.id}`),
    ).toBe(true);
    // A capture asked again later (another key, or past PayPal's 6 hours): ORDER_ALREADY_CAPTURED, read as the order stands.
    expect(await adapter().capture!(credentials, { ...atProvider(request, id), id: 'pay_later' })).toMatchObject({ status: 'PAID' });
    // The capture id (what refund and dispute events name) finds the same order.
    expect(await adapter().fetch(credentials, capture.id)).toEqual(await adapter().fetch(credentials, id));
  });

  it('a capture before approval answers the order still PENDING; a declined capture is FAILED, a pending one PENDING', async () => {
    const { request, id } = await made();
    expect(await adapter().capture!(credentials, atProvider(request, id))).toMatchObject({ status: 'PENDING' });
    fake.approve(id);
    fake.captureWill('DECLINED');
    expect(await adapter().capture!(credentials, atProvider({ ...request, payment: { ...request.payment, id: 'pay_declined' } }, id))).toMatchObject({ status: 'FAILED' });
    const second = await made();
    fake.approve(second.id);
    fake.captureWill('PENDING');
    expect(await adapter().capture!(credentials, atProvider(second.request, second.id))).toMatchObject({ status: 'PENDING', paid_at: null });
  });

  it('a voided order is CANCELED; cancel calls nothing', async () => {
    const { request, id } = await made();
    const before = fake.requests.length;
    await adapter().cancel(credentials, atProvider(request, id));
    expect(fake.requests.length).toBe(before);
    fake.voidOrder(id);
    expect((await adapter().fetch(credentials, id)).status).toBe('CANCELED');
  });

  it("is not_found for another merchant's order", async () => {
    const { id } = await made();
    const other: ProviderCredentials = {
      secrets: { client_id: 'AStoreTwoClientId', client_secret: 'EStoreTwoSecret' },
      accountId: 'APP-STORE-TWO',
      settings: { environment: 'sandbox' },
    };
    expect(await failureOf(adapter().fetch(other, id))).toBe('not_found');
  });
});

describe('refunds, reversals and disputes', () => {
  const captured = async () => {
    const request = charge();
    const { provider_ref: id } = await adapter().createCharge(credentials, request);
    fake.approve(id);
    await adapter().capture!(credentials, atProvider(request, id));
    return { request, id, captureId: fake.captureOfOrder(id).id };
  };

  it('refunds the capture in full with refund:<id>, once however often asked', async () => {
    const { request, id, captureId } = await captured();
    expect(await adapter().refund(credentials, atProvider(request, id, captureId))).toMatchObject({ status: 'REFUNDED', refunded_cents: 2550 });
    const sent = fake.requests.find((seen) => seen.path === `/v2/payments/captures/${captureId}/refund`)!;
    expect(sent.headers['paypal-request-id']).toBe(`refund:${request.payment.id}`);
    expect(await adapter().refund(credentials, atProvider(request, id))).toMatchObject({ status: 'REFUNDED' });
    expect(fake.order(id).purchase_units[0]!.payments!.refunds).toHaveLength(1);
  });

  it('reads a partial refund from the dashboard, then answers a refund of the rest', async () => {
    const { request, id, captureId } = await captured();
    fake.refundInDashboard(id, '10.00');
    expect(await adapter().fetch(credentials, id)).toMatchObject({ status: 'PAID', refunded_cents: 1000 });
    expect(await adapter().refund(credentials, atProvider(request, id, captureId))).toMatchObject({ status: 'REFUNDED', refunded_cents: 2550 });
  });

  const orderAfter = async (steps: (() => unknown)[], id: string, request: ChargeRequest, chargebackOn: ChargebackOn) => {
    let scene = startScene({ status: 'PENDING', payment_id: null }, aPayment({ id: request.payment.id, gateway: 'PAYPAL', provider: 'paypal', amount: 25.5 }));
    for (const step of steps) {
      step();
      scene = run(scene, [{ kind: 'provider', snapshot: await adapter().fetch(credentials, id) }], { chargebackOn });
    }
    return scene;
  };

  it('a reversed capture charges the order back under either setting', async () => {
    for (const chargebackOn of ['DISPUTE_OPENED', 'DISPUTE_LOST'] as const) {
      const { request, id } = await captured();
      const scene = await orderAfter([() => undefined, () => fake.reverse(id)], id, request, chargebackOn);
      expect([scene.order.status, scene.payment.status, scene.chargebacks]).toEqual(['CHARGEBACK', 'CHARGEBACK', 1]);
    }
  });

  it('a dispute opened charges back under DISPUTE_OPENED, only flags under DISPUTE_LOST until resolved for the buyer', async () => {
    const opened = await captured();
    const atOnce = await orderAfter([() => undefined, () => fake.openDispute(opened.id)], opened.id, opened.request, 'DISPUTE_OPENED');
    expect([atOnce.order.status, atOnce.payment.status]).toEqual(['CHARGEBACK', 'CHARGEBACK']);

    const waited = await captured();
    let disputeId = '';
    const flagged = await orderAfter([() => undefined, () => (disputeId = fake.openDispute(waited.id).dispute_id)], waited.id, waited.request, 'DISPUTE_LOST');
    expect([flagged.order.status, flagged.payment.status, flagged.payment.attention]).toEqual(['APPROVED', 'PAID', 'DISPUTE_OPEN']);
    fake.resolveDispute(disputeId, 'RESOLVED_BUYER_FAVOUR');
    const lost = run(flagged, [{ kind: 'provider', snapshot: await adapter().fetch(credentials, waited.id) }], { chargebackOn: 'DISPUTE_LOST' });
    expect([lost.order.status, lost.payment.status, lost.payment.dispute]).toEqual(['CHARGEBACK', 'CHARGEBACK', 'LOST']);
  });

  it('a bank chargeback (stage CHARGEBACK) takes the money under either setting; resolved for the seller it sets DISPUTE_WON', async () => {
    const { request, id } = await captured();
    let disputeId = '';
    const scene = await orderAfter(
      [() => undefined, () => (disputeId = fake.openDispute(id, 'CHARGEBACK').dispute_id), () => fake.resolveDispute(disputeId, 'RESOLVED_SELLER_FAVOUR')],
      id,
      request,
      'DISPUTE_LOST',
    );
    expect([scene.order.status, scene.payment.status, scene.payment.attention]).toEqual(['CHARGEBACK', 'CHARGEBACK', 'DISPUTE_WON']);
  });
});

describe('notifications signed by PayPal, received', () => {
  let receiver: Server;
  let receiverUrl: string;
  const checks: NotificationCheck[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const check = await adapter().verifyNotification({
          rawBody: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value])),
          query: {},
          secret: WEBHOOK_ID,
          now: Date.now(),
        });
        checks.push(check);
        res.writeHead(check.outcome === 'refused' ? 401 : 200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/v1/payment/notify/paypal/key`;
  });
  afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

  it("verifies an approval and a capture (the certificate from PayPal's URL, through PAYPAL_API_URL's fake), refuses forgeries", async () => {
    const request = charge();
    const { provider_ref: id } = await adapter().createCharge(credentials, request);
    fake.approve(id);
    expect((await fake.notify(receiverUrl, WEBHOOK_ID, 'CHECKOUT.ORDER.APPROVED', { id, status: 'APPROVED' })).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'verified', refs: [id] });
    await adapter().capture!(credentials, atProvider(request, id));
    expect((await fake.notify(receiverUrl, WEBHOOK_ID, 'PAYMENT.CAPTURE.COMPLETED', fake.captureResource(id))).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'verified', refs: [id] });
    expect((await fake.notify(receiverUrl, WEBHOOK_ID, 'CHECKOUT.ORDER.APPROVED', { id }, { tamper: true })).status).toBe(401);
    expect((await fake.notify(receiverUrl, 'ANOTHERWEBHOOKID', 'CHECKOUT.ORDER.APPROVED', { id })).status).toBe(401);
    expect((await fake.notify(receiverUrl, WEBHOOK_ID, 'CHECKOUT.ORDER.APPROVED', { id }, { certUrl: `${fake.url}/v1/notifications/certs/CERT-1` })).status).toBe(401);
  });
});
