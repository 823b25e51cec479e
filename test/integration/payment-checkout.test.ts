import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { paymentByRef, readPayment } from '#lib/db/payment.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { createDiscount, createPackage, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { takeFakeMercadoPago, type FakeMercadoPago } from '../support/fake-mercadopago.ts';

/**
 * The buying half of payments (extensions section 13): a checkout with a `gateway` places the
 * PENDING order and creates its first payment in the same call, through the local stack, the TEST
 * gateway and the fake Mercado Pago on the port the stack's MERCADOPAGO_API_URL names.
 */
let fake: FakeMercadoPago;
beforeAll(async () => {
  fake = await takeFakeMercadoPago(inject('mercadopagoPort'));
}, 330_000);
afterAll(() => fake.stop());
beforeEach(() => fake.recover());

const apiBase = () => inject('apiUrl').replace(/\/v1\/?$/, '');
const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const web = (store: Store) => {
  const headers = { 'x-store-domain': store.domain };
  return {
    checkout: (body: unknown, extra: Record<string, string> = {}) => call('POST', '/v1/webstore/checkout', { json: body, headers: { ...headers, ...extra } }),
    gateways: () => call('GET', '/v1/webstore/gateway', { headers }),
    status: (internalId: string) => call('GET', `/v1/webstore/order_status/${internalId}`, { headers }),
  };
};

let accounts = 0;
/** Connects a Mercado Pago account the fake knows; answers its account id and webhook secret. */
async function connectMercadoPago(store: Store, gateways: string[] = ['PIX', 'MERCADOPAGO'], extra: Record<string, unknown> = {}) {
  accounts += 1;
  const accessToken = `APP_USR-checkout-${process.pid}-${Date.now()}-${accounts}`;
  const accountId = 770_000 + accounts;
  fake.addAccount(accessToken, accountId);
  const res = await store.put('/v1/app/payment/provider/mercadopago', { access_token: accessToken, webhook_secret: `whsec-${accounts}-${Date.now()}`, gateways, ...extra });
  expect(res.status, res.text).toBe(200);
  return { accessToken, accountId, notificationUrl: res.body.notification_url as string };
}

async function connectTest(store: Store, enabled = true) {
  const res = await store.put('/v1/app/payment/provider/test', { enabled });
  expect(res.status, res.text).toBe(200);
  return { accountId: res.body.account_id as string, notificationUrl: res.body.notification_url as string };
}

/** A store with a 10.00 package (stock 5) and a coupon TEN (10%). */
async function sellingStore() {
  const store = await newStore();
  const pkg = await createPackage(store, { name: 'VIP', price: 10, stock: 5 });
  const coupon = await createDiscount(store, { coupon: 'TEN', type: 'PERCENTAGE', value: 10 });
  return { store, pkg, coupon };
}

const cartOf = (packageId: number, quantity = 2) => ({ cart: [{ package_id: packageId, quantity }], coupon: 'TEN', ...BUYER });
const stockOf = async (store: Store, packageId: number) => (await store.get(`/v1/app/package/${packageId}`)).body.stock as number | null;
const usesOf = async (store: Store, discountId: number) => (await store.get(`/v1/app/discount/${discountId}`)).body.uses as number;

async function storeItems(storeId: number, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `STORE#${storeId}`, ':prefix': prefix },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}
const paymentItems = (storeId: number) => storeItems(storeId, 'PAYMENT#');
const orderItems = (storeId: number) => storeItems(storeId, 'ORDER#');
const createCalls = (token: string) => fake.requests.filter((seen) => seen.method === 'POST' && seen.headers.authorization === `Bearer ${token}` && seen.path !== '/users/me');

