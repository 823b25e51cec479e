import { describe, expect, inject, it } from 'vitest';
import { atTime } from '#lib/clock.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { reconcilePayments } from '#lib/flows/payment-reconcile.ts';
import { testAccountOf, testGatewayAction } from '#lib/payments/test-gateway.ts';
import { createPackage } from '../support/builders.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { providerAccountKey } from '#lib/db/payment-provider.ts';
import type { PaymentRecord } from '#lib/schemas/payment.ts';
import { atTime as localAt, call, firstError, newStore } from '../support/client.ts';
import {
  connectMercadoPago,
  connectTest,
  type Connected,
  pathOf,
  payOrder,
  pendingOrder,
  sendTestNotification,
  stored,
  storedCommands,
  testButton,
  paidThenPix,
  pendingTestPayment,
  useSharedFakeMercadoPago,
} from '../support/payment-orders.ts';

/**
 * Settling payments (extensions section 13) through the notify route, the operator's sync and the
 * buyer's poll, over the local stack: TEST through its ledger, Mercado Pago through the fake.
 */
const fake = useSharedFakeMercadoPago();

describe('POST /v1/payment/notify/test/{key}', () => {
  it('a paid TEST charge approves its order once, carrying the payment; a repeated notification changes nothing', async () => {
    const { store, test, order, payment } = await pendingTestPayment();
    const res = await testButton(test, payment, 'pay');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ outcome: 'processed' });
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'PAID', order_role: 'ORDER', attention: null });
    expect(after.payment.history).toEqual([expect.objectContaining({ from: 'PENDING', to: 'PAID', source: 'NOTIFICATION' })]);
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: payment.id, gateway: 'TEST', paid_at: after.payment.paid_at });
    expect(await storedCommands(store.storeId)).toHaveLength(1);
    const again = await sendTestNotification(test, payment.provider_ref!);
    expect(again.status).toBe(200);
    expect(await stored(store, order, payment)).toEqual(after);
    expect(await storedCommands(store.storeId)).toHaveLength(1);
  });
});

async function setAccountId(storeId: number, accountId: string): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: providerAccountKey(storeId, 'mercadopago'),
      UpdateExpression: 'SET account_id = :id',
      ExpressionAttributeValues: { ':id': accountId },
    }),
  );
}

/** Mercado Pago's notification of a payment, signed with the store's webhook secret. */
const mercadoPagoNotice = (connected: Connected, payment: PaymentRecord, options: { tamper?: 'id' | 'signature'; url?: string; secret?: string } = {}) =>
  fake.notify(Number(payment.provider_ref), {
    secret: options.secret ?? connected.credentials.secrets.webhook_secret!,
    url: options.url ?? connected.notifyUrl,
    tamper: options.tamper,
  });

const fetchesOf = (payment: PaymentRecord) => fake.requests.filter((seen) => seen.method === 'GET' && seen.path === `/v1/payments/${payment.provider_ref}`).length;

async function pixScene(charge: Parameters<typeof payOrder>[4] = {}) {
  const store = await newStore();
  const mp = await connectMercadoPago(store, fake);
  const order = await pendingOrder(store);
  const payment = await payOrder(store, mp, order, 'PIX', charge);
  return { store, mp, order, payment, id: Number(payment.provider_ref) };
}

