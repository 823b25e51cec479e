import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { getOrderItem } from '#lib/db/order.ts';
import { readPayment } from '#lib/db/payment.ts';
import type { ChargebackOn } from '#lib/schemas/payment.ts';
import { createPackage, type Store } from '../support/builders.ts';
import { call, firstError, newStore } from '../support/client.ts';
import { type FakeMercadoPago, takeFakeMercadoPago } from '../support/fake-mercadopago.ts';
import { type FakePayPal, takeFakePayPal } from '../support/fake-paypal.ts';
import { type FakeStripe, takeFakeStripe } from '../support/fake-stripe.ts';
import { connectMercadoPago, pathOf, storedCommands } from '../support/payment-orders.ts';

/*
 * Section 13 rules 1-7, one table of scenarios run for each provider through the local stack: the
 * provider account PUT, `POST /webstore/checkout` with the provider's gateway, the payment changed
 * at the fake, its signed notification to the notify route. A driver per provider says how each
 * thing happens at that provider; the scenarios and what they expect are the same for all three.
 * Each provider's fake holds its port only while its own block runs (other files take it in turn).
 */

/** What happens at the provider to a payment; each answers the notification the provider would send about it. */
type Happening = 'pay' | 'payAnotherAmount' | 'refund' | 'refundPart' | 'disputeOpen' | 'disputeLost';

interface Shop {
  store: Store;
  notifyUrl: string;
  /** What the provider signs with: Mercado Pago's and Stripe's webhook secret, PayPal's webhook id. */
  signing: string;
}

/** A checkout through the real route: the order, its payment, and the provider's own id of it as checkout made it. */
interface Bought {
  orderId: number;
  paymentId: string;
  ref: string;
}

interface Driver {
  gateway: 'PIX' | 'STRIPE' | 'PAYPAL';
  take(): Promise<void>;
  stop(): Promise<void>;
  connect(store: Store): Promise<Shop>;
  /** Changes the payment at the fake; answers what its notification will carry. */
  happen(bought: Bought, what: Happening): unknown;
  /** The provider's signed notification of `event` (from `happen`), sent to the store's notify route; `tamper` changes it after signing. */
  notify(shop: Shop, bought: Bought, event: unknown, tamper?: boolean): Promise<number>;
  /** Makes the paid payment too old to refund at the provider (180 days back); answers the words the provider's refusal carries. */
  ageBeyondRefunds(bought: Bought): string;
  /** The provider answers 500 until `recover`. */
  fail(): void;
  recover(): void;
}

const notifyUrlOnStack = (shop: Shop) => `${inject('apiUrl').replace(/\/v1\/?$/, '')}${pathOf(shop.notifyUrl)}`;
const unique = () => `${process.pid}x${Date.now()}x${Math.floor(Math.random() * 1e6)}`;

function mercadoPagoDriver(): Driver {
  let fake: FakeMercadoPago;
  return {
    gateway: 'PIX',
    take: async () => {
      fake = await takeFakeMercadoPago(inject('mercadopagoPort'));
    },
    stop: () => fake.stop(),
    connect: async (store) => {
      const connected = await connectMercadoPago(store, fake);
      return { store, notifyUrl: connected.notifyUrl, signing: connected.credentials.secrets.webhook_secret! };
    },
    happen: ({ ref }, what) => {
      const id = Number(ref);
      if (what === 'pay') fake.setStatus(id, 'approved');
      if (what === 'payAnotherAmount') fake.setStatus(id, 'approved', 'accredited', { transaction_amount: 19.99 });
      if (what === 'refund') fake.setStatus(id, 'refunded');
      if (what === 'refundPart') fake.setStatus(id, 'approved', 'partially_refunded', { transaction_amount_refunded: 5 });
      if (what === 'disputeOpen') fake.setStatus(id, 'in_mediation');
      if (what === 'disputeLost') fake.setStatus(id, 'charged_back', 'settled');
      return id;
    },
    notify: async (shop, _bought, id, tamper) => (await fake.notify(id as number, { secret: shop.signing, url: shop.notifyUrl, tamper: tamper ? 'signature' : undefined })).status,
    ageBeyondRefunds: ({ ref }) => {
      fake.backdateApproval(Number(ref), 181);
      return 'Payment too old to be refunded';
    },
    fail: () => fake.fail('error'),
    recover: () => fake.recover(),
  };
}

