import { randomBytes } from 'node:crypto';
import { fieldsOf, readItem, type StoredItem } from '#lib/db/entity.ts';
import { padId, storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { check, put, putNewItem, remove, StaleRead, writeGuarded, writeIf, writeReturning, type GuardedWrite } from '#lib/db/transact.ts';
import { orderKey } from '#lib/db/order.ts';
import { conflict, notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import {
  GATEWAY_PROVIDER,
  GATEWAYS,
  ORDER_ROLES,
  PAYMENT_ATTENTIONS,
  PAYMENT_SOURCES,
  PAYMENT_STATUSES,
  PROVIDERS,
  type PaymentRecord,
  type Provider,
} from '#lib/schemas/payment.ts';

/**
 * Payments (extensions section 13) and the provider objects that name them.
 *
 * | access pattern                        | key                                                            | calls |
 * |---------------------------------------|----------------------------------------------------------------|-------|
 * | a payment of an order                 | GetItem `STORE#<s> / PAYMENT#<order id, padded>#<payment id>`, consistent | 1 |
 * | an order's payments                   | Query `STORE#<s>`, sk begins_with `PAYMENT#<order id, padded>#` (newest first once sorted) | 1 per MB |
 * | create                                | Put if new (+ the provider ref, in one transaction, when known) | 1     |
 * | store a settled decision              | Put if `revision` is the one read (StaleRead otherwise), alone or in the approval's transaction | 1 |
 * | the payment of a provider object      | GetItem `STORE#<s> / PAYMENT_REF#<provider>#<ref>`, then the payment | 2 |
 * | the payment of its own id             | the same, with the payment id as the ref (written at creation) | 2     |
 * | live payments (the reconciler)        | Query `PAYMENT_LIVE`, sk begins_with `STORE#<s>#` (one store) or all | 1 per MB |
 * | a payment no longer live              | DeleteItem of its `PAYMENT_LIVE` entry (by the reconciler)      | 1     |
 * | claim a provider call (poll spacing)  | Put `STORE#<s> / PAYMENT_ASK#<payment id>` if absent or older than the interval | 1 |
 * | a buyer's new payment of an order     | TransactWrite: Put payment (new) + Put `STORE#<s> / PAYMENT_COUNT#<order id, padded>` if the count is the one read + order still PENDING | 1 |
 * | the create call answered              | TransactWrite: Put payment if `revision` is the one read + the provider ref | 1 |
 * | no payment created since a read       | ConditionCheck `PAYMENT_COUNT#<order id, padded>` is the count read (or absent), in the caller's transaction (the abandoned-checkout cancel) | 0 extra |
 *
 * The payments of an order are filed under their own prefix, not under the order's `ORDER#<id>`
 * sort key, so no Query of orders ever meets one. The provider ref is a sentinel: one provider
 * object (a PIX payment, a preference, a TEST charge) names one payment, whoever learns it first;
 * writing it again for the same payment is a no-op, for another payment a refusal. Every payment
 * also names itself (a ref equal to its own id) when it is created: a provider's payment found
 * only by our `external_reference` (a Checkout Pro payment a notification names first) leads back
 * to its payment and order by that id.
 *
 * The claim of a provider call is an item of its own, not an attribute of the payment: a decision
 * is stored as a whole Put over the payment, which would drop an attribute it does not carry.
 *
 * A buyer's payment (the checkout, `POST /webstore/order/{id}/payment`) is created only while the
 * order's payment count is the one its decision read: of racing requests for a payment of one
 * order, one creates it and the others read again and find it (lib/domain/payment-checkout.ts
 * `paymentStart`). The count item sits outside the `PAYMENT#` prefix, so no list of payments meets it.
 *
 * `revision` is raised by every decision `settle` makes (lib/domain/payment.ts): the write of a
 * decision is conditioned on the revision its inputs were read at, so two sources that settle the
 * same payment at once cannot both win: the loser reads again and settles the newer state.
 */
const PAYMENT = ENTITY.PAYMENT;
const PAYMENT_REF = ENTITY.PAYMENT_REF;
const PAYMENT_ASK = ENTITY.PAYMENT_ASK;
const PAYMENT_LIVE = ENTITY.PAYMENT_LIVE;

/**
 * The live payments across stores, for the reconciler: one entry per payment, written with it
 * (it is born CREATED, live) and removed by the reconciler once it finds the payment settled, so
 * the list holds the live payments and those settled since the last run. One partition: at the
 * reconciler's pace (every 5 minutes) its reads are far from a partition's limits; a store with
 * a burst of checkouts adds items, not hot writes (one Put per payment).
 */
const livePaymentKey = (storeId: number, orderId: number, paymentId: string) => ({ pk: PAYMENT_LIVE, sk: `${storePk(storeId)}#${padId(orderId)}#${paymentId}` });

export interface LivePaymentEntry {
  store_id: number;
  order_id: number;
  payment_id: string;
}
const PAYMENT_COUNT = ENTITY.PAYMENT_COUNT;

/** Unguessable (128 random bits), URL- and provider-safe: Mercado Pago's `external_reference`, TEST's `tst_<id>`. */
export const newPaymentId = () => `pay_${randomBytes(16).toString('base64url')}`;

export const paymentKey = (storeId: number, orderId: number, paymentId: string) => ({ pk: storePk(storeId), sk: `${PAYMENT}#${padId(orderId)}#${paymentId}` });
const orderPaymentsPrefix = (orderId: number) => `${PAYMENT}#${padId(orderId)}#`;
export const paymentRefKey = (storeId: number, provider: Provider, ref: string) => ({ pk: storePk(storeId), sk: `${PAYMENT_REF}#${provider}#${ref}` });

const paymentItem = (payment: PaymentRecord) => ({ ...paymentKey(payment.store_id, payment.order_id, payment.id), entity: PAYMENT, ...payment });

const BINDING_PARTS = ['reference', 'amount', 'currency', 'account'] as const;
const DISPUTE_STAGES = ['OPEN', 'WON', 'LOST'] as const;

export function paymentFromItem(item: StoredItem): PaymentRecord {
  const field = fieldsOf(item, PAYMENT);
  const nullableOneOf = <const T extends string>(name: string, values: readonly T[]): T | null => (field.stringOrNull(name) === null ? null : field.oneOf(name, values));
  const gateway = field.oneOf('gateway', GATEWAYS);
  return {
    id: field.string('id'),
    store_id: field.number('store_id'),
    order_id: field.number('order_id'),
    gateway,
    provider: field.oneOf('provider', PROVIDERS, GATEWAY_PROVIDER[gateway]),
    status: field.oneOf('status', PAYMENT_STATUSES),
    amount: field.number('amount'),
    currency: field.string('currency'),
    provider_ref: field.stringOrNull('provider_ref'),
    charge_ref: field.stringOrNull('charge_ref'),
    pix_code: field.stringOrNull('pix_code'),
    qr_code: field.stringOrNull('qr_code'),
    checkout_url: field.stringOrNull('checkout_url'),
    expires_at: field.stringOrNull('expires_at'),
    paid_at: field.stringOrNull('paid_at'),
    refunded_amount: field.number('refunded_amount', 0),
    attention: nullableOneOf('attention', PAYMENT_ATTENTIONS),
    mismatch: nullableOneOf('mismatch', BINDING_PARTS),
    dispute: nullableOneOf('dispute', DISPUTE_STAGES),
    order_role: nullableOneOf('order_role', ORDER_ROLES),
    history: field.objects('history', (entry) => ({
      at: entry.string('at'),
      from: entry.oneOf('from', PAYMENT_STATUSES),
      to: entry.oneOf('to', PAYMENT_STATUSES),
      source: entry.oneOf('source', PAYMENT_SOURCES),
    })),
    revision: field.number('revision'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

/** The provider ref's sentinel: new, or already this payment's (a repeated create, a second notification). */
export function paymentRefWrite(payment: Pick<PaymentRecord, 'store_id' | 'order_id' | 'id' | 'provider'>, ref: string): GuardedWrite {
  return {
    item: put({
      Item: { ...paymentRefKey(payment.store_id, payment.provider, ref), entity: PAYMENT_REF, store_id: payment.store_id, order_id: payment.order_id, payment_id: payment.id },
      ConditionExpression: 'attribute_not_exists(pk) OR payment_id = :payment',
      ExpressionAttributeValues: { ':payment': payment.id },
    }),
    onConditionFailed: () => new Error(`${payment.provider} object ${ref} already names another payment than ${payment.id}`),
  };
}

/** A new payment, its own id's sentinel, and the sentinel of its provider object when the create call already named one. */
export function newPaymentWrites(payment: PaymentRecord): GuardedWrite[] {
  return [
    { item: putNewItem(paymentItem(payment)), onConditionFailed: () => new Error(`payment ${payment.id} created twice`) },
    paymentRefWrite(payment, payment.id),
    {
      item: put({
        Item: {
          ...livePaymentKey(payment.store_id, payment.order_id, payment.id),
          entity: PAYMENT_LIVE,
          store_id: payment.store_id,
          order_id: payment.order_id,
          payment_id: payment.id,
        },
      }),
    },
    ...(payment.provider_ref ? [paymentRefWrite(payment, payment.provider_ref)] : []),
  ];
}

export const createPayment = (payment: PaymentRecord) => writeGuarded(newPaymentWrites(payment));

const paymentCountKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: `${PAYMENT_COUNT}#${padId(orderId)}` });

/**
 * A buyer's new payment of a PENDING order, created only if the order has had exactly `countRead`
 * payments (StaleRead otherwise: a racing request created one first; read again) and is still
 * PENDING (409 otherwise).
 */
export async function startPayment(payment: PaymentRecord, countRead: number): Promise<void> {
  await writeGuarded([
    ...newPaymentWrites(payment),
    {
      item: put({
        Item: { ...paymentCountKey(payment.store_id, payment.order_id), entity: PAYMENT_COUNT, store_id: payment.store_id, order_id: payment.order_id, count: countRead + 1 },
        ConditionExpression: countRead === 0 ? 'attribute_not_exists(pk)' : '#count = :read',
        ...(countRead === 0 ? {} : { ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':read': countRead } }),
      }),
      onConditionFailed: () => new StaleRead(),
    },
    {
      item: check({
        Key: orderKey(payment.store_id, payment.order_id),
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'PENDING' },
      }),
      onConditionFailed: () => conflict('The order is no longer PENDING: it takes no new payment'),
    },
  ]);
}

/**
 * The guard of a decision made from the order's payments as read (`countRead` of them): written in
 * the decision's transaction, it fails with StaleRead when a payment was created since, so the
 * caller reads again. `startPayment` checks the order is PENDING in its own transaction, so a
 * cancel carrying this guard and a new payment cannot both land: the one written second fails.
 * A count item still absent passes: with no payment read, no payment was created since; with
 * payments read, they were filed without a count (tests, a table older than the count), and
 * `startPayment` cannot add one to such an order (its condition needs the count item), so a
 * job meeting one is not stuck retrying it.
 */
export function paymentCountUnchanged(storeId: number, orderId: number, countRead: number): GuardedWrite {
  return {
    item: check({
      Key: paymentCountKey(storeId, orderId),
      ConditionExpression: 'attribute_not_exists(pk) OR #count = :read',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':read': countRead },
    }),
    onConditionFailed: () => new StaleRead(),
  };
}

