import { createServer, type Server } from 'node:http';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ChargeRequest, type NotificationCheck, type PaymentAtProvider, type ProviderCredentials } from '#lib/payments/adapter.ts';
import { STRIPE_API_VERSION, stripeAdapter } from '#lib/payments/stripe.ts';
import type { ChargebackOn } from '#lib/schemas/payment.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { ACCOUNT, aPayment, run, startScene } from '../support/payments.ts';

/**
 * The Stripe adapter over HTTP against the fake Stripe (test/support/fake-stripe.ts): the requests
 * it sends (form bodies, Idempotency-Key, Stripe-Version), the Checkout life cycle read back as
 * snapshots, refunds and disputes (through `settle`, with both `chargeback_on` settings), signed
 * events received, and Stripe down. The fake itself is driven by the official `stripe` SDK once,
 * so its form parsing is the SDK's encoding's.
 */
const KEY = 'sk_test_store_one';
const OTHER_KEY = 'sk_test_store_two';
const WEBHOOK_SECRET = 'whsec_store_one';
const TIMEOUT_MS = 300;

let fake: FakeStripe;
let clock = Date.now();
const adapter = () => stripeAdapter({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS, now: () => clock });
const credentials: ProviderCredentials = { secrets: { secret_key: KEY, webhook_secret: WEBHOOK_SECRET }, accountId: ACCOUNT };

const charge = (overrides: Partial<ChargeRequest['payment']> = {}, extra: Partial<ChargeRequest> = {}): ChargeRequest => ({
  payment: {
    id: `pay_${Math.random().toString(36).slice(2)}`,
    gateway: 'STRIPE',
    amount: 25.5,
    currency: 'BRL',
    expires_at: new Date(clock + 30 * 60_000).toISOString(),
    ...overrides,
  },
  order: { id: 42, internal_id: 'int-42', description: 'Order #42', payer: { email: 'alex@example.com', name: 'Alex Doe' } },
  notificationUrl: null,
  returnUrl: 'https://shop.example.com/return',
  ...extra,
});

const atProvider = (request: ChargeRequest, providerRef: string, chargeRef: string | null = null): PaymentAtProvider => ({
  id: request.payment.id,
  gateway: 'STRIPE',
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
  fake = await startFakeStripe();
  fake.addAccount(KEY, 'acct_1StoreOne');
  fake.addAccount(OTHER_KEY, 'acct_1StoreTwo');
});
afterAll(() => fake.stop());
afterEach(() => {
  fake.recover();
  clock = Date.now();
});

describe('the fake speaks what the official SDK sends', () => {
  it('takes a session made by stripe-node (form encoding, Idempotency-Key) and answers what it reads', async () => {
    const port = Number(new URL(fake.url).port);
    const sdk = new Stripe(KEY, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
    const session = await sdk.checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: 'pay_sdk',
        success_url: 'https://shop.example.com/return',
        line_items: [{ quantity: 2, price_data: { currency: 'brl', unit_amount: 1275, product_data: { name: 'VIP' } } }],
      },
      { idempotencyKey: 'create:pay_sdk' },
    );
    expect(session).toMatchObject({ object: 'checkout.session', client_reference_id: 'pay_sdk', amount_total: 2550, currency: 'brl', status: 'open' });
    expect(fake.requests.at(-1)!.headers['idempotency-key']).toBe('create:pay_sdk');
    const again = await sdk.checkout.sessions.retrieve(session.id, { expand: ['payment_intent.latest_charge'] });
    expect(again.id).toBe(session.id);
    await expect(new Stripe('sk_test_wrong', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 }).accounts.retrieveCurrent()).rejects.toMatchObject({
      type: 'StripeAuthenticationError',
    });
  });
});

describe('the credential check: GET /v1/account', () => {
  it('names the account of a valid key', async () => {
    await expect(adapter().checkCredentials({ secret_key: KEY })).resolves.toEqual({ accountId: 'acct_1StoreOne' });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/account', headers: { authorization: `Bearer ${KEY}`, 'stripe-version': STRIPE_API_VERSION } });
  });

  it('refuses a wrong key as credentials, and a down Stripe as unavailable', async () => {
    expect(await failureOf(adapter().checkCredentials({ secret_key: 'sk_test_wrong' }))).toBe('credentials');
    fake.fail('down');
    expect(await failureOf(adapter().checkCredentials({ secret_key: KEY }))).toBe('unavailable');
  });
});

