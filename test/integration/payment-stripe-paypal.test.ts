import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { getOrderItem } from '#lib/db/order.ts';
import { createPayment, newPaymentId, readPayment } from '#lib/db/payment.ts';
import { newPayment } from '#lib/domain/payment.ts';
import type { ProviderCredentials } from '#lib/payments/adapter.ts';
import { paypalAdapter } from '#lib/payments/paypal.ts';
import { stripeAdapter } from '#lib/payments/stripe.ts';
import type { ChargebackOn } from '#lib/schemas/payment.ts';
import { createPackage, type Store } from '../support/builders.ts';
import { call, firstError, newStore } from '../support/client.ts';
import { takeFakePayPal, type FakePayPal } from '../support/fake-paypal.ts';
import { takeFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { pathOf, pendingOrder, storedCommands } from '../support/payment-orders.ts';

/**
 * A buyer pays with Stripe and with PayPal on the local stack, against the fakes on the ports its
 * STRIPE_API_URL and PAYPAL_API_URL name: a PENDING order and its payment made at the provider
 * (through the adapter, as checkout will; test/support/payment-orders.ts), the provider's page, its
 * signed notifications (verified by the stack: Stripe's HMAC, PayPal's certificate chained to
 * the run's test root), the payment fetched and settled; PayPal captured by the service once,
 * whichever source sees the approval first; refunds, reversals and disputes with both
 * `chargeback_on` settings.
 */
let stripe: FakeStripe;
let paypal: FakePayPal;
beforeAll(async () => {
  stripe = await takeFakeStripe(inject('stripePort'));
  paypal = await takeFakePayPal(inject('paypalPort'), inject('paypalPki'));
}, 330_000);
afterAll(() => Promise.all([stripe.stop(), paypal.stop()]));
beforeEach(() => {
  stripe.recover();
  paypal.recover();
});

let accounts = 0;

interface Shop {
  store: Store;
  notifyUrl: string;
  /** Stripe's endpoint secret or PayPal's webhook id. */
  signing: string;
  credentials: ProviderCredentials;
}

async function stripeShop(chargebackOn: ChargebackOn = 'DISPUTE_OPENED'): Promise<Shop> {
  accounts += 1;
  const store = await newStore();
  const secretKey = `sk_test_flow_${process.pid}_${Date.now()}_${accounts}`;
  stripe.addAccount(secretKey, `acct_1Flow${accounts}`);
  const signing = `whsec_flow_${accounts}_${Date.now()}`;
  const res = await store.put('/v1/app/payment/provider/stripe', { secret_key: secretKey, webhook_secret: signing });
  expect(res.status, res.text).toBe(200);
  expect((await store.patch('/v1/app/store', { payments: { chargeback_on: chargebackOn } })).status).toBe(200);
  const credentials = { secrets: { secret_key: secretKey, webhook_secret: signing }, accountId: res.body.account_id };
  return { store, notifyUrl: res.body.notification_url, signing, credentials };
}

async function paypalShop(chargebackOn: ChargebackOn = 'DISPUTE_OPENED'): Promise<Shop> {
  accounts += 1;
  const store = await newStore();
  const clientId = `AFlow${process.pid}x${Date.now()}x${accounts}`;
  paypal.addApp(clientId, 'EFlowSecret', `APP-FLOW-${accounts}`);
  const signing = `WH${Date.now()}${accounts}`;
  const res = await store.put('/v1/app/payment/provider/paypal', { client_id: clientId, client_secret: 'EFlowSecret', webhook_id: signing, environment: 'sandbox' });
  expect(res.status, res.text).toBe(200);
  expect((await store.patch('/v1/app/store', { payments: { chargeback_on: chargebackOn } })).status).toBe(200);
  const credentials = {
    secrets: { client_id: clientId, client_secret: 'EFlowSecret', webhook_id: signing },
    accountId: res.body.account_id,
    settings: { environment: 'sandbox' as const },
  };
  return { store, notifyUrl: res.body.notification_url, signing, credentials };
}

/**
 * A PENDING order of 20.00 and its PENDING payment through `gateway`, made at the provider with the
 * store's credentials and the notification URL, coming back to the store's own page.
 */
async function checkout(shop: Shop, gateway: 'STRIPE' | 'PAYPAL') {
  const order = await pendingOrder(shop.store, 20);
  const created = newPayment(
    {
      id: newPaymentId(),
      store_id: shop.store.storeId,
      order_id: order.id,
      gateway,
      amount: Number(order.total),
      currency: 'BRL',
      expires_at: new Date(Date.now() + 30 * 60_000).toISOString(),
    },
    Date.now(),
  ).payment;
  const adapter = gateway === 'STRIPE' ? stripeAdapter() : paypalAdapter({ trustedRoots: [inject('paypalPki').rootPem] });
  const made = await adapter.createCharge(shop.credentials, {
    payment: { id: created.id, gateway, amount: created.amount, currency: created.currency, expires_at: created.expires_at },
    order: { id: order.id, internal_id: order.internal_id, description: `Order ${order.id}`, payer: { email: 'steve@example.com', name: 'Steve Smith' } },
    lines: [{ name: 'VIP', quantity: 2, unit_price: 10 }],
    notificationUrl: shop.notifyUrl,
    returnUrl: `http://${shop.store.domain}/thanks`,
  });
  const payment = { ...created, status: 'PENDING' as const, provider_ref: made.provider_ref, checkout_url: made.checkout_url, revision: 1 };
  await createPayment(payment);
  return { orderId: order.id, internalId: order.internal_id, payment, checkoutUrl: made.checkout_url! };
}

const state = async (shop: Shop, orderId: number, paymentId: string) => {
  const [order, payment] = await Promise.all([getOrderItem(shop.store.storeId, orderId), readPayment(shop.store.storeId, orderId, paymentId)]);
  return { order: order.status, payment: payment!.status, attention: payment!.attention, charge: payment!.charge_ref, orderPayment: order.payment_id };
};
/** The commands queued: the package's one command, once per approval. */
const commandsOf = async (shop: Shop) => (await storedCommands(shop.store.storeId)).length;

const stripeEvent = (shop: Shop, type: string, object: unknown, options: { tamper?: boolean; timestamp?: number } = {}) =>
  stripe.notify(`${inject('apiUrl').replace(/\/v1\/?$/, '')}${pathOf(shop.notifyUrl)}`, shop.signing, type, object, options);
const paypalEvent = (shop: Shop, type: string, resource: unknown, options: { tamper?: boolean; webhookId?: string } = {}) =>
  paypal.notify(`${inject('apiUrl').replace(/\/v1\/?$/, '')}${pathOf(shop.notifyUrl)}`, options.webhookId ?? shop.signing, type, resource, { tamper: options.tamper });

describe('Stripe Checkout on the local stack', () => {
  it('a session of the order (lines, our id, the return URL); a paid session approves the order once, however many events race', async () => {
    const shop = await stripeShop();
    const { orderId, payment, checkoutUrl } = await checkout(shop, 'STRIPE');
    const session = stripe.sessions.get(payment.provider_ref)!;
    expect(checkoutUrl).toBe(session.url);
    expect(session).toMatchObject({ client_reference_id: payment.id, amount_total: 2000, currency: 'brl', success_url: `http://${shop.store.domain}/thanks` });
    expect(session.line_items).toEqual([{ quantity: 2, price_data: { currency: 'brl', unit_amount: 1000, product_data: { name: 'VIP' } } }]);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'PENDING', payment: 'PENDING' });

    stripe.complete(session.id, 'paid');
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => stripeEvent(shop, 'checkout.session.completed', session)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await state(shop, orderId, payment.id)).toEqual({ order: 'APPROVED', payment: 'PAID', attention: null, charge: session.payment_intent, orderPayment: payment.id });
    expect(await commandsOf(shop)).toBe(1);
  });

  it('an asynchronous method: completed unpaid stays PENDING, approved when Stripe reports it succeeded', async () => {
    const shop = await stripeShop();
    const { orderId, payment } = await checkout(shop, 'STRIPE');
    const session = stripe.complete(payment.provider_ref, 'unpaid');
    expect((await stripeEvent(shop, 'checkout.session.completed', session)).status).toBe(200);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'PENDING', payment: 'PENDING' });
    stripe.asyncResult(session.id, 'succeeded');
    expect((await stripeEvent(shop, 'checkout.session.async_payment_succeeded', session)).status).toBe(200);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'APPROVED', payment: 'PAID' });
  });

  it('a refund in the dashboard refunds the order (charge.refunded names the payment intent)', async () => {
    const shop = await stripeShop();
    const { orderId, payment } = await checkout(shop, 'STRIPE');
    const session = stripe.complete(payment.provider_ref, 'paid');
    await stripeEvent(shop, 'checkout.session.completed', session);
    const charge = stripe.refundInDashboard(session.id);
    expect((await stripeEvent(shop, 'charge.refunded', charge)).status).toBe(200);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED' });
  });

  it('disputes: an inquiry charges back under DISPUTE_OPENED, only flags under DISPUTE_LOST; funds withdrawn charge back under both', async () => {
    for (const chargebackOn of ['DISPUTE_OPENED', 'DISPUTE_LOST'] as const) {
      const shop = await stripeShop(chargebackOn);
      const inquiry = await checkout(shop, 'STRIPE');
      const first = stripe.complete(inquiry.payment.provider_ref, 'paid');
      await stripeEvent(shop, 'checkout.session.completed', first);
      expect((await stripeEvent(shop, 'charge.dispute.created', stripe.dispute(first.id, 'warning_needs_response', false))).status).toBe(200);
      expect(await state(shop, inquiry.orderId, inquiry.payment.id)).toMatchObject(
        chargebackOn === 'DISPUTE_OPENED' ? { order: 'CHARGEBACK', payment: 'CHARGEBACK' } : { order: 'APPROVED', payment: 'PAID', attention: 'DISPUTE_OPEN' },
      );

      const withdrawn = await checkout(shop, 'STRIPE');
      const second = stripe.complete(withdrawn.payment.provider_ref, 'paid');
      await stripeEvent(shop, 'checkout.session.completed', second);
      expect((await stripeEvent(shop, 'charge.dispute.funds_withdrawn', stripe.dispute(second.id, 'needs_response', true))).status).toBe(200);
      expect(await state(shop, withdrawn.orderId, withdrawn.payment.id)).toMatchObject({ order: 'CHARGEBACK', payment: 'CHARGEBACK' });
    }
  });

  it('a forged, re-keyed or 301 s old event is 401 and changes nothing', async () => {
    const shop = await stripeShop();
    const { orderId, payment } = await checkout(shop, 'STRIPE');
    const session = stripe.complete(payment.provider_ref, 'paid');
    expect((await stripeEvent(shop, 'checkout.session.completed', session, { tamper: true })).status).toBe(401);
    expect((await stripe.notify(`${inject('apiUrl').replace(/\/v1\/?$/, '')}${pathOf(shop.notifyUrl)}`, 'whsec_other', 'checkout.session.completed', session)).status).toBe(401);
    expect((await stripeEvent(shop, 'checkout.session.completed', session, { timestamp: Math.floor(Date.now() / 1000) - 301 })).status).toBe(401);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'PENDING', payment: 'PENDING' });
  });
});

