import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeMercadoPago } from '../support/fake-mercadopago.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import {
  connectMercadoPago,
  connectTest,
  pathOf,
  payOrder,
  pendingOrder,
  sendTestNotification,
  startSharedFakeMercadoPago,
  stored,
  storedCommands,
  testButton,
} from '../support/payment-orders.ts';

/**
 * Settling payments (extensions section 13) through the notify route, the operator's sync and the
 * buyer's poll, over the local stack: TEST through its ledger, Mercado Pago through the fake.
 */
let fake: FakeMercadoPago;
beforeAll(async () => {
  fake = await startSharedFakeMercadoPago();
});
afterAll(() => fake.stop());
beforeEach(() => fake.recover());

describe('POST /v1/payment/notify/test/{key}', () => {
  it('a paid TEST charge approves its order once, carrying the payment; a repeated notification changes nothing', async () => {
    const store = await newStore();
    const test = await connectTest(store);
    const order = await pendingOrder(store);
    const payment = await payOrder(store, test, order, 'TEST');
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