/** The create call's answer stored over the CREATED payment (StaleRead if it changed), with the provider object that names it. */
export async function storeCreatedCharge(payment: PaymentRecord, readRevision: number): Promise<void> {
  if (!payment.provider_ref) throw new Error(`payment ${payment.id} stored as created with no provider object`);
  await writeGuarded([settledPaymentWrite(payment, readRevision), paymentRefWrite(payment, payment.provider_ref)]);
}

/** The Payment resource of section 13 (what a buyer and an operator see: no history, no internal marks). */
export function paymentResponse(payment: PaymentRecord) {
  return {
    id: payment.id,
    order_id: payment.order_id,
    gateway: payment.gateway,
    provider: payment.provider,
    status: payment.status,
    amount: payment.amount,
    currency: payment.currency,
    provider_ref: payment.provider_ref,
    pix_code: payment.pix_code,
    qr_code: payment.qr_code,
    checkout_url: payment.checkout_url,
    expires_at: payment.expires_at,
    paid_at: payment.paid_at,
    refunded_amount: payment.refunded_amount,
    attention: payment.attention,
    created_at: payment.created_at,
    updated_at: payment.updated_at,
  };
}

/**
 * A decision of `settle` stored over the payment as read at `readRevision` (the decision carries
 * the next revision): StaleRead when another source stored one first, so the caller reads again.
 * Alone, or inside the order's transaction (the approval, a refund, a chargeback).
 */
