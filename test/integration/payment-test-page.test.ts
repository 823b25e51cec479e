import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProviderAccount } from '#lib/db/payment-provider.ts';
import { readPayment } from '#lib/db/payment.ts';
import { testChargeLedger, testChargeOwner } from '#lib/db/test-charge.ts';
import { openSecrets } from '#lib/payments/secrets.ts';
import { verifyTestNotification } from '#lib/payments/test-gateway.ts';
import { routes } from '#lib/routes/index.ts';
import { createDiscount, createPackage, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/**
 * The TEST gateway's page (section 13): `checkout_url` of a TEST payment is a page of the API host
 * whose buttons change the charge at the pretend provider and POST a signed notification to the
 * store's notify URL. A receiver of this file stands in for the notify route where a test says so.
 */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl = '';
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
});
afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

/** A store with TEST enabled and a PENDING TEST checkout of 18.00 (2 x 10.00, coupon 10%). */
async function testCheckout() {
  const store = await newStore();
  const pkg = await createPackage(store, { name: 'VIP', price: 10, stock: 5 });
  await createDiscount(store, { coupon: 'TEN', type: 'PERCENTAGE', value: 10 });
  expect((await store.put('/v1/app/payment/provider/test', {})).status).toBe(200);
  const res = await call('POST', '/v1/webstore/checkout', {
    json: { cart: [{ package_id: pkg.id, quantity: 2 }], coupon: 'TEN', ...BUYER, gateway: 'TEST' },
    headers: { 'x-store-domain': store.domain },
  });
  expect(res.status, res.text).toBe(200);
  const ref = res.body.payment.provider_ref as string;
  const owner = (await testChargeOwner(ref))!;
  return { store, order: res.body, ref, owner, page: pathOf(res.body.checkout_url) };
}

/** Points the charge's notifications at this file's receiver (the notify route is not on this branch). */
async function notifyReceiver(account: string, ref: string) {
  const charge = (await testChargeLedger.get(account, ref))!;
  expect(await testChargeLedger.replace({ ...charge, notification_url: receiverUrl, updated_at: new Date().toISOString() }, charge)).toBe(true);
}

async function signingSecret(store: Store) {
  const account = (await readProviderAccount(store.storeId, 'test'))!;
  return (await openSecrets(account.secrets_ct, { store_id: store.storeId, provider: 'test' })).signing_secret!;
}

