import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { getOrderItem } from '#lib/db/order.ts';
import { createPayment, newPaymentId, readPayment } from '#lib/db/payment.ts';
import { readProviderAccount } from '#lib/db/payment-provider.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { newPayment } from '#lib/domain/payment.ts';
import type { ProviderCredentials } from '#lib/payments/adapter.ts';
import { mercadoPagoAdapter } from '#lib/payments/mercadopago.ts';
import { openSecrets } from '#lib/payments/secrets.ts';
import { testAccountOf, testGatewayAction, testGatewayAdapter, testNotification, type TestAction } from '#lib/payments/test-gateway.ts';
import type { Gateway, PaymentRecord } from '#lib/schemas/payment.ts';
import { createPackage, orderBody, placeOrder, type CreatedOrder, type Store } from './builders.ts';
import { call, newStore, type ApiResponse } from './client.ts';
import { takeFakeMercadoPago, type FakeMercadoPago } from './fake-mercadopago.ts';

/*
 * Payments of orders on the local stack, until checkout creates them (branch s30-pay-checkout):
 * an order placed through the operator's route, a payment written through lib/db/payment.ts and
 * its charge made at the provider through the same adapter the functions use (the fake Mercado
 * Pago, the TEST ledger). `payOrder` is the one place to switch to `POST /webstore/checkout` with
 * `gateway` once it lands.
 */

/**
 * The fake Mercado Pago of a test file, on the port the stack's MERCADOPAGO_API_URL names: taken
 * before the file's tests (test files run in parallel and take the port in turn), given back after
 * them, recovered from any outage a test left before each one. The answer stands for the fake the
 * hooks started (read it inside tests and hooks, not at the file's top level).
 */
export function useSharedFakeMercadoPago(waitMs = 120_000): FakeMercadoPago {
  let fake: FakeMercadoPago | undefined;
  beforeAll(async () => {
    fake = await takeFakeMercadoPago(inject('mercadopagoPort'), waitMs);
  }, waitMs + 10_000);
  afterAll(() => fake?.stop());
  beforeEach(() => fake?.recover());
  return new Proxy({} as FakeMercadoPago, {
    get: (_target, name) => {
      if (!fake) throw new Error('the fake Mercado Pago is not started yet: use it inside a test or a hook');
      const value: unknown = Reflect.get(fake, name, fake);
      return typeof value === 'function' ? value.bind(fake) : value;
    },
  });
}

/** A provider account of a store: where its notifications go, and its credentials (decrypted here, in the test process). */
export interface Connected {
  provider: 'mercadopago' | 'test';
  notifyUrl: string;
  credentials: ProviderCredentials;
}

let accounts = 0;

export async function connectTest(store: Store): Promise<Connected> {
  const res = await store.put('/v1/app/payment/provider/test', { enabled: true });
  if (res.status !== 200) throw new Error(`PUT test provider: ${res.status} ${res.text}`);
  const account = (await readProviderAccount(store.storeId, 'test'))!;
  const secrets = await openSecrets(account.secrets_ct, { store_id: store.storeId, provider: 'test' });
  return { provider: 'test', notifyUrl: res.body.notification_url, credentials: { secrets, accountId: account.account_id } };
}

export async function connectMercadoPago(store: Store, fake: FakeMercadoPago): Promise<Connected & { collectorId: number }> {
  accounts += 1;
  const accessToken = `APP_USR-${process.pid}-${Date.now()}-${accounts}-settle`;
  const collectorId = 770_000 + accounts + (process.pid % 1000) * 1000;
  fake.addAccount(accessToken, collectorId);
  const webhookSecret = `whsec-${Date.now()}-${accounts}-settleSecret`;
  const res = await store.put('/v1/app/payment/provider/mercadopago', { access_token: accessToken, webhook_secret: webhookSecret, gateways: ['PIX', 'MERCADOPAGO'] });
  if (res.status !== 200) throw new Error(`PUT mercadopago provider: ${res.status} ${res.text}`);
  return {
    provider: 'mercadopago',
    notifyUrl: res.body.notification_url,
    credentials: { secrets: { access_token: accessToken, webhook_secret: webhookSecret }, accountId: String(collectorId) },
    collectorId,
  };
}

/** A new store with TEST connected, and a PENDING order (`pendingOrder`) with a PENDING TEST payment. */
export async function pendingTestPayment() {
  const store = await newStore();
  const test = await connectTest(store);
  const order = await pendingOrder(store);
  const payment = await payOrder(store, test, order, 'TEST');
  return { store, test, order, payment };
}