export function settledPaymentWrite(payment: PaymentRecord, readRevision: number): GuardedWrite {
  return {
    item: put({ Item: paymentItem(payment), ConditionExpression: 'revision = :read', ExpressionAttributeValues: { ':read': readRevision } }),
    onConditionFailed: () => new StaleRead(),
  };
}

export async function readPayment(storeId: number, orderId: number, paymentId: string): Promise<PaymentRecord | undefined> {
  const item = await readItem(paymentKey(storeId, orderId, paymentId), true);
  return item ? paymentFromItem(item) : undefined;
}

export async function getPayment(storeId: number, orderId: number, paymentId: string): Promise<PaymentRecord> {
  const payment = await readPayment(storeId, orderId, paymentId);
  if (!payment) throw notFound('Payment');
  return payment;
}

/** The order's payments, newest first (ids are random: the order is by creation time). */
export async function orderPayments(storeId: number, orderId: number): Promise<PaymentRecord[]> {
  const items = await queryAll({ pk: storePk(storeId), skPrefix: orderPaymentsPrefix(orderId) });
  return items.map(paymentFromItem).sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
}

/** The payment a provider object names, or undefined when the store knows no such object. */
export async function paymentByRef(storeId: number, provider: Provider, ref: string): Promise<PaymentRecord | undefined> {
  const sentinel = await readItem(paymentRefKey(storeId, provider, ref), true);
  if (!sentinel) return undefined;
  const field = fieldsOf(sentinel, PAYMENT_REF);
  return readPayment(storeId, field.number('order_id'), field.string('payment_id'));
}

