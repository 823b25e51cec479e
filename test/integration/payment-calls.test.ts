import { describe, expect, it } from 'vitest';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { testAccountOf, testGatewayAction } from '#lib/payments/test-gateway.ts';
import type { PaymentRecord } from '#lib/schemas/payment.ts';
import { call, dynamoDbCalls, newStore } from '../support/client.ts';
import { type Connected, connectTest, payOrder, pendingOrder, stored, testButton } from '../support/payment-orders.ts';

/**
 * The DynamoDB calls of the three payment routes that had none pinned (measured by the local
 * stack, header x-local-dynamodb-calls, the credential lookup included), with the TEST gateway
 * so that the provider's own calls are the ledger's and counted too. A change that adds a call
 * fails here and has to say why.
 */
const calls = dynamoDbCalls;

/** The TEST charge moved at the pretend provider, without its notification: only a sync can learn it. */
async function chargeMoved(test: Connected, payment: PaymentRecord, action: 'pay'): Promise<void> {
  const account = testAccountOf(test.credentials.secrets.signing_secret!);
  const charge = (await testChargeLedger.get(account, payment.provider_ref!))!;
  const next = testGatewayAction(charge, action, Date.now());
  if (!next || !(await testChargeLedger.replace(next, charge))) throw new Error('the TEST charge did not move');
}

describe('DynamoDB calls of the payment routes without a pin until now', () => {
  it('POST /v1/app/order/{id}/payment/{payment_id}/sync: a sync that approves, then one that finds nothing new', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const order = await pendingOrder(store);
    const payment = await payOrder(store, test, order, 'TEST');
    await chargeMoved(test, payment, 'pay');
    const approving = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/sync`);
    expect(approving.status, approving.text).toBe(200);
    expect(approving.body).toMatchObject({ id: payment.id, status: 'PAID' });
    expect((await stored(store, order, payment)).order.status).toBe('APPROVED');
    // credential + GetItem payment (404 for another order's or store's) + settle: payment, order and store GetItems, the
    // account's GetItem, the TEST ledger's GetItem (the provider asked) + command ids ADD + the approval's TransactWrite
    expect(calls(approving)).toBe(9);
    const again = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/sync`);
    expect(again.body).toMatchObject({ id: payment.id, status: 'PAID' });
    // the same reads, nothing to write
    expect(calls(again)).toBe(7);
  });

  it('POST /v1/app/order/{id}/payment/{payment_id}/refund: an UNFULFILLED TEST payment refunded in the ledger, then the repeat', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const order = await pendingOrder(store);
    const payment = await payOrder(store, test, order, 'TEST');
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    expect((await testButton(test, payment, 'pay')).status).toBe(200);
    expect((await stored(store, order, payment)).payment.attention).toBe('UNFULFILLED');
    const refunded = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/refund`);
    expect(refunded.status, refunded.text).toBe(200);
    expect(refunded.body).toMatchObject({ status: 'REFUNDED', attention: null });
    // credential + GetItem payment + GetItem account + the TEST ledger's refund (GetItem + conditional Put) + settle's reads
    // and the payment's Put (the order, CANCELED, is not touched)
    expect(calls(refunded)).toBe(8);
    const again = await store.post(`/v1/app/order/${order.id}/payment/${payment.id}/refund`);
    expect(again.body).toMatchObject({ status: 'REFUNDED' });
    // credential + GetItem payment: REFUNDED already, answered as it is
    expect(calls(again)).toBe(2);
  });

  it('POST /v1/payment/test/{ref}/{action}: a button, and an unknown ref', async () => {
    const store = await newStore();
    expect((await store.put('/v1/app/payment/provider/test', {})).status).toBe(200);
    const pkg = await store.post('/v1/app/package', { name: 'P', price: 5 });
    const buyer = { client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve' };
    const headers = { 'x-store-domain': store.domain };
    const checkout = await call('POST', '/v1/webstore/checkout', { headers, json: { cart: [{ package_id: pkg.body.id, quantity: 1 }], ...buyer, gateway: 'TEST' } });
    expect(checkout.status, checkout.text).toBe(200);
    const page = new URL(checkout.body.checkout_url).pathname;
    const pressed = await call('POST', `${page}/pay`, { raw: 'action=pay', contentType: 'application/x-www-form-urlencoded' });
    expect(pressed.status, pressed.text).toBe(303);
    expect(pressed.headers.location).toMatch(/\?notified=200$/);
    // The notification the button sends is a request of its own, counted on its own (dynamodb-calls.test.ts).
    // a public route, no credential: GetItem ref owner + GetItem TEST account + GetItem charge + Put if unchanged
    expect(calls(pressed)).toBe(4);
    const unknown = await call('POST', '/v1/payment/test/tst_pay_nothing/pay');
    expect(unknown.status).toBe(404);
    // the ref's owner alone
    expect(calls(unknown)).toBe(1);
  });
});