describe('POST /v1/webstore/checkout with a gateway', () => {
  it('TEST: places the PENDING order and its PENDING payment, whose checkout_url is the TEST page of its charge', async () => {
    const { store, pkg } = await sellingStore();
    const test = await connectTest(store);
    const res = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'TEST' });
    expect(res.status, res.text).toBe(200);
    // 10.00 x 2 = 20.00, coupon 10%: 18.00
    expect(res.body).toMatchObject({ status: 'PENDING', total: 18, order_id: res.body.internal_id });
    const payment = res.body.payment;
    expect(payment).toEqual({
      id: expect.stringMatching(/^pay_[A-Za-z0-9_-]{22}$/),
      order_id: res.body.id,
      gateway: 'TEST',
      provider: 'test',
      status: 'PENDING',
      amount: 18,
      currency: 'BRL',
      provider_ref: `tst_${payment.id}`,
      pix_code: null,
      qr_code: null,
      checkout_url: `${apiBase()}/v1/payment/test/tst_${payment.id}`,
      expires_at: expect.stringMatching(ISO),
      paid_at: null,
      refunded_amount: 0,
      attention: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(res.body).toMatchObject({ checkout_url: payment.checkout_url, pix_code: null, qr_code: null, expires_at: payment.expires_at });
    // Section 8's 30 minutes for a redirect checkout.
    expect(Date.parse(payment.expires_at) - Date.parse(payment.created_at)).toBe(30 * 60_000);

    // Stored PENDING after CREATED, from the checkout; the provider object names it; the TEST provider holds the charge.
    const stored = await readPayment(store.storeId, res.body.id, payment.id);
    expect(stored).toMatchObject({ status: 'PENDING', revision: 1, provider_ref: payment.provider_ref });
    expect(stored?.history).toEqual([{ at: expect.stringMatching(ISO), from: 'CREATED', to: 'PENDING', source: 'CHECKOUT' }]);
    expect((await paymentByRef(store.storeId, 'test', payment.provider_ref))?.id).toBe(payment.id);
    expect(await testChargeLedger.get(test.accountId, payment.provider_ref)).toMatchObject({
      reference: payment.id,
      account: test.accountId,
      amount_cents: 1800,
      currency: 'BRL',
      status: 'PENDING',
      notification_url: test.notificationUrl,
    });
    // The order keeps the gateway chosen.
    expect((await store.get(`/v1/app/order/${res.body.id}`)).body.status).toBe('PENDING');
  });

  it('PIX: one POST /v1/payments with the key create:<payment id>, and the pix_code, qr_code and expires_at of the account setting', async () => {
    const { store, pkg } = await sellingStore();
    const mp = await connectMercadoPago(store, ['PIX'], { pix_expiration_minutes: 60 });
    const res = await web(store).checkout({ ...cartOf(pkg.id), client_document: '123.456.789-09', gateway: 'PIX' });
    expect(res.status, res.text).toBe(200);
    const { payment } = res.body;
    const calls = createCalls(mp.accessToken);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ path: '/v1/payments', headers: { 'x-idempotency-key': `create:${payment.id}` } });
    expect(calls[0]!.body).toMatchObject({
      transaction_amount: 18,
      payment_method_id: 'pix',
      external_reference: payment.id,
      notification_url: mp.notificationUrl,
      payer: { email: 'steve@example.com' },
    });
    const made = fake.payments.get(Number(payment.provider_ref))!;
    expect(res.body.pix_code).toBe(made.point_of_interaction?.transaction_data.qr_code);
    expect(res.body.qr_code).toBe(made.point_of_interaction?.transaction_data.qr_code_base64);
    expect(res.body.pix_code).toMatch(/^00020126/);
    expect(Date.parse(res.body.expires_at) - Date.parse(payment.created_at)).toBeGreaterThanOrEqual(60 * 60_000 - 1000);
    expect(Date.parse(res.body.expires_at) - Date.parse(payment.created_at)).toBeLessThanOrEqual(60 * 60_000 + 1000);
    expect(res.body.checkout_url).toBeNull();
    expect(payment).toMatchObject({ gateway: 'PIX', provider: 'mercadopago', status: 'PENDING', amount: 18, pix_code: res.body.pix_code, qr_code: res.body.qr_code });
  });

  it('MERCADOPAGO: a Checkout Pro preference whose back_urls are the checked return_url; checkout_url is its init_point', async () => {
    const { store, pkg } = await sellingStore();
    const mp = await connectMercadoPago(store, ['MERCADOPAGO']);
    const returnUrl = `https://${store.domain}/thanks?order=1`;
    const res = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'MERCADOPAGO', return_url: returnUrl });
    expect(res.status, res.text).toBe(200);
    const calls = createCalls(mp.accessToken);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ path: '/checkout/preferences', headers: { 'x-idempotency-key': `create:${res.body.payment.id}` } });
    expect(calls[0]!.body).toMatchObject({ external_reference: res.body.payment.id, back_urls: { success: returnUrl } });
    expect(res.body.checkout_url).toMatch(/^https:\/\/www\.mercadopago\.com\.br\/checkout\/v1\/redirect\?pref_id=/);
    expect(res.body).toMatchObject({ pix_code: null, qr_code: null });
    expect(res.body.payment).toMatchObject({ status: 'PENDING', checkout_url: res.body.checkout_url });
  });

  it('without a gateway, places the order as before: no payment, no provider call', async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    const res = await web(store).checkout(cartOf(pkg.id));
    expect(res.status, res.text).toBe(200);
    expect(res.body.payment).toBeUndefined();
    expect(await paymentItems(store.storeId)).toEqual([]);
  });

  it('the provider down: 502 PROVIDER_UNAVAILABLE, the order canceled at once (stock and coupon given back), the payment CANCELED', async () => {
    const { store, pkg, coupon } = await sellingStore();
    const mp = await connectMercadoPago(store, ['PIX']);
    fake.fail('down');
    const res = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'PIX' });
    fake.recover();
    expect(res.status, res.text).toBe(502);
    expect(firstError(res)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    // one attempt and its one retry
    expect(createCalls(mp.accessToken)).toHaveLength(2);
    const orders = (await store.get('/v1/app/order')).body.data;
    expect(orders.map((order: { status: string }) => order.status)).toEqual(['CANCELED']);
    expect(await stockOf(store, pkg.id)).toBe(5);
    expect(await usesOf(store, coupon.id)).toBe(0);
    const payments = await paymentItems(store.storeId);
    expect(payments.map((item) => [item.status, item.history])).toEqual([['CANCELED', [{ at: expect.stringMatching(ISO), from: 'CREATED', to: 'CANCELED', source: 'CHECKOUT' }]]]);
  });

  it('the provider refusing: 502 as well, and the order canceled', async () => {
    const { store, pkg } = await sellingStore();
    await connectMercadoPago(store, ['PIX']);
    fake.fail('error');
    const res = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'PIX' });
    fake.recover();
    expect(res.status, res.text).toBe(502);
    expect((await store.get('/v1/app/order')).body.data.map((order: { status: string }) => order.status)).toEqual(['CANCELED']);
    expect(await stockOf(store, pkg.id)).toBe(5);
  });

  it('a retry with the same Idempotency-Key answers the same order and payment, with one charge at the provider', async () => {
    const { store, pkg } = await sellingStore();
    const mp = await connectMercadoPago(store, ['PIX']);
    const key = { 'idempotency-key': `checkout-${process.pid}-${Date.now()}` };
    const first = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'PIX' }, key);
    const again = await web(store).checkout({ ...cartOf(pkg.id), gateway: 'PIX' }, key);
    expect(first.status, first.text).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body.payment.id).toBe(first.body.payment.id);
    expect(again.body.pix_code).toBe(first.body.pix_code);
    expect(createCalls(mp.accessToken)).toHaveLength(1);
    expect(await paymentItems(store.storeId)).toHaveLength(1);
  });

  it('a checkout with TEST costs 10 DynamoDB calls', async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    const res = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, gateway: 'TEST' });
    expect(res.status, res.text).toBe(200);
    // store domain + (store + provider accounts) + placing the order without a coupon (the cart's BatchGet, order id ADD,
    // TransactWrite) + the order's payments + TransactWrite CREATED + the TEST provider's own Put + TransactWrite PENDING
    expect(dynamoDbCalls(res)).toBe(10);
  });
});