describe('the TEST page', () => {
  it('shows the amount and the buttons a pending charge allows; the ref alone finds its account and store', async () => {
    const { store, ref, owner, page } = await testCheckout();
    expect(owner.store_id).toBe(store.storeId);
    const res = await call('GET', page);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('<dd id="amount">R$18.00</dd>');
    expect(res.text).toContain('<dd id="status">PENDING</dd>');
    const buttons = [...res.text.matchAll(/action="[^"]*\/v1\/payment\/test\/([^/"]+)\/(\w+)"/g)].map((match) => [match[1], match[2]]);
    expect(buttons).toEqual([
      [ref, 'pay'],
      [ref, 'fail'],
      [ref, 'cancel'],
    ]);
    // ref owner + charge
    expect(dynamoDbCalls(res)).toBe(2);
  });

  it('a button changes the charge at the pretend provider, then POSTs a signed notification to the notify URL, and goes back to the page', async () => {
    const { store, ref, owner, page } = await testCheckout();
    await notifyReceiver(owner.account, ref);
    const before = received.length;
    const res = await call('POST', `${page}/pay`, { raw: 'action=pay', contentType: 'application/x-www-form-urlencoded' });
    expect(res.status, res.text).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`/v1/payment/test/${ref}\\?notified=200$`));
    expect(await testChargeLedger.get(owner.account, ref)).toMatchObject({ status: 'PAID', paid_at: expect.any(String) });
    expect(received.length).toBe(before + 1);
    const notification = received.at(-1)!;
    expect(JSON.parse(notification.body)).toEqual({ type: 'payment', data: { id: ref } });
    const check = verifyTestNotification({
      rawBody: notification.body,
      headers: { 'x-test-signature': String(notification.headers['x-test-signature']) },
      query: {},
      secret: await signingSecret(store),
      now: Date.now(),
    });
    expect(check).toEqual({ outcome: 'verified', refs: [ref] });
    // The page now offers what a paid charge allows, and says what the store answered.
    const after = await call('GET', pathOf(res.headers.location as string));
    expect(after.text).toContain('<dd id="status">PAID</dd>');
    expect(after.text).toContain('notify route answered 200.');
    expect([...after.text.matchAll(/\/(\w+)"><button/g)].map((match) => match[1])).toEqual(['refund', 'dispute']);
    // then a dispute, lost: the charge is charged back, each step notified
    expect((await call('POST', `${page}/dispute`)).status).toBe(303);
    expect((await call('POST', `${page}/lose`)).status).toBe(303);
    expect(await testChargeLedger.get(owner.account, ref)).toMatchObject({ status: 'CHARGEBACK', dispute: 'LOST' });
    expect(received.length).toBe(before + 3);
  });

  it('409 for a button the charge does not allow now, and nothing changes or is sent', async () => {
    const { ref, owner, page } = await testCheckout();
    await notifyReceiver(owner.account, ref);
    const before = received.length;
    const charge = await testChargeLedger.get(owner.account, ref);
    const res = await call('POST', `${page}/refund`);
    expect(res.status, res.text).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT' });
    expect(await testChargeLedger.get(owner.account, ref)).toEqual(charge);
    expect(received.length).toBe(before);
  });

  it('404 for a ref never made, and a 4xx for an action that is no button', async () => {
    const { page } = await testCheckout();
    expect((await call('GET', '/v1/payment/test/tst_pay_nothing')).status).toBe(404);
    expect((await call('POST', '/v1/payment/test/tst_pay_nothing/pay')).status).toBe(404);
    const bad = await call('POST', `${page}/steal`);
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect((await call('GET', '/v1/payment/test/not-a-ref')).status).toBeGreaterThanOrEqual(400);
  });

  it("the unmodified charge notifies the store's own notify URL (the account's notification_url)", async () => {
    const { store, ref, owner, page } = await testCheckout();
    const account = await store.get('/v1/app/payment/provider/test');
    expect((await testChargeLedger.get(owner.account, ref))?.notification_url).toBe(account.body.notification_url);
    const res = await call('POST', `${page}/fail`);
    expect(res.status).toBe(303);
    // Whatever the notify route answers (it is another branch's), the notification reached the API: a status, not 'unreachable'.
    expect(res.headers.location).toMatch(/\?notified=\d{3}$/);
  });
});

/**
 * The whole purchase through the TEST page: runs once the notify route
 * (`POST /v1/payment/notify/{provider}/{notify_key}`, branch s30-pay-notify) is in the route table.
 */
const notifyRouteBuilt = Object.values(routes).some((spec) => (spec.path as string).startsWith('/v1/payment/notify/'));
describe.skipIf(!notifyRouteBuilt)('a paid purchase end to end through the TEST page and the notify route', () => {
  it('pay: the notify route answers 200, the payment is PAID and the order APPROVED; refund: the order REFUNDED', async () => {
    const { store, order, ref, page } = await testCheckout();
    const paid = await call('POST', `${page}/pay`);
    expect(paid.headers.location).toMatch(/\?notified=200$/);
    expect((await call('GET', `/v1/webstore/order_status/${order.internal_id}`, { headers: { 'x-store-domain': store.domain } })).body).toEqual({ status: 'APPROVED' });
    expect(await readPayment(store.storeId, order.id, order.payment.id)).toMatchObject({ status: 'PAID', provider_ref: ref });
    expect((await store.get(`/v1/app/order/${order.id}`)).body.status).toBe('APPROVED');
    const refunded = await call('POST', `${page}/refund`);
    expect(refunded.headers.location).toMatch(/\?notified=200$/);
    expect((await store.get(`/v1/app/order/${order.id}`)).body.status).toBe('REFUNDED');
  });
});
