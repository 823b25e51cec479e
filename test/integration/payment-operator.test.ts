import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it, vi } from 'vitest';
import { atTime } from '#lib/clock.ts';
import { db } from '#lib/db/client.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { reconcilePayments } from '#lib/flows/payment-reconcile.ts';
import { cancelIfUnpaid } from '#lib/flows/unpaid.ts';
import { testAccountOf } from '#lib/payments/test-gateway.ts';
import type { PaymentRecord } from '#lib/schemas/payment.ts';
import { createPackage, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore, type ApiResponse } from '../support/client.ts';
import {
  connectMercadoPago,
  connectTest,
  type Connected,
  payOrder,
  pendingOrder,
  stored,
  storedCommands,
  testButton,
  paidThenPix,
  pendingTestPayment,
  useSharedFakeMercadoPago,
} from '../support/payment-orders.ts';

/**
 * The operator's side of payments (extensions sections 10 and 13) over the local stack: the
 * order's payments with their history, the order's refund at the provider first (Mercado Pago's
 * fake and the TEST gateway), the refund of a payment that is not the order's, and the unpaid-order
 * job sparing an order whose payment is still live.
 */
const fake = useSharedFakeMercadoPago();

const notice = (connected: Connected, payment: PaymentRecord) =>
  fake.notify(Number(payment.provider_ref), { secret: connected.credentials.secrets.webhook_secret!, url: connected.notifyUrl });

/** The POSTs that refund a Mercado Pago payment, as the fake saw them. */
const refundCalls = (payment: PaymentRecord) => fake.requests.filter((seen) => seen.method === 'POST' && seen.path === `/v1/payments/${payment.provider_ref}/refunds`);
const refundsAtMercadoPago = (payment: PaymentRecord) => fake.payments.get(Number(payment.provider_ref))!.refunds.length;

/** A PENDING order of a package with one command at approval and one at refund (so a second section 10 refund would queue it twice). */
async function orderWithRefundCommand(store: Store) {
  const pkg = await createPackage(store, {
    price: 5,
    commands: [{ command: 'give {client_identifier} vip' }, { command: 'refund {client_identifier}', stage: 'REFUNDED' }],
  });
  return placeOrder(store, orderBody(pkg.id));
}

/** A store whose order was paid with PIX at Mercado Pago and approved by the notification. */
async function paidPix() {
  const store = await newStore();
  const mp = await connectMercadoPago(store, fake);
  const order = await orderWithRefundCommand(store);
  const payment = await payOrder(store, mp, order, 'PIX');
  fake.setStatus(Number(payment.provider_ref), 'approved');
  expect((await notice(mp, payment)).status).toBe(200);
  expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
  return { store, mp, order, payment };
}

/** A store whose order was paid through the TEST gateway. */
async function paidTest() {
  const store = await newStore();
  const test = await connectTest(store);
  const order = await orderWithRefundCommand(store);
  const payment = await payOrder(store, test, order, 'TEST');
  expect((await testButton(test, payment, 'pay')).status).toBe(200);
  expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
  return { store, test, order, payment };
}

const testChargeOf = async (connected: Connected, payment: PaymentRecord) =>
  (await testChargeLedger.get(testAccountOf(connected.credentials.secrets.signing_secret!), payment.provider_ref!))!;

describe('GET /v1/app/order/{id}/payment', () => {
  it("answers the order's payments newest first, each with its history; another store's order is 404; 3 calls", async () => {
    const { store, order, first, second } = await paidThenPix(fake);
    const res = await store.get(`/v1/app/order/${order.id}/payment`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((payment: { id: string }) => payment.id)).toEqual([second.id, first.id]);
    expect(Object.keys(res.body[1]).sort()).toEqual(
      [
        'id',
        'order_id',
        'gateway',
        'provider',
        'status',
        'amount',
        'currency',
        'provider_ref',
        'pix_code',
        'qr_code',
        'checkout_url',
        'expires_at',
        'paid_at',
        'refunded_amount',
        'attention',
        'created_at',
        'updated_at',
        'history',
      ].sort(),
    );
    expect(res.body[1]).toMatchObject({ status: 'PAID', gateway: 'TEST', provider: 'test', order_id: order.id, attention: null });
    expect(res.body[1].history).toEqual([{ at: expect.any(String), from: 'PENDING', to: 'PAID', source: 'NOTIFICATION' }]);
    expect(res.body[0]).toMatchObject({ status: 'PENDING', gateway: 'PIX', history: [] });
    // credential + order GetItem and payments Query (at once)
    expect(dynamoDbCalls(res)).toBe(3);

    const none = await pendingOrder(store);
    expect((await store.get(`/v1/app/order/${none.id}/payment`)).body).toEqual([]);
    const foreign = await (await newStore()).get(`/v1/app/order/${order.id}/payment`);
    expect(foreign.status).toBe(404);
    expect(firstError(foreign).message).toBe('Order not found');
    for (const bad of ['abc', '0', '99999']) expect((await store.get(`/v1/app/order/${bad}/payment`)).status).toBe(404);
  });
});