describe('POST /v1/payment/notify/mercadopago/{key}: rules 1-7 of section 13', () => {
  it('a PIX payment approved at Mercado Pago approves the order (rule 3), fetched once per notification', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    const res = await mercadoPagoNotice(mp, payment);
    expect(res.status, res.body).toBe(200);
    expect(fetchesOf(payment)).toBe(1);
    const after = await stored(store, order, payment);
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: payment.id, gateway: 'PIX' });
    expect(after.payment).toMatchObject({ status: 'PAID', charge_ref: payment.provider_ref });
    expect(await storedCommands(store.storeId)).toHaveLength(1);
  });

  for (const [part, change] of [
    ['amount', { transaction_amount: 4.99 }],
    ['currency', { currency_id: 'USD' }],
    ['reference', { external_reference: 'pay_someoneElse' }],
    ['account', {}],
  ] as const) {
    it(`a fetched state with another ${part} is MISMATCH and nothing else (rule 2)`, async () => {
      const { store, mp, order, payment, id } = await pixScene();
      // Fetched with this store's token, but naming another amount, currency or reference.
      fake.setStatus(id, 'approved', 'accredited', change);
      // Another account: the store's configured account is no longer the one the money went to (the operator connected another).
      if (part === 'account') await setAccountId(store.storeId, '999000111');
      const res = await mercadoPagoNotice(mp, payment);
      expect(res.status, res.body).toBe(200);
      const after = await stored(store, order, payment);
      expect(after.payment).toMatchObject({ status: 'PENDING', attention: 'MISMATCH', mismatch: part });
      expect(after.order).toMatchObject({ status: 'PENDING', payment_id: null });
      expect(await storedCommands(store.storeId)).toHaveLength(0);
    });
  }

  it('refunded before ever seen paid: the order is approved and refunded in the same settling, once (rules 1 and 5)', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    fake.setStatus(id, 'refunded');
    expect((await mercadoPagoNotice(mp, payment)).status).toBe(200);
    expect((await mercadoPagoNotice(mp, payment)).status).toBe(200);
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'REFUNDED', refunded_amount: payment.amount });
    expect(after.order).toMatchObject({ status: 'REFUNDED', payment_id: payment.id });
    expect(after.order.refunded_at).not.toBeNull();
    const commands = await storedCommands(store.storeId);
    expect(commands).toHaveLength(1);
    expect(commands[0]!.status).toBe('CANCELED');
  });

  it('refunded after the approval: the section 10 refund, exactly once (rule 5)', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    await mercadoPagoNotice(mp, payment);
    fake.setStatus(id, 'refunded');
    await Promise.all([mercadoPagoNotice(mp, payment), mercadoPagoNotice(mp, payment), mercadoPagoNotice(mp, payment)]);
    const after = await stored(store, order, payment);
    expect(after.payment.status).toBe('REFUNDED');
    expect(after.order.status).toBe('REFUNDED');
    expect(after.payment.history.map((entry) => entry.to)).toEqual(['PAID', 'REFUNDED']);
  });

  it('chargeback_on DISPUTE_OPENED: a dispute opened charges the order back (rule 6)', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    await mercadoPagoNotice(mp, payment);
    fake.setStatus(id, 'in_mediation');
    await mercadoPagoNotice(mp, payment);
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'CHARGEBACK', dispute: 'OPEN' });
    expect(after.order.status).toBe('CHARGEBACK');
  });

  it('chargeback_on DISPUTE_LOST: an opened dispute only flags DISPUTE_OPEN; the money taken back charges the order back (rule 6)', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    expect((await store.patch('/v1/app/store', { payments: { chargeback_on: 'DISPUTE_LOST' } })).status).toBe(200);
    fake.setStatus(id, 'approved');
    await mercadoPagoNotice(mp, payment);
    fake.setStatus(id, 'in_mediation');
    await mercadoPagoNotice(mp, payment);
    let after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'PAID', attention: 'DISPUTE_OPEN' });
    expect(after.order.status).toBe('APPROVED');
    fake.setStatus(id, 'charged_back');
    await mercadoPagoNotice(mp, payment);
    after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'CHARGEBACK', dispute: 'LOST' });
    expect(after.order.status).toBe('CHARGEBACK');
  });

  it('a missing or wrong signature is 401 and nothing is fetched or changed', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    const before = await stored(store, order, payment);
    for (const tamper of ['signature', 'id'] as const) {
      const res = await mercadoPagoNotice(mp, payment, { tamper });
      expect(res.status, tamper).toBe(401);
      expect(JSON.parse(res.body).errors[0].code).toBe('UNAUTHENTICATED');
    }
    const unsigned = await call('POST', `${pathOf(mp.notifyUrl)}?data.id=${id}&type=payment`, { json: { type: 'payment', data: { id: String(id) } } });
    expect(unsigned.status).toBe(401);
    expect(fetchesOf(payment)).toBe(0);
    expect(await stored(store, order, payment)).toEqual(before);
  });

  it('the provider down: 503 with Retry-After and nothing changed; the provider retries and the payment settles', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    const before = await stored(store, order, payment);
    fake.fail('down');
    const res = await mercadoPagoNotice(mp, payment);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.parse(res.body).errors[0].code).toBe('PROVIDER_UNAVAILABLE');
    expect(await stored(store, order, payment)).toEqual(before);
    fake.recover();
    expect((await mercadoPagoNotice(mp, payment)).status).toBe(200);
    expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
  });

  it("another store's notify URL: its signature and its token, so another store's payment is not found there (200, nothing done)", async () => {
    const a = await pixScene();
    const b = await pixScene();
    fake.setStatus(a.id, 'approved');
    const res = await mercadoPagoNotice(a.mp, a.payment, { url: b.mp.notifyUrl, secret: b.mp.credentials.secrets.webhook_secret });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ outcome: 'ignored' });
    expect((await stored(a.store, a.order, a.payment)).order.status).toBe('PENDING');
    expect((await stored(b.store, b.order, b.payment)).order.status).toBe('PENDING');
    // Signed with the other store's secret to this store's URL: refused.
    expect((await mercadoPagoNotice(a.mp, a.payment, { secret: b.mp.credentials.secrets.webhook_secret })).status).toBe(401);
  });
});