describe('POST /v1/webstore/checkout: a bad gateway or return_url is 422 and changes nothing', () => {
  const cases: [string, (store: Store) => Promise<unknown>, Record<string, unknown>, string][] = [
    ['an unknown gateway', async () => undefined, { gateway: 'BITCOIN' }, 'gateway'],
    ['a gateway in lower case (the codes are upper case)', connectTest, { gateway: 'test' }, 'gateway'],
    ['a gateway of a provider the store has not connected', connectTest, { gateway: 'PIX' }, 'gateway'],
    ['a gateway the account does not offer', (store) => connectMercadoPago(store, ['MERCADOPAGO']), { gateway: 'PIX' }, 'gateway'],
    ['a gateway of a disabled account', (store) => connectTest(store, false), { gateway: 'TEST' }, 'gateway'],
    [
      'a gateway of a removed account',
      async (store) => {
        await connectTest(store);
        await store.delete('/v1/app/payment/provider/test');
      },
      { gateway: 'TEST' },
      'gateway',
    ],
    ['a gateway not a string', connectTest, { gateway: 5 }, 'gateway'],
    ['a return_url of another site (open redirect)', connectTest, { gateway: 'TEST', return_url: 'https://evil.example/phish' }, 'return_url'],
    ['a return_url that is no URL', connectTest, { gateway: 'TEST', return_url: 'javascript:alert(1)' }, 'return_url'],
    ['a return_url with user info', connectTest, { gateway: 'TEST', return_url: 'https://user:pw@evil.example/' }, 'return_url'],
    ['a return_url too long', connectTest, { gateway: 'TEST', return_url: `https://x.example/${'a'.repeat(2100)}` }, 'return_url'],
    ['a return_url not a string', connectTest, { gateway: 'TEST', return_url: 7 }, 'return_url'],
  ];
  it.each(cases)('%s', async (_, setUp, patch, field) => {
    const { store, pkg, coupon } = await sellingStore();
    await setUp(store);
    const before = fake.requests.length;
    const res = await web(store).checkout({ ...cartOf(pkg.id), ...patch });
    expect(res.status, res.text).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect(await orderItems(store.storeId)).toEqual([]);
    expect(await paymentItems(store.storeId)).toEqual([]);
    expect(fake.requests.length).toBe(before);
    expect(await stockOf(store, pkg.id)).toBe(5);
    expect(await usesOf(store, coupon.id)).toBe(0);
  });

  it("a return_url on the store's own domain or an allowed origin is taken", async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    expect((await store.patch('/v1/app/store', { allowed_origins: ['https://shop.example.com'] })).status).toBe(200);
    for (const returnUrl of [`https://${store.domain}/done`, `http://${store.domain}:5173/done`, 'https://shop.example.com/ok']) {
      const res = await web(store).checkout({ cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, gateway: 'TEST', return_url: returnUrl });
      expect(res.status, `${returnUrl}: ${res.text}`).toBe(200);
    }
  });
});