function stripeDriver(): Driver {
  let fake: FakeStripe;
  const disputes = new Map<string, string>();
  return {
    gateway: 'STRIPE',
    take: async () => {
      fake = await takeFakeStripe(inject('stripePort'));
    },
    stop: () => fake.stop(),
    connect: async (store) => {
      const secretKey = `sk_test_table_${unique()}`;
      fake.addAccount(secretKey, `acct_1Table${unique()}`);
      const signing = `whsec_table_${unique()}`;
      const res = await store.put('/v1/app/payment/provider/stripe', { secret_key: secretKey, webhook_secret: signing });
      expect(res.status, res.text).toBe(200);
      return { store, notifyUrl: res.body.notification_url, signing };
    },
    happen: ({ ref: sessionId }, what) => {
      if (what === 'payAnotherAmount') fake.sessions.get(sessionId)!.amount_total = 1999;
      if (what === 'pay' || what === 'payAnotherAmount') return { type: 'checkout.session.completed', object: fake.complete(sessionId, 'paid') };
      if (what === 'refund') return { type: 'charge.refunded', object: fake.refundInDashboard(sessionId) };
      if (what === 'refundPart') return { type: 'charge.refunded', object: fake.refundInDashboard(sessionId, 500) };
      if (what === 'disputeOpen') {
        // Opened, the money not yet withdrawn: the dispute alone, as rule 6 reads it.
        const dispute = fake.dispute(sessionId, 'needs_response', false);
        disputes.set(sessionId, dispute.id);
        return { type: 'charge.dispute.created', object: dispute };
      }
      return { type: 'charge.dispute.closed', object: fake.disputeStatus(disputes.get(sessionId)!, 'lost') };
    },
    notify: async (shop, _bought, event, tamper) => {
      const { type, object } = event as { type: string; object: unknown };
      return (await fake.notify(notifyUrlOnStack(shop), shop.signing, type, object, { tamper })).status;
    },
    ageBeyondRefunds: ({ ref: sessionId }) => {
      fake.backdateCharge(sessionId, 181);
      return 'charge_expired_for_refund';
    },
    fail: () => fake.fail('error'),
    recover: () => fake.recover(),
  };
}

function payPalDriver(): Driver {
  let fake: FakePayPal;
  const disputes = new Map<string, string>();
  const refundEvent = (orderId: string) => {
    const capture = fake.captureOfOrder(orderId);
    return {
      type: 'PAYMENT.CAPTURE.REFUNDED',
      resource: { id: `REFUND${unique()}`, status: 'COMPLETED', links: [{ rel: 'up', href: `https://api.sandbox.paypal.com/v2/payments/captures/${capture.id}` }] },
    };
  };
  return {
    gateway: 'PAYPAL',
    take: async () => {
      fake = await takeFakePayPal(inject('paypalPort'), inject('paypalPki'));
    },
    stop: () => fake.stop(),
    connect: async (store) => {
      const clientId = `ATable${unique()}`;
      fake.addApp(clientId, 'ETableSecret', `APP-TABLE-${unique()}`);
      const signing = `WHTABLE${unique()}`;
      const res = await store.put('/v1/app/payment/provider/paypal', { client_id: clientId, client_secret: 'ETableSecret', webhook_id: signing, environment: 'sandbox' });
      expect(res.status, res.text).toBe(200);
      return { store, notifyUrl: res.body.notification_url, signing };
    },
    happen: ({ ref: orderId }, what) => {
      if (what === 'payAnotherAmount') fake.order(orderId).purchase_units[0]!.amount!.value = '19.99';
      // The buyer approves; the service captures when the approval reaches it.
      if (what === 'pay' || what === 'payAnotherAmount') return { type: 'CHECKOUT.ORDER.APPROVED', resource: { id: fake.approve(orderId).id, status: 'APPROVED' } };
      if (what === 'refund' || what === 'refundPart') {
        fake.refundInDashboard(orderId, what === 'refundPart' ? '5.00' : undefined);
        return refundEvent(orderId);
      }
      if (what === 'disputeOpen') {
        const dispute = fake.openDispute(orderId);
        disputes.set(orderId, dispute.dispute_id);
        return { type: 'CUSTOMER.DISPUTE.CREATED', resource: dispute };
      }
      return { type: 'CUSTOMER.DISPUTE.RESOLVED', resource: fake.resolveDispute(disputes.get(orderId)!, 'RESOLVED_BUYER_FAVOUR') };
    },
    notify: async (shop, _bought, event, tamper) => {
      const { type, resource } = event as { type: string; resource: unknown };
      return (await fake.notify(notifyUrlOnStack(shop), shop.signing, type, resource, { tamper })).status;
    },
    ageBeyondRefunds: ({ ref: orderId }) => {
      fake.backdateCapture(orderId, 181);
      return 'REFUND_TIME_LIMIT_EXCEEDED';
    },
    fail: () => fake.fail('error'),
    recover: () => fake.recover(),
  };
}