describe('POST /v1/payment/notify/{provider}/{key}: keys and bodies', () => {
  it('an unknown key is 404, and a key of another provider is 404', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const unknown = await call('POST', `/v1/payment/notify/test/${'A'.repeat(43)}`, { json: { type: 'payment', data: { id: 'tst_x' } } });
    expect(unknown.status).toBe(404);
    expect(firstError(unknown).code).toBe('NOT_FOUND');
    const crossed = await call('POST', pathOf(test.notifyUrl).replace('/test/', '/mercadopago/'), { json: {} });
    expect(crossed.status).toBe(404);
  });

  it('a body over 256 KB is 413; an event type payments do not use is 200 with nothing done', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const big = await call('POST', pathOf(test.notifyUrl), { raw: `{"pad":"${'x'.repeat(256 * 1024)}"}` });
    expect(big.status).toBe(413);
    const other = await sendTestNotification(test, 'not_a_test_ref');
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ outcome: 'ignored' });
  });

  it('the TEST signature covers the body byte for byte (a changed byte is 401), also when sent as a non-text body', async () => {
    const { test, payment } = await pendingTestPayment();
    const { testNotification } = await import('#lib/payments/test-gateway.ts');
    const { body, headers } = testNotification({ ref: payment.provider_ref! }, test.credentials.secrets.signing_secret!, Date.now());
    const changed = await call('POST', pathOf(test.notifyUrl), { raw: body.replace('payment', 'paymenT'), headers, contentType: 'application/json' });
    expect(changed.status).toBe(401);
    // API Gateway hands a body of another media type base64-encoded: it is decoded before the check.
    const binary = await call('POST', pathOf(test.notifyUrl), { raw: Buffer.from(body), headers, contentType: 'application/octet-stream' });
    expect(binary.status, binary.text).toBe(200);
  });
});

describe('rule 4: money for an order that is not waiting for it', () => {
  it('an order approved by hand gets the payment linked, and nothing else', async () => {
    const { store, test, order, payment } = await pendingTestPayment();
    expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
    expect((await testButton(test, payment, 'pay')).status).toBe(200);
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'PAID', order_role: 'ORDER', attention: null });
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: payment.id, gateway: 'TEST' });
    expect(await storedCommands(store.storeId)).toHaveLength(1);
  });

  it('money after the order was canceled is PAID with UNFULFILLED; the order stays CANCELED', async () => {
    const { store, test, order, payment } = await pendingTestPayment();
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    expect((await testButton(test, payment, 'pay')).status).toBe(200);
    const after = await stored(store, order, payment);
    expect(after.payment).toMatchObject({ status: 'PAID', attention: 'UNFULFILLED' });
    expect(after.order).toMatchObject({ status: 'CANCELED', payment_id: null });
    expect(await storedCommands(store.storeId)).toHaveLength(0);
  });

  it('two payments paying one order: the second is PAID with DUPLICATE, the order keeps the first', async () => {
    const { store, mp, order, first, second } = await paidThenPix(fake);
    fake.setStatus(Number(second.provider_ref), 'approved');
    expect((await mercadoPagoNotice(mp, second)).status).toBe(200);
    const after = await stored(store, order, second);
    expect(after.payment).toMatchObject({ status: 'PAID', attention: 'DUPLICATE', order_role: 'DUPLICATE' });
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: first.id, gateway: 'TEST' });
    expect(await storedCommands(store.storeId)).toHaveLength(1);
  });
});

describe('POST /v1/app/order/{id}/payment/{payment_id}/sync and the poll', () => {
  it('the sync asks the provider and answers the payment; another store, another order or an unknown payment is 404', async () => {
    const { store, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    const res = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/sync`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: payment.id, order_id: order.id, status: 'PAID', gateway: 'PIX', provider: 'mercadopago', attention: null });
    expect(res.body).not.toHaveProperty('history');
    expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
    const other = await newStore();
    expect((await other.post(`/v1/app/order/${order.id}/payment/${payment.id}/sync`)).status).toBe(404);
    const otherOrder = await pendingOrder(store);
    expect((await store.post(`/v1/app/order/${otherOrder.id}/payment/${payment.id}/sync`)).status).toBe(404);
    expect((await store.post(`/v1/app/order/${order.id}/payment/pay_unknown/sync`)).status).toBe(404);
  });

  it('the sync with the provider down is 502 and nothing changes', async () => {
    const { store, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    fake.fail('down');
    const res = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/sync`);
    expect(res.status).toBe(502);
    expect(firstError(res).code).toBe('PROVIDER_UNAVAILABLE');
    expect((await stored(store, order, payment)).order.status).toBe('PENDING');
  });

  it('the poll asks the provider at most once per payment per 10 seconds, also when polls race, and sees the order paid', async () => {
    const { store, order, payment, id } = await pixScene();
    const poll = () => call('GET', `/v1/webstore/order_status/${order.internal_id}`, { headers: { 'x-store-domain': store.domain } });
    const racing = await Promise.all(Array.from({ length: 5 }, poll));
    expect(racing.map((res) => res.body)).toEqual(Array(5).fill({ status: 'PENDING' }));
    expect(fetchesOf(payment)).toBe(1);
    fake.setStatus(id, 'approved');
    expect((await poll()).body).toEqual({ status: 'PENDING' });
    expect(fetchesOf(payment)).toBe(1);
    const later = await call('GET', `/v1/webstore/order_status/${order.internal_id}`, {
      headers: { 'x-store-domain': store.domain, ...localAt(new Date().toISOString(), 11_000) },
    });
    expect(later.body).toEqual({ status: 'APPROVED' });
    expect(fetchesOf(payment)).toBe(2);
  });
});