describe('POST /v1/webstore/order/{internal_id}/payment', () => {
  const pay = (store: Store, internalId: string, body: unknown) =>
    call('POST', `/v1/webstore/order/${internalId}/payment`, { json: body, headers: { 'x-store-domain': store.domain } });

  /** A PENDING storefront order placed without a gateway. */
  async function pendingOrder(store: Store, packageId: number) {
    const res = await web(store).checkout(cartOf(packageId, 1));
    expect(res.status, res.text).toBe(200);
    return res.body as { id: number; internal_id: string; total: number };
  }

  it('201 a new payment of a PENDING order; asked again, 200 the same live payment instead of a second one', async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    const order = await pendingOrder(store, pkg.id);
    const first = await pay(store, order.internal_id, { gateway: 'TEST' });
    expect(first.status, first.text).toBe(201);
    expect(first.body.payment).toMatchObject({ order_id: order.id, gateway: 'TEST', status: 'PENDING', amount: order.total });
    expect(first.body.checkout_url).toBe(`${apiBase()}/v1/payment/test/tst_${first.body.payment.id}`);
    // the order + the store domain... : internal id + order + store + accounts + the order's payments + CREATED + the TEST Put + PENDING
    expect(dynamoDbCalls(first)).toBe(9);
    const again = await pay(store, order.internal_id, { gateway: 'TEST' });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(first.body);
    // the live payment answered: the domain, the internal id, the order, the store, the accounts and the order's payments
    expect(dynamoDbCalls(again)).toBe(6);
    expect(await paymentItems(store.storeId)).toHaveLength(1);
  });

  it('20 racing requests make one payment', async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    const order = await pendingOrder(store, pkg.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => pay(store, order.internal_id, { gateway: 'TEST' })));
    expect(answers.map((res) => res.status).sort((a, b) => a - b)).toEqual([...Array.from({ length: 19 }, () => 200), 201]);
    expect(new Set(answers.map((res) => res.body.payment.id)).size).toBe(1);
    expect(answers.every((res) => res.body.payment.status === 'PENDING')).toBe(true);
    expect(await paymentItems(store.storeId)).toHaveLength(1);
  });

  it("a new gateway cancels the order's other live payment, here and at its provider", async () => {
    const { store, pkg } = await sellingStore();
    const test = await connectTest(store);
    const mp = await connectMercadoPago(store, ['PIX']);
    const order = await pendingOrder(store, pkg.id);
    const first = await pay(store, order.internal_id, { gateway: 'TEST' });
    const second = await pay(store, order.internal_id, { gateway: 'PIX' });
    expect(second.status, second.text).toBe(201);
    expect(second.body.payment.id).not.toBe(first.body.payment.id);
    expect(second.body.pix_code).toMatch(/^00020126/);
    expect(createCalls(mp.accessToken)).toHaveLength(1);
    const replaced = await readPayment(store.storeId, order.id, first.body.payment.id);
    expect(replaced).toMatchObject({ status: 'CANCELED', revision: 2 });
    expect(replaced?.history.at(-1)).toMatchObject({ from: 'PENDING', to: 'CANCELED', source: 'CHECKOUT' });
    expect((await testChargeLedger.get(test.accountId, first.body.payment.provider_ref))?.status).toBe('CANCELED');
    // Back to TEST: a third payment (the first is over), and the PIX charge canceled at Mercado Pago.
    const third = await pay(store, order.internal_id, { gateway: 'TEST' });
    expect(third.status, third.text).toBe(201);
    expect(fake.payments.get(Number(second.body.payment.provider_ref))?.status).toBe('cancelled');
    expect(await paymentItems(store.storeId)).toHaveLength(3);
  });

  it('the provider down: 502, the payment CANCELED, the order still PENDING for another try', async () => {
    const { store, pkg } = await sellingStore();
    await connectMercadoPago(store, ['PIX']);
    const order = await pendingOrder(store, pkg.id);
    fake.fail('down');
    const res = await pay(store, order.internal_id, { gateway: 'PIX' });
    fake.recover();
    expect(res.status, res.text).toBe(502);
    expect(firstError(res)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect((await web(store).status(order.internal_id)).body).toEqual({ status: 'PENDING' });
    expect((await paymentItems(store.storeId)).map((item) => item.status)).toEqual(['CANCELED']);
    const retry = await pay(store, order.internal_id, { gateway: 'PIX' });
    expect(retry.status, retry.text).toBe(201);
  });

  it('409 for an order that is not PENDING, and nothing changes', async () => {
    const { store, pkg } = await sellingStore();
    await connectTest(store);
    const order = await pendingOrder(store, pkg.id);
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    const res = await pay(store, order.internal_id, { gateway: 'TEST' });
    expect(res.status, res.text).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT' });
    expect(await paymentItems(store.storeId)).toEqual([]);
  });

  it("404 for an unknown internal_id and for another store's order (tenancy), and nothing changes", async () => {
    const { store } = await sellingStore();
    await connectTest(store);
    const other = await sellingStore();
    await connectTest(other.store);
    const theirs = await pendingOrder(other.store, other.pkg.id);
    for (const internalId of ['nope', theirs.internal_id, 'x'.repeat(65)]) {
      const res = await pay(store, internalId, { gateway: 'TEST' });
      expect(res.status, `${internalId}: ${res.text}`).toBe(404);
      expect(firstError(res)).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect(await paymentItems(store.storeId)).toEqual([]);
    expect(await paymentItems(other.store.storeId)).toEqual([]);
  });

  it.each([
    ['no gateway', {}, 'gateway'],
    ['an empty gateway', { gateway: '' }, 'gateway'],
    ['an unknown gateway', { gateway: 'BITCOIN' }, 'gateway'],
    ['a gateway the store has not enabled', { gateway: 'PIX' }, 'gateway'],
    ['an open redirect', { gateway: 'TEST', return_url: 'https://evil.example/' }, 'return_url'],
    ['a return_url not a string', { gateway: 'TEST', return_url: ['https://x'] }, 'return_url'],
  ])('422 for %s, and nothing changes (no payment, no provider call)', async (_, body, field) => {
    const { store, pkg } = await sellingStore();
    const test = await connectTest(store);
    const order = await pendingOrder(store, pkg.id);
    const before = fake.requests.length;
    const res = await pay(store, order.internal_id, body);
    expect(res.status, res.text).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect(await paymentItems(store.storeId)).toEqual([]);
    expect(fake.requests.length).toBe(before);
    expect(await testChargeLedger.get(test.accountId, 'tst_none')).toBeUndefined();
  });
});