describe('POST /v1/app/order/{id}/refund of an order paid through a provider', () => {
  it('Mercado Pago: refunded at the provider first (key refund:<payment id>), then section 10 once; a repeat asks nothing more', async () => {
    const { store, mp, order, payment } = await paidPix();
    const res = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: order.id, status: 'REFUNDED' });
    expect(refundCalls(payment).map((seen) => seen.headers['x-idempotency-key'])).toEqual([`refund:${payment.id}`]);
    expect(refundsAtMercadoPago(payment)).toBe(1);
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'REFUNDED', refunded_amount: payment.amount });
    expect(after.payment.history.at(-1)).toMatchObject({ from: 'PAID', to: 'REFUNDED', source: 'OPERATOR' });
    expect((await storedCommands(store.storeId)).map((command) => [command.stage, command.status])).toEqual([
      ['APPROVED', 'CANCELED'],
      ['REFUNDED', 'PENDING'],
    ]);

    const again = await store.post(`/v1/app/order/${order.id}/refund`, { at_provider: true });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('REFUNDED');
    expect(refundCalls(payment)).toHaveLength(1);
    expect(await stored(store, order, payment)).toEqual(after);
    // The provider's own refund notification afterwards changes nothing.
    expect((await notice(mp, payment)).status).toBe(200);
    expect(await stored(store, order, payment)).toEqual(after);
  });

  it('Mercado Pago down: 502 PROVIDER_UNAVAILABLE and nothing changed; the retry once it is up refunds once', async () => {
    const { store, order, payment } = await paidPix();
    const before = await stored(store, order, payment);
    fake.fail('down');
    const res = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(res.status).toBe(502);
    expect(firstError(res).code).toBe('PROVIDER_UNAVAILABLE');
    expect(await stored(store, order, payment)).toEqual(before);
    expect(refundsAtMercadoPago(payment)).toBe(0);
    fake.recover();
    const retry = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.status).toBe('REFUNDED');
    expect(refundsAtMercadoPago(payment)).toBe(1);
    expect((await stored(store, order, payment)).payment.status).toBe('REFUNDED');
  });

  it('TEST gateway: the charge refunded in the ledger, then section 10', async () => {
    const { store, test, order, payment } = await paidTest();
    const res = await store.post(`/v1/app/order/${order.id}/refund`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('REFUNDED');
    // credential + order, payment, account GetItems + the TEST ledger's refund (GetItem + conditional Put) + order and store
    // GetItems + the REFUNDED-stage command's id ADD and the commands' BatchGet + section 10's one TransactWrite (status, commands, payment)
    expect(dynamoDbCalls(res)).toBe(11);
    expect((await testChargeOf(test, payment)).status).toBe('REFUNDED');
    expect((await stored(store, order, payment)).payment).toMatchObject({ status: 'REFUNDED', order_role: 'ORDER' });
  });

  it('at_provider false records the refund only: no provider call, the payment REFUNDED by the operator, section 10 once', async () => {
    const { store, order, payment } = await paidPix();
    const seen = fake.requests.length;
    const res = await store.post(`/v1/app/order/${order.id}/refund`, { at_provider: false });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('REFUNDED');
    expect(fake.requests.length).toBe(seen);
    expect(refundsAtMercadoPago(payment)).toBe(0);
    const after = await stored(store, order, payment);
    expect(after.payment.history.at(-1)).toMatchObject({ to: 'REFUNDED', source: 'OPERATOR' });
  });

  it('keeps its idempotency: the same key and body replays the answer, another body under the key is 422, an empty body is one body', async () => {
    const { store, order } = await paidTest();
    const key = { 'idempotency-key': `refund-${order.id}` };
    const first = await store.post(`/v1/app/order/${order.id}/refund`, undefined, { headers: key });
    expect(first.status, first.text).toBe(200);
    const replay = await store.post(`/v1/app/order/${order.id}/refund`, undefined, { headers: key });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const reused = await store.post(`/v1/app/order/${order.id}/refund`, { at_provider: false }, { headers: key });
    expect(reused.status).toBe(422);
    expect(firstError(reused).code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('an order approved by hand (no payment) refunds as before, whatever at_provider says', async () => {
    const store = await newStore();
    await connectTest(store);
    const order = await pendingOrder(store);
    expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
    const res = await store.post(`/v1/app/order/${order.id}/refund`, { at_provider: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('REFUNDED');
    expect(await storedCommands(store.storeId)).toEqual([expect.objectContaining({ status: 'CANCELED' })]);
  });

  it('every bad input is a 4xx in the envelope, with nothing changed and no provider call', async () => {
    const { store, order, payment } = await paidPix();
    const before = await stored(store, order, payment);
    const seen = fake.requests.length;
    const cases: [unknown, number][] = [
      [{ at_provider: 'yes' }, 422],
      [{ at_provider: null }, 422],
      [{ at_provider: true, extra: 1 }, 422],
      [[true], 400],
    ];
    for (const [body, status] of cases) {
      const res = await store.post(`/v1/app/order/${order.id}/refund`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(firstError(res).message).toEqual(expect.any(String));
    }
    const notJson = await call('POST', `/v1/app/order/${order.id}/refund`, { token: store.token, raw: '{"at_provider":', contentType: 'application/json' });
    expect(notJson.status).toBe(400);
    expect(firstError(notJson).code).toBe('INVALID_JSON');
    const field = await store.post(`/v1/app/order/${order.id}/refund`, { at_provider: 'yes' });
    expect(firstError(field).field).toBe('at_provider');
    expect(fake.requests.length).toBe(seen);
    expect(await stored(store, order, payment)).toEqual(before);
  });

  it("another store's order is 404, with no provider call", async () => {
    const { store, order, payment } = await paidPix();
    const seen = fake.requests.length;
    const foreign = await (await newStore()).post(`/v1/app/order/${order.id}/refund`);
    expect(foreign.status).toBe(404);
    expect(firstError(foreign).message).toBe('Order not found');
    expect(fake.requests.length).toBe(seen);
    expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
  });

  for (const provider of ['mercadopago', 'test'] as const) {
    it(`${provider}: 10 refunds at once give one refund at the provider and one section 10 refund`, async () => {
      const scene = provider === 'mercadopago' ? await paidPix() : await paidTest();
      const { store, order, payment } = scene;
      const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/order/${order.id}/refund`)));
      expect(results.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(results.every((res) => res.body.status === 'REFUNDED')).toBe(true);
      if (provider === 'mercadopago') expect(refundsAtMercadoPago(payment)).toBe(1);
      else expect((await testChargeOf((scene as Awaited<ReturnType<typeof paidTest>>).test, payment)).status).toBe('REFUNDED');
      const after = await stored(store, order, payment);
      expect(after.payment.history.filter((entry) => entry.to === 'REFUNDED')).toHaveLength(1);
      // The approval's command canceled, and the REFUNDED-stage command queued once.
      expect((await storedCommands(store.storeId)).map((command) => [command.stage, command.status])).toEqual([
        ['APPROVED', 'CANCELED'],
        ['REFUNDED', 'PENDING'],
      ]);
      expect(after.order.refunded_at).not.toBeNull();
    });

    it(`${provider}: a refund after a chargeback is 409 (section 10), with no provider refund`, async () => {
      const scene = provider === 'mercadopago' ? await paidPix() : await paidTest();
      const { store, order, payment } = scene;
      if (provider === 'mercadopago') {
        fake.setStatus(Number(payment.provider_ref), 'charged_back');
        expect((await notice((scene as Awaited<ReturnType<typeof paidPix>>).mp, payment)).status).toBe(200);
      } else {
        expect((await testButton((scene as Awaited<ReturnType<typeof paidTest>>).test, payment, 'dispute')).status).toBe(200);
      }
      const before = await stored(store, order, payment);
      expect(before.order.status).toBe('CHARGEBACK');
      const res = await store.post(`/v1/app/order/${order.id}/refund`);
      expect(res.status).toBe(409);
      expect(firstError(res).code).toBe('CONFLICT');
      expect(await stored(store, order, payment)).toEqual(before);
      if (provider === 'mercadopago') expect(refundCalls(payment)).toHaveLength(0);
    });
  }
});

describe('POST /v1/app/order/{id}/payment/{payment_id}/refund', () => {
  /** An order paid by TEST, and a PIX payment of it paid too: a DUPLICATE. */
  async function duplicate() {
    const { store, test, mp, order, first, second } = await paidThenPix(fake);
    fake.setStatus(Number(second.provider_ref), 'approved');
    expect((await notice(mp, second)).status).toBe(200);
    expect((await stored(store, order, second)).payment.attention).toBe('DUPLICATE');
    return { store, test, mp, order, first, second };
  }

  it('a DUPLICATE is refunded at Mercado Pago, the order untouched; a repeat answers it as it is', async () => {
    const { store, order, first, second } = await duplicate();
    const orderBefore = (await stored(store, order, first)).order;
    const res = await store.post(`/v1/app/order/${order.id}/payment/${second.id}/refund`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: second.id, status: 'REFUNDED', attention: null, refunded_amount: second.amount });
    expect(refundCalls(second).map((seen) => seen.headers['x-idempotency-key'])).toEqual([`refund:${second.id}`]);
    expect(refundsAtMercadoPago(second)).toBe(1);
    expect((await stored(store, order, first)).order).toEqual(orderBefore);
    expect(await storedCommands(store.storeId)).toHaveLength(1);
    const again = await store.post(`/v1/app/order/${order.id}/payment/${second.id}/refund`);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('REFUNDED');
    expect(refundCalls(second)).toHaveLength(1);
  });

  it("409 for the order's own payment and for a payment not paid; 404 for another store's, another order's or an unknown one; nothing changed", async () => {
    const { store, order, first, second } = await duplicate();
    const pending = await payOrder(store, await connectTest(store), order, 'TEST');
    const before = await stored(store, order, first);
    const seen = fake.requests.length;
    const own = await store.post(`/v1/app/order/${order.id}/payment/${first.id}/refund`);
    expect(own.status).toBe(409);
    expect(firstError(own).message).toContain('refund the order');
    expect((await store.post(`/v1/app/order/${order.id}/payment/${pending.id}/refund`)).status).toBe(409);
    expect((await (await newStore()).post(`/v1/app/order/${order.id}/payment/${second.id}/refund`)).status).toBe(404);
    const otherOrder = await pendingOrder(store);
    expect((await store.post(`/v1/app/order/${otherOrder.id}/payment/${second.id}/refund`)).status).toBe(404);
    for (const bad of ['pay_unknown', 'nope', 'pay_a%2Fb']) expect((await store.post(`/v1/app/order/${order.id}/payment/${bad}/refund`)).status).toBe(404);
    expect(fake.requests.length).toBe(seen);
    expect(await stored(store, order, first)).toEqual(before);
    expect((await stored(store, order, second)).payment.status).toBe('PAID');
  });

  it('Mercado Pago down: 502 and nothing changed; the retry refunds', async () => {
    const { store, order, second } = await duplicate();
    const before = await stored(store, order, second);
    fake.fail('down');
    const res = await store.post(`/v1/app/order/${order.id}/payment/${second.id}/refund`);
    expect(res.status).toBe(502);
    expect(firstError(res).code).toBe('PROVIDER_UNAVAILABLE');
    expect(await stored(store, order, second)).toEqual(before);
    fake.recover();
    expect((await store.post(`/v1/app/order/${order.id}/payment/${second.id}/refund`)).body.status).toBe('REFUNDED');
  });

  it('an UNFULFILLED TEST payment (paid after the order was canceled) is refunded in the ledger; the order stays CANCELED', async () => {
    const { store, test, order, payment } = await pendingTestPayment();
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    await testButton(test, payment, 'pay');
    expect((await stored(store, order, payment)).payment.attention).toBe('UNFULFILLED');
    const res = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/refund`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'REFUNDED', attention: null });
    expect((await testChargeOf(test, payment)).status).toBe('REFUNDED');
    expect((await stored(store, order, payment)).order.status).toBe('CANCELED');
  });
});

describe('the unpaid-order job and a live payment', () => {
  const apiBase = () => inject('apiUrl').replace(/\/v1\/?$/, '');

  it('spares a checkout order at 30 minutes while its 60-minute PIX charge is live; the reconciler cancels it once the charge expired', async () => {
    const store = await newStore();
    const mp = await connectMercadoPago(store, fake);
    const pkg = await createPackage(store, { price: 5, stock: 3 });
    const checkout = () =>
      call('POST', '/v1/webstore/checkout', {
        json: { cart: [{ package_id: pkg.id, quantity: 1 }], client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' },
        headers: { 'x-store-domain': store.domain },
      });
    const placedAt = Date.now();
    const withPix = (await checkout()).body;
    const without = (await checkout()).body;
    const expiresAt = new Date(placedAt + 60 * 60_000).toISOString();
    const payment = await payOrder(store, mp, withPix, 'PIX', { expires_at: expiresAt });

    const at31 = placedAt + 31 * 60_000;
    expect(await atTime(at31, () => cancelIfUnpaid(store.storeId, withPix.id, at31))).toBe(false);
    expect(await atTime(at31, () => cancelIfUnpaid(store.storeId, without.id, at31))).toBe(true);
    expect((await stored(store, withPix, payment)).order.status).toBe('PENDING');
    expect((await store.get(`/v1/app/order/${without.id}`)).body.status).toBe('CANCELED');
    // Before 30 minutes even an order with no payment is not abandoned.
    const early = (await checkout()).body;
    expect(await cancelIfUnpaid(store.storeId, early.id, Date.now() + 29 * 60_000)).toBe(false);

    const at61 = placedAt + 61 * 60_000;
    expect(await atTime(at61, () => reconcilePayments(apiBase(), store.storeId))).toMatchObject({ expired: 1, canceledOrders: 1 });
    expect((await stored(store, withPix, payment)).order.status).toBe('CANCELED');
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(2);
  });

  it("a buyer's payment created between the job's read of the payments and its cancel spares the order: the cancel reads again", async () => {
    const store = await newStore();
    await connectTest(store);
    const pkg = await createPackage(store, { price: 5, stock: 3 });
    const headers = { 'x-store-domain': store.domain };
    const placedAt = Date.now();
    const order = (
      await call('POST', '/v1/webstore/checkout', {
        json: { cart: [{ package_id: pkg.id, quantity: 1 }], client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' },
        headers,
      })
    ).body;
    // The race, made certain: the buyer's payment lands right after the job has read the order's (no) payments.
    let paid: ApiResponse | undefined;
    const send = db.send.bind(db) as (command: unknown) => Promise<unknown>;
    const spy = vi.spyOn(db, 'send').mockImplementation((async (command: unknown) => {
      const answer = await send(command);
      const isPaymentsQuery = command instanceof QueryCommand && String(command.input.ExpressionAttributeValues?.[':prefix']).startsWith('PAYMENT#');
      if (isPaymentsQuery && !paid) paid = await call('POST', `/v1/webstore/order/${order.internal_id}/payment`, { json: { gateway: 'TEST' }, headers });
      return answer;
    }) as never);
    const at31 = placedAt + 31 * 60_000;
    try {
      expect(await atTime(at31, () => cancelIfUnpaid(store.storeId, order.id, at31))).toBe(false);
    } finally {
      spy.mockRestore();
    }
    expect(paid?.status, paid?.text).toBe(201);
    expect((await store.get(`/v1/app/order/${order.id}`)).body.status).toBe('PENDING');
    const payments = (await store.get(`/v1/app/order/${order.id}/payment`)).body;
    expect(payments.map((payment: PaymentRecord) => payment.status)).toEqual(['PENDING']);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(2);
  });
});