describe('the race of section 13 rule 3', () => {
  it('30 identical notifications, 10 polls and an operator approve at once: one approval, the commands queued once', async () => {
    const { store, mp, order, payment, id } = await pixScene();
    fake.setStatus(id, 'approved');
    const poll = () => call('GET', `/v1/webstore/order_status/${order.internal_id}`, { headers: { 'x-store-domain': store.domain } });
    const results = await Promise.all([
      ...Array.from({ length: 30 }, () => mercadoPagoNotice(mp, payment).then((res) => res.status)),
      ...Array.from({ length: 10 }, () => poll().then((res) => res.status)),
      store.post(`/v1/app/order/${order.id}/approve`).then((res) => res.status),
    ]);
    expect(results).toEqual(Array(41).fill(200));
    const after = await stored(store, order, payment);
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: payment.id });
    expect(after.payment).toMatchObject({ status: 'PAID', order_role: 'ORDER', attention: null });
    expect(after.payment.history).toHaveLength(1);
    expect(await storedCommands(store.storeId)).toHaveLength(1);
  });
});

describe('the reconciler (every 5 minutes)', () => {
  const apiBase = () => inject('apiUrl').replace(/\/v1\/?$/, '');
  const reconcile = (storeId: number, atMs = Date.now()) => atTime(atMs, () => reconcilePayments(apiBase(), storeId));

  it('settles a payment whose notification was lost, then stops visiting it', async () => {
    const { store, test, order, payment } = await pendingTestPayment();
    // Paid at the provider, its notification lost.
    const account = testAccountOf(test.credentials.secrets.signing_secret!);
    const charge = (await testChargeLedger.get(account, payment.provider_ref!))!;
    await testChargeLedger.replace(testGatewayAction(charge, 'pay', Date.now())!, charge);
    expect(await reconcile(store.storeId)).toMatchObject({ visited: 1, settled: 1 });
    const after = await stored(store, order, payment);
    expect(after.order).toMatchObject({ status: 'APPROVED', payment_id: payment.id });
    expect(after.payment.history).toEqual([expect.objectContaining({ to: 'PAID', source: 'RECONCILER' })]);
    expect(await reconcile(store.storeId)).toMatchObject({ visited: 0 });
  });

  it('expires a PIX payment past its expiry (cancelled at Mercado Pago) and cancels its checkout order, stock given back (rule 7)', async () => {
    const store = await newStore();
    const mp = await connectMercadoPago(store, fake);
    const pkg = await createPackage(store, { price: 5, stock: 3 });
    const placed = await call('POST', '/v1/webstore/checkout', {
      json: { cart: [{ package_id: pkg.id, quantity: 1 }], client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' },
      headers: { 'x-store-domain': store.domain },
    });
    expect(placed.status, placed.text).toBe(200);
    const order = placed.body;
    const expiresAt = new Date(Date.now() + 30 * 60_000).toISOString();
    const payment = await payOrder(store, mp, order, 'PIX', { expires_at: expiresAt });
    // Before the expiry: asked, still pending, nothing to do.
    expect(await reconcile(store.storeId)).toMatchObject({ visited: 1, settled: 0, canceledOrders: 0 });
    const later = Date.parse(expiresAt) + 60_000;
    expect(await reconcile(store.storeId, later)).toMatchObject({ visited: 1, expired: 1, canceledOrders: 1 });
    const after = await stored(store, order, payment);
    expect(after.payment.status).toBe('EXPIRED');
    expect(after.order.status).toBe('CANCELED');
    expect(fake.payments.get(Number(payment.provider_ref))!.status).toBe('cancelled');
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(3);
  });
});