describe('PayPal on the local stack', () => {
  const captures = (orderId: string) => [...paypal.captures.values()].filter((capture) => capture.order_id === orderId).length;

  it('an order (custom_id, the amount); the approval notification makes the service capture, once, and approves', async () => {
    const shop = await paypalShop();
    const { orderId, payment, checkoutUrl } = await checkout(shop, 'PAYPAL');
    const order = paypal.order(payment.provider_ref);
    expect(checkoutUrl).toBe(`https://www.sandbox.paypal.com/checkoutnow?token=${order.id}`);
    expect(order.purchase_units[0]).toMatchObject({ custom_id: payment.id, amount: { currency_code: 'BRL', value: '20.00' } });
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'PENDING', payment: 'PENDING' });

    paypal.approve(order.id);
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: order.id, status: 'APPROVED' })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(captures(order.id)).toBe(1);
    // Every capture the service asked for carried the payment's one key: PayPal takes the money once whoever asks.
    const asked = paypal.requests.filter((seen) => seen.path === `/v2/checkout/orders/${order.id}/capture`);
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked.map((seen) => seen.headers['paypal-request-id']))).toEqual(new Set([`capture:${payment.id}`]));
    const capture = paypal.captureOfOrder(order.id);
    expect(await state(shop, orderId, payment.id)).toEqual({ order: 'APPROVED', payment: 'PAID', attention: null, charge: capture.id, orderPayment: payment.id });
    expect(await commandsOf(shop)).toBe(1);
    // PayPal's own capture event afterwards changes nothing.
    expect((await paypalEvent(shop, 'PAYMENT.CAPTURE.COMPLETED', paypal.captureResource(order.id))).status).toBe(200);
    expect(await commandsOf(shop)).toBe(1);
  });

  it("the operator's sync captures an approved order whose notification was lost", async () => {
    const shop = await paypalShop();
    const { orderId, payment } = await checkout(shop, 'PAYPAL');
    paypal.approve(payment.provider_ref);
    const synced = await shop.store.post(`/v1/app/order/${orderId}/payment/${payment.id}/sync`, {});
    expect(synced.status, synced.text).toBe(200);
    expect(captures(payment.provider_ref)).toBe(1);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'APPROVED', payment: 'PAID' });
  });

  it('a refund, and a reversal, reach the order (events naming the capture)', async () => {
    const shop = await paypalShop();
    const refunded = await checkout(shop, 'PAYPAL');
    paypal.approve(refunded.payment.provider_ref);
    await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: refunded.payment.provider_ref });
    paypal.refundInDashboard(refunded.payment.provider_ref);
    const captureId = paypal.captureOfOrder(refunded.payment.provider_ref).id;
    const refundResource = { id: 'REFUND1', status: 'COMPLETED', links: [{ rel: 'up', href: `https://api.sandbox.paypal.com/v2/payments/captures/${captureId}` }] };
    expect((await paypalEvent(shop, 'PAYMENT.CAPTURE.REFUNDED', refundResource)).status).toBe(200);
    expect(await state(shop, refunded.orderId, refunded.payment.id)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED' });

    const reversed = await checkout(shop, 'PAYPAL');
    paypal.approve(reversed.payment.provider_ref);
    await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: reversed.payment.provider_ref });
    const reversedCapture = paypal.reverse(reversed.payment.provider_ref);
    const reversal = { id: 'REVERSAL1', links: [{ rel: 'up', href: `https://api.sandbox.paypal.com/v2/payments/captures/${reversedCapture.id}` }] };
    expect((await paypalEvent(shop, 'PAYMENT.CAPTURE.REVERSED', reversal)).status).toBe(200);
    expect(await state(shop, reversed.orderId, reversed.payment.id)).toMatchObject({ order: 'CHARGEBACK', payment: 'CHARGEBACK' });
  });

  it('a dispute opened charges back under DISPUTE_OPENED, flags under DISPUTE_LOST, and charges back once resolved for the buyer', async () => {
    for (const chargebackOn of ['DISPUTE_OPENED', 'DISPUTE_LOST'] as const) {
      const shop = await paypalShop(chargebackOn);
      const { orderId, payment } = await checkout(shop, 'PAYPAL');
      paypal.approve(payment.provider_ref);
      await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: payment.provider_ref });
      const dispute = paypal.openDispute(payment.provider_ref);
      expect((await paypalEvent(shop, 'CUSTOMER.DISPUTE.CREATED', dispute)).status).toBe(200);
      expect(await state(shop, orderId, payment.id)).toMatchObject(
        chargebackOn === 'DISPUTE_OPENED' ? { order: 'CHARGEBACK', payment: 'CHARGEBACK' } : { order: 'APPROVED', payment: 'PAID', attention: 'DISPUTE_OPEN' },
      );
      expect((await paypalEvent(shop, 'CUSTOMER.DISPUTE.RESOLVED', paypal.resolveDispute(dispute.dispute_id, 'RESOLVED_BUYER_FAVOUR'))).status).toBe(200);
      expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'CHARGEBACK', payment: 'CHARGEBACK' });
    }
  });

  it('a changed body or another webhook_id is 401, nothing is captured or changed', async () => {
    const shop = await paypalShop();
    const { orderId, payment } = await checkout(shop, 'PAYPAL');
    paypal.approve(payment.provider_ref);
    expect((await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: payment.provider_ref }, { tamper: true })).status).toBe(401);
    expect((await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: payment.provider_ref }, { webhookId: 'OTHERWEBHOOK' })).status).toBe(401);
    expect(captures(payment.provider_ref)).toBe(0);
    expect(await state(shop, orderId, payment.id)).toMatchObject({ order: 'PENDING', payment: 'PENDING' });
  });
});