describe("the real system's in-game store client, unchanged, against the local stack and Mercado Pago", () => {
  /** As that client sends its requests: every GET with `Content-Type: application/json` and an empty body. */
  const client = (store: Store) => {
    const headers = { 'x-store-domain': store.domain };
    return {
      get: (path: string) => call('GET', path, { raw: '', contentType: 'application/json', headers }),
      post: (path: string, body: unknown) => call('POST', path, { json: body, headers }),
    };
  };

  it('lists the gateways, checks out as a guest with PIX, shows the PIX screen fields, and polls the order status', async () => {
    const { store, pkg } = await sellingStore();
    await connectMercadoPago(store, ['PIX', 'MERCADOPAGO']);
    const game = client(store);

    const gateways = await game.get('/v1/webstore/gateway');
    expect(gateways.status, gateways.text).toBe(200);
    expect(gateways.body).toEqual([
      { gateway: 'PIX', display: 'PIX', name: 'pix', fee: 0, is_percentage_fee: false },
      { gateway: 'MERCADOPAGO', display: 'Mercado Pago', name: 'mercadopago', fee: 0, is_percentage_fee: false },
    ]);

    // The client sends fields of its own (its user id) beside the ones it means.
    const checkout = await game.post('/v1/webstore/checkout', {
      cart: [{ package_id: pkg.id, quantity: 1 }],
      client_name: 'Steve',
      client_email: 'steve@example.com',
      client_identifier: 'Steve',
      client_document: '12345678909',
      gateway: gateways.body[0].gateway,
      terms: true,
      user_id: 'mc-uuid-123',
    });
    expect(checkout.status, checkout.text).toBe(200);
    // The PIX screen: the copy-and-paste code, the QR image (base64 PNG) and the expiry.
    expect(checkout.body.pix_code).toMatch(/^00020126.*6304[0-9A-F]{4}$/);
    expect(Buffer.from(checkout.body.qr_code, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(Date.parse(checkout.body.expires_at)).toBeGreaterThan(Date.now());
    expect(checkout.body.order_id).toBe(checkout.body.internal_id);

    // The status poll (every 5 seconds in the client): PENDING until the provider's report settles it.
    for (let poll = 0; poll < 3; poll += 1) {
      const status = await game.get(`/v1/webstore/order_status/${checkout.body.order_id}`);
      expect(status.status, status.text).toBe(200);
      expect(status.body).toEqual({ status: 'PENDING' });
    }
  });
});