describe('a Checkout Session: POST /v1/checkout/sessions', () => {
  it("sends the order's lines in the store's currency, our payment id, the return URL and the order's expiry", async () => {
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
      path: '/v1/checkout/sessions',
      headers: { 'idempotency-key': `create:${request.payment.id}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(Object.fromEntries(sent.form)).toEqual({
      mode: 'payment',
      client_reference_id: request.payment.id,
      'metadata[payment_id]': request.payment.id,
      'metadata[order_id]': '42',
      'payment_intent_data[metadata][payment_id]': request.payment.id,
      'payment_intent_data[metadata][order_id]': '42',
      customer_email: 'alex@example.com',
      success_url: 'https://shop.example.com/return',
      cancel_url: 'https://shop.example.com/return',
      expires_at: String(Math.floor(Date.parse(request.payment.expires_at!) / 1000) + 60),
      'line_items[0][quantity]': '2',
      'line_items[0][price_data][currency]': 'brl',
      'line_items[0][price_data][unit_amount]': '1000',
      'line_items[0][price_data][product_data][name]': 'VIP',
      'line_items[1][quantity]': '1',
      'line_items[1][price_data][currency]': 'brl',
      'line_items[1][price_data][unit_amount]': '550',
      'line_items[1][price_data][product_data][name]': 'Key',
    });
    const session = fake.sessions.get(created.provider_ref)!;
    expect(created).toMatchObject({ checkout_url: session.url, pix_code: null, qr_code: null, expires_at: request.payment.expires_at });
    expect(created.snapshot).toEqual({
      provider_ref: session.id,
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

  it('sends one line of the total when the lines do not add up to it (a coupon)', async () => {
    const request = charge({ amount: 18 }, { lines: [{ name: 'VIP', quantity: 2, unit_price: 10 }] });
    await adapter().createCharge(credentials, request);
    const form = fake.requests.at(-1)!.form;
    expect(form.get('line_items[0][price_data][unit_amount]')).toBe('1800');
    expect(form.get('line_items[0][price_data][product_data][name]')).toBe('Order #42');
    expect(form.has('line_items[1][quantity]')).toBe(false);
  });

  it('keeps expires_at inside the 30 minutes to 24 hours Stripe takes', async () => {
    const soon = charge({ expires_at: new Date(clock + 5 * 60_000).toISOString() });
    await adapter().createCharge(credentials, soon);
    expect(Number(fake.requests.at(-1)!.form.get('expires_at'))).toBe(Math.floor(clock / 1000) + 31 * 60);
    await adapter().createCharge(credentials, charge({ expires_at: new Date(clock + 3 * 86_400_000).toISOString() }));
    expect(Number(fake.requests.at(-1)!.form.get('expires_at'))).toBe(Math.floor(clock / 1000) + 86_400);
  });

  it('answers the first session again to a repeated create (the Idempotency-Key), and retries a dropped connection with the same key', async () => {
    const request = charge();
    const first = await adapter().createCharge(credentials, request);
    fake.fail('down', 1);
    const again = await adapter().createCharge(credentials, request);
    expect(again.provider_ref).toBe(first.provider_ref);
    expect([...fake.sessions.values()].filter((session) => session.client_reference_id === request.payment.id)).toHaveLength(1);
  });

  it('refuses a charge with no return URL or of another gateway, without calling Stripe', async () => {
    const before = fake.requests.length;
    expect(await failureOf(adapter().createCharge(credentials, charge({}, { returnUrl: null })))).toBe('refused');
    expect(await failureOf(adapter().createCharge(credentials, charge({ gateway: 'PIX' })))).toBe('refused');
    expect(fake.requests.length).toBe(before);
  });

  it("reads Stripe's refusal as refused, and 500s after the retry as unavailable", async () => {
    expect(await failureOf(adapter().createCharge(credentials, charge({ currency: 'BRL', amount: -1 })))).toBe('refused');
    fake.fail('error', 2);
    expect(await failureOf(adapter().createCharge(credentials, charge()))).toBe('unavailable');
  });
});

describe('fetch: the session as the rules read it', () => {
  const made = async () => {
    const request = charge();
    const created = await adapter().createCharge(credentials, request);
    return { request, id: created.provider_ref };
  };

  it('open is PENDING; paid is PAID with the payment intent as the ref (what a refund targets)', async () => {
    const { request, id } = await made();
    expect(await adapter().fetch(credentials, id)).toMatchObject({ status: 'PENDING', provider_ref: id, reference: request.payment.id });
    const session = fake.complete(id, 'paid');
    const paid = await adapter().fetch(credentials, id);
    expect(paid).toMatchObject({ status: 'PAID', provider_ref: session.payment_intent, amount_cents: 2550, currency: 'BRL', account: ACCOUNT });
    expect(paid.paid_at).toMatch(/^\d{4}-/);
    // The same session found from its payment intent and from its charge, as refund and dispute events name them.
    expect(await adapter().fetch(credentials, session.payment_intent!)).toEqual(paid);
    expect(await adapter().fetch(credentials, fake.chargeOfSession(id).id)).toEqual(paid);
  });

  it('completed but unpaid (an asynchronous method) stays PENDING until it succeeds or fails', async () => {
    const first = await made();
    fake.complete(first.id, 'unpaid');
    expect((await adapter().fetch(credentials, first.id)).status).toBe('PENDING');
    fake.asyncResult(first.id, 'succeeded');
    expect((await adapter().fetch(credentials, first.id)).status).toBe('PAID');
    const second = await made();
    fake.complete(second.id, 'unpaid');
    fake.asyncResult(second.id, 'failed');
    expect((await adapter().fetch(credentials, second.id)).status).toBe('FAILED');
  });

  it('expired is EXPIRED; cancel expires an open session with cancel:<id>', async () => {
    const { request, id } = await made();
    await adapter().cancel(credentials, atProvider(request, id));
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: `/v1/checkout/sessions/${id}/expire`, headers: { 'idempotency-key': `cancel:${request.payment.id}` } });
    expect((await adapter().fetch(credentials, id)).status).toBe('EXPIRED');
  });

  it("is not_found for another account's session (the key names the account)", async () => {
    const { id } = await made();
    expect(await failureOf(adapter().fetch({ secrets: { secret_key: OTHER_KEY }, accountId: 'acct_1StoreTwo' }, id))).toBe('not_found');
    expect(await failureOf(adapter().fetch(credentials, 'pay_not_a_stripe_id'))).toBe('not_found');
  });

  it('finds the payments made for our payment id through their intents', async () => {
    const { request, id } = await made();
    expect(await adapter().findByReference(credentials, request.payment.id)).toEqual([]);
    fake.complete(id, 'paid');
    expect(await adapter().findByReference(credentials, request.payment.id)).toEqual([await adapter().fetch(credentials, id)]);
  });
});

describe('refunds and disputes', () => {
  const paid = async () => {
    const request = charge();
    const { provider_ref: id } = await adapter().createCharge(credentials, request);
    const session = fake.complete(id, 'paid');
    return { request, id, intent: session.payment_intent! };
  };

  it('refunds in full through the payment intent with refund:<id>, once however often asked', async () => {
    const { request, id, intent } = await paid();
    const refunded = await adapter().refund(credentials, atProvider(request, id, intent));
    expect(refunded).toMatchObject({ status: 'REFUNDED', refunded_cents: 2550 });
    const sent = fake.requests.find((seen) => seen.path === '/v1/refunds')!;
    expect(sent.headers['idempotency-key']).toBe(`refund:${request.payment.id}`);
    expect(sent.form.get('payment_intent')).toBe(intent);
    // Asked again (a retry, or from the session only): the same answer, no second refund.
    expect(await adapter().refund(credentials, atProvider(request, id))).toMatchObject({ status: 'REFUNDED' });
    expect(fake.chargeOfSession(id).amount_refunded).toBe(2550);
  });

  it("tells Stripe's refusals (the store's business) from its faults: charge_disputed and charge_expired_for_refund are refused; a key still in use (409) is unavailable", async () => {
    const failureOf = async (payment: Awaited<ReturnType<typeof paid>>) =>
      adapter()
        .refund(credentials, atProvider(payment.request, payment.id, payment.intent))
        .then(
          () => 'refunded',
          (error: ProviderError) => `${error.failure}: ${error.reason}`,
        );
    const disputed = await paid();
    fake.dispute(disputed.id);
    expect(await failureOf(disputed)).toMatch(/^refused: refund: .*charged back.*\(charge_disputed\)$/);
    const old = await paid();
    fake.backdateCharge(old.id, 181);
    expect(await failureOf(old)).toMatch(/^refused: refund: .*too old.*\(charge_expired_for_refund\)$/);
    const busy = await paid();
    fake.fail('busy', 1);
    expect(await failureOf(busy)).toMatch(/^unavailable: refund: .*\(idempotency_key_in_use\)$/);
    // Once the first request under the key has ended, the same refund goes through.
    expect(await failureOf(busy)).toBe('refunded');
    expect(fake.chargeOfSession(disputed.id).amount_refunded + fake.chargeOfSession(old.id).amount_refunded).toBe(0);
  });

  it('reads a refund made in the dashboard (partial, then full), and answers a later refund with the refunded state', async () => {
    const { request, id, intent } = await paid();
    fake.refundInDashboard(id, 1000);
    expect(await adapter().fetch(credentials, id)).toMatchObject({ status: 'PAID', refunded_cents: 1000 });
    fake.refundInDashboard(id);
    expect(await adapter().refund(credentials, atProvider({ ...request, payment: { ...request.payment, id: 'pay_other_key' } }, id, intent))).toMatchObject({
      status: 'REFUNDED',
      refunded_cents: 2550,
    });
  });

  it('refuses to refund what never took money', async () => {
    const request = charge();
    const { provider_ref: id } = await adapter().createCharge(credentials, request);
    expect(await failureOf(adapter().refund(credentials, atProvider(request, id)))).toBe('refused');
  });

  /** The order's life through `settle` after each fetched state, under a chargeback_on setting. */
  const orderAfter = async (steps: (() => unknown)[], id: string, request: ChargeRequest, chargebackOn: ChargebackOn) => {
    let scene = startScene({ status: 'PENDING', payment_id: null }, aPayment({ id: request.payment.id, gateway: 'STRIPE', provider: 'stripe', amount: 25.5 }));
    for (const step of steps) {
      step();
      scene = run(scene, [{ kind: 'provider', snapshot: await adapter().fetch(credentials, id) }], { chargebackOn });
    }
    return scene;
  };

  it('a dispute with the funds withdrawn charges the order back under either setting; an inquiry only under DISPUTE_OPENED', async () => {
    for (const chargebackOn of ['DISPUTE_OPENED', 'DISPUTE_LOST'] as const) {
      const withdrawn = await paid();
      const charged = await orderAfter([() => undefined, () => fake.dispute(withdrawn.id, 'needs_response', true)], withdrawn.id, withdrawn.request, chargebackOn);
      expect([charged.order.status, charged.payment.status, charged.payment.dispute, charged.chargebacks]).toEqual(['CHARGEBACK', 'CHARGEBACK', 'OPEN', 1]);

      const inquiry = await paid();
      const asked = await orderAfter([() => undefined, () => fake.dispute(inquiry.id, 'warning_needs_response', false)], inquiry.id, inquiry.request, chargebackOn);
      if (chargebackOn === 'DISPUTE_OPENED') expect([asked.order.status, asked.payment.status]).toEqual(['CHARGEBACK', 'CHARGEBACK']);
      else expect([asked.order.status, asked.payment.status, asked.payment.attention]).toEqual(['APPROVED', 'PAID', 'DISPUTE_OPEN']);
    }
  });

  it('a dispute lost charges back under DISPUTE_LOST; a dispute won after a chargeback sets DISPUTE_WON', async () => {
    const lost = await paid();
    let disputeId = '';
    const afterLoss = await orderAfter(
      [() => undefined, () => (disputeId = fake.dispute(lost.id, 'under_review', false).id), () => fake.disputeStatus(disputeId, 'lost')],
      lost.id,
      lost.request,
      'DISPUTE_LOST',
    );
    expect([afterLoss.order.status, afterLoss.payment.status, afterLoss.payment.dispute, afterLoss.chargebacks]).toEqual(['CHARGEBACK', 'CHARGEBACK', 'LOST', 1]);

    const won = await paid();
    const afterWin = await orderAfter(
      [() => undefined, () => (disputeId = fake.dispute(won.id, 'needs_response', true).id), () => fake.disputeStatus(disputeId, 'won')],
      won.id,
      won.request,
      'DISPUTE_OPENED',
    );
    expect([afterWin.order.status, afterWin.payment.status, afterWin.payment.attention]).toEqual(['CHARGEBACK', 'CHARGEBACK', 'DISPUTE_WON']);
  });
});

describe('events signed by Stripe, received', () => {
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
          secret: WEBHOOK_SECRET,
          now: Date.now(),
        });
        checks.push(check);
        res.writeHead(check.outcome === 'refused' ? 401 : 200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/v1/payment/notify/stripe/key`;
  });
  afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

  it('verifies a completed session and a dispute, and refuses a forgery, another secret and an old signature', async () => {
    const { provider_ref: id } = await adapter().createCharge(credentials, charge());
    const session = fake.complete(id, 'paid');
    expect((await fake.notify(receiverUrl, WEBHOOK_SECRET, 'checkout.session.completed', session)).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'verified', refs: [id] });
    const dispute = fake.dispute(id);
    expect((await fake.notify(receiverUrl, WEBHOOK_SECRET, 'charge.dispute.funds_withdrawn', dispute)).status).toBe(200);
    expect(checks.at(-1)).toEqual({ outcome: 'verified', refs: [session.payment_intent] });
    expect((await fake.notify(receiverUrl, WEBHOOK_SECRET, 'checkout.session.completed', session, { tamper: true })).status).toBe(401);
    expect((await fake.notify(receiverUrl, 'whsec_someone_else', 'checkout.session.completed', session)).status).toBe(401);
    expect((await fake.notify(receiverUrl, WEBHOOK_SECRET, 'checkout.session.completed', session, { timestamp: Math.floor(Date.now() / 1000) - 301 })).status).toBe(401);
  });
});