describe('checkout with STRIPE and PAYPAL', () => {
  const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
  const buy = async (shop: Shop, gateway: 'STRIPE' | 'PAYPAL', returnUrl: string | null = `http://${shop.store.domain}/thanks`) => {
    const pkg = await createPackage(shop.store, { name: 'VIP', price: 10, commands: [{ command: 'give {CLIENT_IDENTIFIER} diamond' }] });
    return call('POST', '/v1/webstore/checkout', {
      json: { cart: [{ package_id: pkg.id, quantity: 2 }], ...BUYER, gateway, ...(returnUrl === null ? {} : { return_url: returnUrl }) },
      headers: { 'x-store-domain': shop.store.domain },
    });
  };

  it("STRIPE: the checkout makes a Checkout Session of the order's lines, paid back to the order through its event", async () => {
    const shop = await stripeShop();
    const res = await buy(shop, 'STRIPE');
    expect(res.status, res.text).toBe(200);
    const { payment } = res.body;
    const session = stripe.sessions.get(payment.provider_ref)!;
    expect(res.body.checkout_url).toBe(session.url);
    expect(session).toMatchObject({ client_reference_id: payment.id, amount_total: 2000, currency: 'brl', success_url: `http://${shop.store.domain}/thanks` });
    expect(session.line_items).toEqual([{ quantity: 2, price_data: { currency: 'brl', unit_amount: 1000, product_data: { name: 'VIP' } } }]);
    stripe.complete(session.id, 'paid');
    expect((await stripeEvent(shop, 'checkout.session.completed', session)).status).toBe(200);
    expect(await state(shop, res.body.id, payment.id)).toMatchObject({ order: 'APPROVED', payment: 'PAID' });
  });

  it("PAYPAL: the checkout makes an order with the payment's id and the items; approved, captured and paid", async () => {
    const shop = await paypalShop();
    const res = await buy(shop, 'PAYPAL');
    expect(res.status, res.text).toBe(200);
    const { payment } = res.body;
    const order = paypal.order(payment.provider_ref);
    expect(res.body.checkout_url).toBe(`https://www.sandbox.paypal.com/checkoutnow?token=${order.id}`);
    expect(order.purchase_units[0]).toMatchObject({ custom_id: payment.id, amount: { currency_code: 'BRL', value: '20.00' } });
    expect(order.purchase_units[0]!.items).toEqual([{ name: 'VIP', quantity: '2', unit_amount: { currency_code: 'BRL', value: '10.00' }, category: 'DIGITAL_GOODS' }]);
    paypal.approve(order.id);
    expect((await paypalEvent(shop, 'CHECKOUT.ORDER.APPROVED', { id: order.id })).status).toBe(200);
    expect(await state(shop, res.body.id, payment.id)).toMatchObject({ order: 'APPROVED', payment: 'PAID' });
  });

  it('STRIPE and PAYPAL need a return_url: 422 on it, no provider called, no order placed', async () => {
    for (const [shop, gateway] of [
      [await stripeShop(), 'STRIPE'],
      [await paypalShop(), 'PAYPAL'],
    ] as const) {
      const before = stripe.requests.length + paypal.requests.length;
      const res = await buy(shop, gateway, null);
      expect(res.status, res.text).toBe(422);
      expect(firstError(res)).toMatchObject({ field: 'return_url' });
      expect(stripe.requests.length + paypal.requests.length).toBe(before);
      expect((await shop.store.get('/v1/app/order')).body.meta.total).toBe(0);
    }
  });
});