/** The payment of a store by its id alone (what a provider carries back as `external_reference`), or undefined. */
export const paymentById = (storeId: number, provider: Provider, paymentId: string) => paymentByRef(storeId, provider, paymentId);

/**
 * Claims the one provider call a payment may have per `intervalMs` (the buyer's poll): true for
 * the one caller whose conditional write lands, false for racing ones and for a call within the
 * interval of the last.
 */
export function claimProviderAsk(storeId: number, paymentId: string, nowMs: number, intervalMs: number): Promise<boolean> {
  return writeIf(
    put({
      Item: { pk: storePk(storeId), sk: `${PAYMENT_ASK}#${paymentId}`, entity: PAYMENT_ASK, store_id: storeId, payment_id: paymentId, asked_at: nowMs },
      ConditionExpression: 'attribute_not_exists(pk) OR asked_at <= :cutoff',
      ExpressionAttributeValues: { ':cutoff': nowMs - intervalMs },
    }),
  );
}

/** The live-payment entries, of one store or of all (the job). */
export async function livePaymentEntries(storeId?: number): Promise<LivePaymentEntry[]> {
  const items = await queryAll({ pk: PAYMENT_LIVE, skPrefix: storeId === undefined ? `${ENTITY.STORE}#` : `${storePk(storeId)}#` });
  return items.map((item) => {
    const field = fieldsOf(item, PAYMENT_LIVE);
    return { store_id: field.number('store_id'), order_id: field.number('order_id'), payment_id: field.string('payment_id') };
  });
}

/** The payment is no longer live: the reconciler stops visiting it. */
export async function dropLivePayment(entry: LivePaymentEntry): Promise<void> {
  await writeReturning({ item: remove({ Key: livePaymentKey(entry.store_id, entry.order_id, entry.payment_id) }) });
}