const DRIVERS = { mercadopago: mercadoPagoDriver(), stripe: stripeDriver(), paypal: payPalDriver() };
type Provider = keyof typeof DRIVERS;

const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com', client_document: '123.456.789-09' };

/** A store connected to the provider with `chargebackOn`, and an order of 2 x 10.00 bought through checkout with the provider's gateway. */
async function buy(driver: Driver, chargebackOn: ChargebackOn = 'DISPUTE_OPENED'): Promise<{ shop: Shop; bought: Bought }> {
  const shop = await driver.connect(await newStore());
  expect((await shop.store.patch('/v1/app/store', { payments: { chargeback_on: chargebackOn } })).status).toBe(200);
  const pkg = await createPackage(shop.store, { name: 'VIP', price: 10, commands: [{ command: 'give {CLIENT_IDENTIFIER} diamond' }] });
  const res = await call('POST', '/v1/webstore/checkout', {
    json: { cart: [{ package_id: pkg.id, quantity: 2 }], ...BUYER, gateway: driver.gateway, return_url: `http://${shop.store.domain}/thanks` },
    headers: { 'x-store-domain': shop.store.domain },
  });
  expect(res.status, res.text).toBe(200);
  return { shop, bought: { orderId: res.body.id, paymentId: res.body.payment.id, ref: res.body.payment.provider_ref } };
}

async function stateOf(shop: Shop, bought: Bought) {
  const [order, payment] = await Promise.all([getOrderItem(shop.store.storeId, bought.orderId), readPayment(shop.store.storeId, bought.orderId, bought.paymentId)]);
  return {
    order: order.status,
    orderPayment: order.payment_id,
    payment: payment!.status,
    attention: payment!.attention,
    refunded: payment!.refunded_amount,
    // Where the payment moved after checkout created it PENDING.
    transitions: payment!.history.map((entry) => entry.to).filter((to) => to !== 'PENDING'),
    commands: (await storedCommands(shop.store.storeId)).length,
  };
}

/** Happens at the provider, then its one notification: answered 200. */
async function happenAndNotify(driver: Driver, shop: Shop, bought: Bought, what: Happening) {
  const status = await driver.notify(shop, bought, driver.happen(bought, what));
  expect(status, what).toBe(200);
}