describe("the operator's refund at the provider", () => {
  it('refunds a Stripe payment (POST /v1/refunds, refund:<id>) and a PayPal capture (refund:<id>), then the order, once', async () => {
    const stripeShopOf = await stripeShop();
    const paid = await checkout(stripeShopOf, 'STRIPE');
    const session = stripe.complete(paid.payment.provider_ref, 'paid');
    await stripeEvent(stripeShopOf, 'checkout.session.completed', session);
    const refunded = await stripeShopOf.store.post(`/v1/app/order/${paid.orderId}/refund`);
    expect(refunded.status, refunded.text).toBe(200);
    expect(stripe.requests.filter((seen) => seen.path === '/v1/refunds').map((seen) => seen.headers['idempotency-key'])).toContain(`refund:${paid.payment.id}`);
    expect(stripe.chargeOfSession(session.id).refunded).toBe(true);
    expect(await state(stripeShopOf, paid.orderId, paid.payment.id)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED' });

    const paypalShopOf = await paypalShop();
    const captured = await checkout(paypalShopOf, 'PAYPAL');
    paypal.approve(captured.payment.provider_ref);
    await paypalEvent(paypalShopOf, 'CHECKOUT.ORDER.APPROVED', { id: captured.payment.provider_ref });
    const capture = paypal.captureOfOrder(captured.payment.provider_ref);
    expect((await paypalShopOf.store.post(`/v1/app/order/${captured.orderId}/refund`)).status).toBe(200);
    const asked = paypal.requests.filter((seen) => seen.path === `/v2/payments/captures/${capture.id}/refund`);
    expect(asked.map((seen) => seen.headers['paypal-request-id'])).toEqual([`refund:${captured.payment.id}`]);
    expect(capture.status).toBe('REFUNDED');
    expect(await state(paypalShopOf, captured.orderId, captured.payment.id)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED' });
  });
});