/** A store with TEST and Mercado Pago connected, and an order with two payments: a TEST one, paid (the order APPROVED), and a PIX one, pending. */
export async function paidThenPix(fake: FakeMercadoPago) {
  const store = await newStore();
  const test = await connectTest(store);
  const mp = await connectMercadoPago(store, fake);
  const order = await pendingOrder(store);
  const first = await payOrder(store, test, order, 'TEST');
  const second = await payOrder(store, mp, order, 'PIX');
  await testButton(test, first, 'pay');
  return { store, test, mp, order, first, second };
}

/** A PENDING order of one package (price 5) whose delivery is one command per unit. */
export async function pendingOrder(store: Store, price = 5): Promise<CreatedOrder> {
  const pkg = await createPackage(store, { price, commands: [{ command: 'give {CLIENT_IDENTIFIER} diamond' }] });
  return placeOrder(store, orderBody(pkg.id));
}

const testAdapterOptions = { ledger: testChargeLedger, pageUrl: (ref: string) => `${inject('apiUrl')}/payment/test/${ref}`, now: Date.now };

/**
 * A PENDING payment of `order` through `gateway`, made at the provider (the charge carries the
 * notification URL). `charge` changes what the provider is asked to charge (a mismatch test).
 */
export async function payOrder(
  store: Store,
  connected: Connected,
  order: CreatedOrder,
  gateway: Gateway,
  charge: { amount?: number; currency?: string; expires_at?: string | null } = {},
): Promise<PaymentRecord> {
  const created = newPayment(
    { id: newPaymentId(), store_id: store.storeId, order_id: order.id, gateway, amount: Number(order.total), currency: 'BRL', expires_at: charge.expires_at ?? null },
    Date.now(),
  ).payment;
  const request = {
    payment: { id: created.id, gateway, amount: charge.amount ?? created.amount, currency: charge.currency ?? created.currency, expires_at: created.expires_at },
    order: { id: order.id, internal_id: order.internal_id, description: `Order ${order.id}`, payer: { email: 'steve@example.com', name: 'Steve Smith' } },
    notificationUrl: connected.notifyUrl,
    returnUrl: null,
  };
  const adapter = connected.provider === 'test' ? testGatewayAdapter(testAdapterOptions) : mercadoPagoAdapter();
  const made = await adapter.createCharge(connected.credentials, request);
  const payment: PaymentRecord = {
    ...created,
    status: 'PENDING',
    provider_ref: made.provider_ref,
    pix_code: made.pix_code,
    qr_code: made.qr_code,
    checkout_url: made.checkout_url,
    revision: 1,
  };
  await createPayment(payment);
  return payment;
}

/** A button of the TEST gateway's page: the charge changed at the "provider", then its signed notification sent (answered). */
export async function testButton(connected: Connected, payment: PaymentRecord, action: TestAction): Promise<ApiResponse> {
  const secret = connected.credentials.secrets.signing_secret!;
  const account = testAccountOf(secret);
  const ref = payment.provider_ref!;
  const charge = (await testChargeLedger.get(account, ref))!;
  const next = testGatewayAction(charge, action, Date.now());
  if (next && !(await testChargeLedger.replace(next, charge))) throw new Error(`TEST charge ${ref} changed meanwhile`);
  return sendTestNotification(connected, ref);
}

/** The TEST gateway's signed notification of a charge, POSTed to the store's notify URL (or `url`). */
export function sendTestNotification(connected: Connected, ref: string, url = connected.notifyUrl, secret = connected.credentials.secrets.signing_secret!): Promise<ApiResponse> {
  const { body, headers } = testNotification({ ref }, secret, Date.now());
  return call('POST', pathOf(url), { raw: body, headers, contentType: headers['content-type'] });
}

export const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** The order and payment as stored. */
export async function stored(store: Store, order: CreatedOrder, payment: PaymentRecord) {
  const [orderItem, paymentItem] = await Promise.all([getOrderItem(store.storeId, order.id), readPayment(store.storeId, order.id, payment.id)]);
  return { order: orderItem, payment: paymentItem! };
}

/** The commands of a store, as stored (every one an approval or a reversal queued). */
export async function storedCommands(storeId: number): Promise<Record<string, unknown>[]> {
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :command)',
      ExpressionAttributeValues: { ':pk': `STORE#${storeId}`, ':command': 'COMMAND#' },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}