/** One row of the table: what happens and what the rules say follows, in a provider's own terms through its driver. */
interface Scenario {
  name: string;
  run(driver: Driver): Promise<void>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'paid -> the order APPROVED once, carrying the payment (rule 3)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'PENDING', payment: 'PENDING', commands: 0 });
      await happenAndNotify(driver, shop, bought, 'pay');
      expect(await stateOf(shop, bought)).toMatchObject({
        order: 'APPROVED',
        orderPayment: bought.paymentId,
        payment: 'PAID',
        attention: null,
        transitions: ['PAID'],
        commands: 1,
      });
    },
  },
  {
    name: 'the same notification 10 times at once -> one approval, the commands queued once (rule 3 race)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      const event = driver.happen(bought, 'pay');
      const answers = await Promise.all(Array.from({ length: 10 }, () => driver.notify(shop, bought, event)));
      expect(answers).toEqual(Array(10).fill(200));
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'APPROVED', orderPayment: bought.paymentId, payment: 'PAID', transitions: ['PAID'], commands: 1 });
    },
  },
  {
    name: 'another amount at the provider -> MISMATCH, the order untouched (rule 2)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      await happenAndNotify(driver, shop, bought, 'payAnotherAmount');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'PENDING', orderPayment: null, payment: 'PENDING', attention: 'MISMATCH', commands: 0 });
    },
  },
  {
    name: 'refunded in full at the provider after the approval -> the order REFUNDED once (rule 5)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      await happenAndNotify(driver, shop, bought, 'pay');
      const event = driver.happen(bought, 'refund');
      expect(await Promise.all([1, 2, 3].map(() => driver.notify(shop, bought, event)))).toEqual([200, 200, 200]);
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED', refunded: 20, transitions: ['PAID', 'REFUNDED'], commands: 1 });
    },
  },
  {
    name: 'refunded in part -> PAID with refunded_amount and PARTIAL_REFUND, the order still APPROVED (rule 5)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      await happenAndNotify(driver, shop, bought, 'pay');
      await happenAndNotify(driver, shop, bought, 'refundPart');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'APPROVED', payment: 'PAID', attention: 'PARTIAL_REFUND', refunded: 5, transitions: ['PAID'] });
    },
  },
  {
    name: 'chargeback_on DISPUTE_OPENED: a dispute opened charges the order back (rule 6)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver, 'DISPUTE_OPENED');
      await happenAndNotify(driver, shop, bought, 'pay');
      await happenAndNotify(driver, shop, bought, 'disputeOpen');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'CHARGEBACK', payment: 'CHARGEBACK', transitions: ['PAID', 'CHARGEBACK'] });
    },
  },
  {
    name: 'chargeback_on DISPUTE_LOST: opened -> DISPUTE_OPEN only; lost -> the order charged back (rule 6)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver, 'DISPUTE_LOST');
      await happenAndNotify(driver, shop, bought, 'pay');
      await happenAndNotify(driver, shop, bought, 'disputeOpen');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'APPROVED', payment: 'PAID', attention: 'DISPUTE_OPEN', transitions: ['PAID'] });
      await happenAndNotify(driver, shop, bought, 'disputeLost');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'CHARGEBACK', payment: 'CHARGEBACK', transitions: ['PAID', 'CHARGEBACK'] });
    },
  },
  {
    name: "the operator's refund refused at the provider (a payment too old) -> 409 PROVIDER_REFUSED with the provider's reason, nothing changed",
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      await happenAndNotify(driver, shop, bought, 'pay');
      const reason = driver.ageBeyondRefunds(bought);
      const before = await stateOf(shop, bought);
      for (const attempt of [1, 2]) {
        const res = await shop.store.post(`/v1/app/order/${bought.orderId}/refund`);
        expect(res.status, `${attempt}: ${res.text}`).toBe(409);
        expect(firstError(res).code).toBe('PROVIDER_REFUSED');
        expect(firstError(res).message).toContain(reason);
      }
      expect(await stateOf(shop, bought)).toEqual(before);
      expect(before).toMatchObject({ order: 'APPROVED', payment: 'PAID', refunded: 0 });
    },
  },
  {
    name: "the provider failing at the operator's refund -> 502 PROVIDER_UNAVAILABLE, nothing changed; once it is back the refund goes through",
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      await happenAndNotify(driver, shop, bought, 'pay');
      const before = await stateOf(shop, bought);
      driver.fail();
      try {
        const res = await shop.store.post(`/v1/app/order/${bought.orderId}/refund`);
        expect(res.status, res.text).toBe(502);
        expect(firstError(res).code).toBe('PROVIDER_UNAVAILABLE');
      } finally {
        driver.recover();
      }
      expect(await stateOf(shop, bought)).toEqual(before);
      const res = await shop.store.post(`/v1/app/order/${bought.orderId}/refund`);
      expect(res.status, res.text).toBe(200);
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'REFUNDED', payment: 'REFUNDED', refunded: 20 });
    },
  },
  {
    name: 'a bad signature -> 401 and nothing changed',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      const before = await stateOf(shop, bought);
      expect(await driver.notify(shop, bought, driver.happen(bought, 'pay'), true)).toBe(401);
      expect(await stateOf(shop, bought)).toEqual(before);
      expect(before).toMatchObject({ order: 'PENDING', payment: 'PENDING', commands: 0 });
    },
  },
  {
    name: 'money after the order was canceled -> PAID with UNFULFILLED, the order stays CANCELED (rule 4)',
    run: async (driver) => {
      const { shop, bought } = await buy(driver);
      const canceled = await shop.store.post(`/v1/app/order/${bought.orderId}/cancel`);
      expect(canceled.status, canceled.text).toBe(200);
      await happenAndNotify(driver, shop, bought, 'pay');
      expect(await stateOf(shop, bought)).toMatchObject({ order: 'CANCELED', orderPayment: null, payment: 'PAID', attention: 'UNFULFILLED', commands: 0 });
    },
  },
];

describe.each(Object.keys(DRIVERS) as Provider[])('section 13 rules through %s', (provider) => {
  const driver = DRIVERS[provider];
  beforeAll(() => driver.take(), 330_000);
  afterAll(() => driver.stop());

  it.each(SCENARIOS)('$name', ({ run }) => run(driver));
});
