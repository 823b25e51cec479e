import { commandPuts } from '#lib/db/command.ts';
import { customerKey } from '#lib/db/customer.ts';
import { fieldsOf, getMany, newItemWrite, readItem, type Fields, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, padId, storePk } from '#lib/db/keys.ts';
import { countMoves, orderCountShard } from '#lib/db/list-count.ts';
import { nextId } from '#lib/db/sequence.ts';
import { putNewItem, StaleRead, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import type { ChainEntry, PlannedCommand } from '#lib/schemas/command.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { ORDER_STATUSES, type CheckoutExtras, type Delivery, type Order, type OrderPackageLine, type OrderStatus, type PlacedOrder, type Reserved } from '#lib/schemas/order.ts';
import { COMMAND_STAGES } from '#lib/schemas/package.ts';

/**
 * The order item and its status changes. The use cases (read, decide, write) are in
 * lib/flows/order.ts; lists and their cursor in lib/db/order-list.ts; the coupon's reservation
 * and release in lib/db/coupon-use.ts. Calls below exclude the credential lookup.
 *
 * | access pattern                  | key / index                                                                 | calls |
 * |---------------------------------|-----------------------------------------------------------------------------|-------|
 * | read for a new order            | lib/db/cart.ts                                                              | 3-4   |
 * | next order id                   | ADD on `#SEQ#ORDER` (lib/db/sequence.ts)                                    | 1     |
 * | create                          | TransactWrite: Put `STORE#<s> / ORDER#<id>`, Put sentinel                   | 1     |
 * |                                 | `ORDER_INTERNAL#<internal_id>`, the list counts (the order's shard,         |       |
 * |                                 | `COUNT#<s> / ORDER#SHARD#<id mod 16>`),                                     |       |
 * |                                 | the packages' stock and limits                                              |       |
 * |                                 | (lib/db/reservation.ts), the coupon's reservation (lib/db/coupon-use.ts),   |       |
 * |                                 | a checkout's due item (lib/db/unpaid.ts)                                    |       |
 * | get by id                       | GetItem `STORE#<s> / ORDER#<id>` (consistent)                               | 1     |
 * | get by internal_id              | GetItem sentinel `STORE#<s> / ORDER_INTERNAL#<internal_id>` + GetItem order  | 2     |
 * |                                 | (the sentinel also holds `client_email`: the chat checks a buyer with it)   |       |
 * | approve                         | TransactWrite: order update conditioned on PENDING (lines gain expires_at)  | 1     |
 * |                                 | + one Put per command and the chain item that orders them (lib/db/command.ts) |     |
 * |                                 | + the status counts (the order's shard)                                     |       |
 * | (an order of 98 commands placed | the same without the counts, the order marked `count_owed`; then            | +1    |
 * | before the counts)              | TransactWrite: order REMOVE count_owed (conditioned on it) + the counts     |       |
 * | refund, chargeback              | lib/db/order-reversal.ts                                                    |       |
 * | commission credited             | UpdateItem clearing `commission_pending`                                    | 1     |
 * | cancel                          | TransactWrite: order conditioned on PENDING + the coupon's and the          | 1     |
 * |                                 | packages' releases + the status counts (the order's shard)                  |       |
 * | status by internal_id (public)  | GetItem sentinel + GetItem order                                            | 2     |
 * | a buyer's order by internal_id  | BatchGet (sentinel, customer: e-mails must match) + GetItem order           | 2     |
 * | index an older order's client   | UpdateItem sentinel SET gsi3pk/gsi3sk if absent (`indexOrderClient`)        | 1     |
 *
 * Commands are rendered when the order is placed (every input of a template is known then) and
 * kept in the order item (`deliveries`): an approval delivers what was sold, even if the package
 * has been edited or deleted since, and needs no catalog read.
 *
 * Approval happens once: the status update is conditioned on PENDING and every command is Put
 * in the same transaction (at most 97, checked when the order is placed), so racing approvals
 * produce exactly one set of commands. The commission is credited after that transaction
 * (creditCommission is idempotent per order); `commission_pending` is set by the transaction
 * and cleared once credited, so an approval call that finds an APPROVED order still pending
 * (the first one died in between) finishes the credit, and any later call does nothing.
 * Ids of commands allocated by an approval that then lost the race are skipped (gaps).
 *
 * The list indexes (gsi1 all orders, gsi2 by status, gsi3 a buyer's orders by lower-case
 * client_email; gsi3 also holds the internal_id sentinels by client_identifier) are keyed
 * `<created_at>#<id>`; the status changes below move gsi2pk with the status. The buyer list is an
 * index rather than an index item per order because it costs no write of its own and follows the
 * order's status changes for free (its projection is the order itself).
 *
 * The page-mode totals of the list (all orders, and each status) are counts (lib/db/list-count.ts),
 * moved in the same transaction as each status change, so a total never disagrees with the orders.
 * Each order moves the counts of one shard, `COUNT#<s> / ORDER#SHARD#<id mod 16>`, always the same
 * for that order: no item is written by all of a store's order writes, so on AWS two of them meet
 * on a counter (TransactionConflict, retried) only when their orders share a shard, and the
 * modelled ceiling of one store's order writes is about 16 times that of one counter item
 * (docs/decisions.md, test/bench/contention.ts). One item per order write, not one per list: an
 * approval's transaction holds the order, up to 97 commands and their chain item, and one count
 * item (all the statuses' counts of that shard). Orders placed before that
 * bound with 98 commands would need 101 items: their approval writes the order with `count_owed`
 * (the status still counted for it) and then moves the counts in a second transaction that
 * removes the mark; if the process dies in between, the next approval call of that order (which
 * answers it as it is), or its refund or chargeback (which moves the counts from the owed status),
 * finishes it. A total may be off by that one order in the meantime.
 */
const ORDER = ENTITY.ORDER;

export const orderKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: entitySk(ORDER, orderId) });
/** The sort key of an order's internal_id sentinel; chat messages live under it (lib/db/chat.ts). */
export const internalIdSk = (internalId: string) => `${ENTITY.ORDER_INTERNAL}#${internalId}`;
const internalIdKey = (storeId: number, internalId: string) => ({ pk: storePk(storeId), sk: internalIdSk(internalId) });
export const allOrdersPk = (storeId: number) => `${storePk(storeId)}#${ORDER}`;
export const statusPk = (storeId: number, status: OrderStatus) => `${storePk(storeId)}#${ORDER}#${status}`;
export const buyerPk = (storeId: number, email: string) => `${storePk(storeId)}#BUYER#${email.toLowerCase()}`;
/** gsi3 partition of the internal_id sentinels of one client_identifier (exact: identifiers are case-sensitive). */
export const clientPk = (storeId: number, clientIdentifier: string) => `${storePk(storeId)}#CLIENT#${clientIdentifier}`;
export const listSk = (createdAt: string, orderId: number) => `${createdAt}#${padId(orderId)}`;

/**
 * An order enters the lists (`from` null) or moves from one status's list to another's: the counts'
 * write, for its transaction, on the order's own shard of the counts (see the header).
 */
export const orderCountMove = (storeId: number, orderId: number, from: OrderStatus | null, to: OrderStatus): GuardedWrite =>
  countMoves(
    storeId,
    orderCountShard(orderId),
    from === null
      ? [{ delta: 1 }, { field: to, delta: 1 }]
      : [
          { field: from, delta: -1 },
          { field: to, delta: 1 },
        ],
  );

/** A TransactWrite holds at most 100 items. */
const TRANSACTION_ITEMS_MAX = 100;

/** What a reversal still owes, on the order item between the status change and the last effect. */
export interface ReversalMarks {
  reversal_commands?: boolean;
  reversal_commission?: boolean;
  /** The id of the first command of the stage's batch, allocated before the status change. */
  reversal_first_command_id?: number;
}

export interface OrderItem extends PlacedOrder, ReversalMarks {
  /** The sort keys of the coupon's per-client counters, for the release. */
  coupon_counters: string[];
  command_ids: number[];
  commission_pending?: boolean;
  /** The status whose count still holds this order (an approval too large to move the counts in its transaction). */
  count_owed?: OrderStatus;
  /** The payment that paid it (extensions section 13), or null: unpaid, or approved by hand with no payment. */
  payment_id: string | null;
  /** The gateway of that payment, and when its money arrived. */
  gateway: string | null;
  paid_at: string | null;
}

/** What an order paid through a provider carries of its payment (section 13 rules 3 and 4). */
export interface OrderPaymentLink {
  payment_id: string;
  gateway: string;
  paid_at: string;
}

/** A line stored before the pricing breakdown existed: no options, no promo, its coupon share unknown, its subtotal price x quantity. */
function lineFromFields(field: Fields): OrderPackageLine {
  const price = field.number('price');
  const quantity = field.number('quantity');
  const subtotal = field.number('subtotal', Math.round(price * quantity * 100) / 100);
  return {
    package_id: field.number('package_id'),
    name: field.string('name'),
    price,
    quantity,
    options_price: field.number('options_price', 0),
    subtotal,
    promo_discount: field.number('promo_discount', 0),
    promo_id: field.numberOrNull('promo_id'),
    coupon_discount: field.number('coupon_discount', 0),
    total: field.number('total', subtotal),
    // Lines stored before a line had its own values have none.
    variables: field.objects('variables', (variable) => ({ name: variable.string('name'), value: variable.string('value') })),
    expires_at: field.stringOrNull('expires_at'),
  };
}

/** A delivery rendered before servers and stages existed keeps them absent: any server, APPROVED (lib/db/command.ts). */
const deliveryFromFields = (field: Fields): Delivery => ({
  package_id: field.number('package_id'),
  command: field.string('command'),
  offline_execute: field.boolean('offline_execute'),
  delay_seconds: field.number('delay_seconds'),
  ...(field.raw('servers') === undefined ? {} : { servers: field.raw('servers') === null ? null : field.numbers('servers') }),
  ...(field.raw('stage') === undefined ? {} : { stage: field.oneOf('stage', COMMAND_STAGES) }),
});

const reservedFromFields = (field: Fields): Reserved => ({ package_id: field.number('package_id'), units: field.number('units') });

const checkoutFromFields = (field: Fields): CheckoutExtras => ({
  client_document: field.stringOrNull('client_document'),
  client_phone: field.stringOrNull('client_phone'),
  gateway: field.stringOrNull('gateway'),
  terms: field.raw('terms') == null ? null : field.boolean('terms'),
  customer_id: field.numberOrNull('customer_id'),
});

/**
 * The stored order. Orders placed before the pricing breakdown lack its discounts (no promo, the
 * whole discount the coupon's) and their reservations (nothing to give back).
 */
export function orderFromItem(item: StoredItem): OrderItem {
  const field = fieldsOf(item, ORDER);
  const discount = field.number('discount');
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    internal_id: field.string('internal_id'),
    status: field.oneOf('status', ORDER_STATUSES),
    subtotal: field.number('subtotal'),
    promo_discount: field.number('promo_discount', 0),
    coupon_discount: field.number('coupon_discount', discount),
    discount,
    total: field.number('total'),
    client_identifier: field.string('client_identifier'),
    client_email: field.string('client_email'),
    client_name: field.string('client_name'),
    client_social: field.stringOrNull('client_social'),
    packages: field.objects('packages', lineFromFields),
    variables: field.objects('variables', (variable) => ({ name: variable.string('name'), value: variable.string('value') })),
    coupon: field.stringOrNull('coupon'),
    ref_code: field.stringOrNull('ref_code'),
    approved_at: field.stringOrNull('approved_at'),
    canceled_at: field.stringOrNull('canceled_at'),
    refunded_at: field.stringOrNull('refunded_at'),
    chargeback_at: field.stringOrNull('chargeback_at'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    package_ids: field.numbers('package_ids'),
    deliveries: field.objects('deliveries', deliveryFromFields),
    discount_id: field.numberOrNull('discount_id'),
    stock_reserved: field.objects('stock_reserved', reservedFromFields),
    limit_reserved: field.objects('limit_reserved', reservedFromFields),
    ...(item.expiry_days === undefined ? {} : { expiry_days: field.objects('expiry_days', (entry) => ({ package_id: entry.number('package_id'), days: entry.number('days') })) }),
    checkout: item.checkout == null ? null : field.object('checkout', checkoutFromFields),
    coupon_counters: field.strings('coupon_counters'),
    command_ids: field.numbers('command_ids'),
    payment_id: field.stringOrNull('payment_id'),
    gateway: field.stringOrNull('gateway'),
    paid_at: field.stringOrNull('paid_at'),
    ...(item.commission_pending === undefined ? {} : { commission_pending: field.boolean('commission_pending') }),
    ...(item.count_owed === undefined ? {} : { count_owed: field.oneOf('count_owed', ORDER_STATUSES) }),
    ...(item.reversal_commands === undefined ? {} : { reversal_commands: field.boolean('reversal_commands') }),
    ...(item.reversal_commission === undefined ? {} : { reversal_commission: field.boolean('reversal_commission') }),
    ...(item.reversal_first_command_id === undefined ? {} : { reversal_first_command_id: field.number('reversal_first_command_id') }),
  };
}

/** The response shape, field by field: nothing internal leaves this module. */
export function orderResponse(order: OrderItem): Order {
  return {
    id: order.id,
    store_id: order.store_id,
    internal_id: order.internal_id,
    status: order.status,
    subtotal: order.subtotal,
    promo_discount: order.promo_discount,
    coupon_discount: order.coupon_discount,
    discount: order.discount,
    total: order.total,
    client_identifier: order.client_identifier,
    client_email: order.client_email,
    client_name: order.client_name,
    client_social: order.client_social,
    packages: order.packages.map((line) => ({ ...line, expires_at: line.expires_at ?? null })),
    variables: order.variables.map(({ name, value }) => ({ name, value })),
    coupon: order.coupon,
    ref_code: order.ref_code,
    approved_at: order.approved_at,
    canceled_at: order.canceled_at,
    refunded_at: order.refunded_at ?? null,
    chargeback_at: order.chargeback_at ?? null,
    payment_id: order.payment_id,
    gateway: order.gateway,
    paid_at: order.paid_at,
    created_at: order.created_at,
    updated_at: order.updated_at,
  };
}

export const nextOrderId = (storeId: number) => nextId(storeId, ORDER);

/**
 * Stores a new PENDING order and its internal_id sentinel in one transaction with `writes`: what
 * the order reserves (its packages, its coupon) and, for a checkout, its due item.
 */
export async function putNewOrder(order: PlacedOrder, couponCounters: readonly string[], writes: readonly GuardedWrite[]): Promise<void> {
  const storeId = order.store_id;
  const item: OrderItem = { ...order, coupon_counters: [...couponCounters], command_ids: [], payment_id: null, gateway: null, paid_at: null };
  const sortKey = listSk(item.created_at, item.id);
  const indexes = {
    gsi1pk: allOrdersPk(storeId),
    gsi1sk: sortKey,
    gsi2pk: statusPk(storeId, 'PENDING'),
    gsi2sk: sortKey,
    gsi3pk: buyerPk(storeId, item.client_email),
    gsi3sk: sortKey,
  };
  await writeGuarded([
    newItemWrite({ ...orderKey(storeId, item.id), entity: ORDER, ...indexes, ...item }),
    {
      item: putNewItem({
        ...internalIdKey(storeId, item.internal_id),
        entity: ENTITY.ORDER_INTERNAL,
        store_id: storeId,
        order_id: item.id,
        client_email: item.client_email,
        ...clientIndex(storeId, item),
      }),
      onConditionFailed: () => new Error('internal_id collision'),
    },
    orderCountMove(storeId, item.id, null, 'PENDING'),
    ...writes,
  ]);
}

/**
 * The sentinel's entry in the client_identifier index (gsi3, `STORE#<s>#CLIENT#<identifier>`,
 * same sort key as the order lists). The order item's three index slots are taken (all orders,
 * by status, by buyer), so the sentinel written in the same transaction carries it: no write of
 * its own, and it never changes (an order's client does not). Sparse: no entry without an identifier.
 */
const clientIndex = (storeId: number, order: Pick<PlacedOrder, 'client_identifier' | 'created_at' | 'id'>) =>
  order.client_identifier ? { gsi3pk: clientPk(storeId, order.client_identifier), gsi3sk: listSk(order.created_at, order.id) } : {};

/**
 * Gives the sentinel of an order written before the client_identifier index its entry (the admin
 * command `order index-clients`): idempotent, and a no-op for a sentinel that already has one.
 * Answers whether it wrote.
 */
export async function indexOrderClient(order: Pick<PlacedOrder, 'store_id' | 'internal_id' | 'client_identifier' | 'created_at' | 'id'>): Promise<boolean> {
  const index = clientIndex(order.store_id, order);
  if (!index.gsi3pk) return false;
  return writeIf(
    update({
      Key: internalIdKey(order.store_id, order.internal_id),
      UpdateExpression: 'SET gsi3pk = :pk, gsi3sk = :sk',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi3pk)',
      ExpressionAttributeValues: { ':pk': index.gsi3pk, ':sk': index.gsi3sk },
    }),
  );
}

export async function getOrderItem(storeId: number, orderId: number): Promise<OrderItem> {
  const item = await readItem(orderKey(storeId, orderId), true);
  if (!item) throw notFound('Order');
  return orderFromItem(item);
}

/** The order with this id in this store; 404 `Order not found` otherwise (another store's included). */
export async function getOrder(storeId: number, orderId: number): Promise<Order> {
  return orderResponse(await getOrderItem(storeId, orderId));
}

const INTERNAL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The internal_id sentinel: the order it names, and the e-mail a buyer must match. */
export function internalIdFromItem(item: StoredItem): { order_id: number; client_email: string } {
  const field = fieldsOf(item, ENTITY.ORDER_INTERNAL);
  return { order_id: field.number('order_id'), client_email: field.string('client_email') };
}

export async function orderIdOf(storeId: number, internalId: string): Promise<number> {
  if (!INTERNAL_ID.test(internalId)) throw notFound('Order');
  const sentinel = await readItem(internalIdKey(storeId, internalId), true);
  if (!sentinel) throw notFound('Order');
  return internalIdFromItem(sentinel).order_id;
}

/** The order item with this internal_id in this store; 404 `Order not found` otherwise (another store's included). */
export async function getOrderItemByInternalId(storeId: number, internalId: string): Promise<OrderItem> {
  return getOrderItem(storeId, await orderIdOf(storeId, internalId));
}

/** The order with this internal_id in this store; 404 `Order not found` otherwise. */
export async function getOrderByInternalId(storeId: number, internalId: string): Promise<Order> {
  return getOrder(storeId, await orderIdOf(storeId, internalId));
}

/** Only the status, for the public order_status route: nothing about the client leaves. */
export async function getOrderStatus(storeId: number, internalId: string): Promise<{ status: OrderStatus }> {
  const order = await getOrderItem(storeId, await orderIdOf(storeId, internalId));
  return { status: order.status };
}

const sameEmail = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();

/** The customer of a buyer credential; a buyer who is not the order's customer gets the same 404 as for a missing order. */
export function assertBuyerOwns<C extends { email?: unknown }>(customer: C | undefined, clientEmail: unknown): C {
  if (!customer || !sameEmail(customer.email, clientEmail)) throw notFound('Order');
  return customer;
}

/** One of the buyer's own orders (same e-mail, ignoring case); another buyer's is 404 like a missing one. */
export async function getBuyerOrderItem(storeId: number, customerId: number, internalId: string): Promise<OrderItem> {
  if (!INTERNAL_ID.test(internalId)) throw notFound('Order');
  const [sentinel, customer] = await getMany([internalIdKey(storeId, internalId), customerKey(storeId, customerId)]);
  if (!sentinel) throw notFound('Order');
  const { order_id: orderId, client_email: clientEmail } = internalIdFromItem(sentinel);
  assertBuyerOwns(customer, clientEmail);
  return getOrderItem(storeId, orderId);
}

export async function getBuyerOrder(storeId: number, customerId: number, internalId: string): Promise<Order> {
  return orderResponse(await getBuyerOrderItem(storeId, customerId, internalId));
}

const orderChanged = (current: unknown) => (current ? new StaleRead() : notFound('Order'));

/** What every command of the order carries of it (the queue answers without reading orders). */
export const commandContext = (order: OrderItem) => ({
  client_identifier: order.client_identifier,
  client_email: order.client_email,
  client_name: order.client_name,
  client_social: order.client_social,
  internal_id: order.internal_id,
  variables: order.variables,
});

/**
 * PENDING -> APPROVED with a Put per planned command (ids from `firstCommandId` on) and their
 * chain item; answers the approved item. StaleRead when the order changed since it was read.
 * Paid through a provider (`paid`), the order also carries its payment, and `paid.writes` (the
 * payment's own decision) join the same transaction: the approval and the payment land together or not at all.
 */
export async function markApproved(
  storeId: number,
  order: OrderItem,
  commands: { plan: readonly PlannedCommand[]; chain: readonly ChainEntry[] | null },
  firstCommandId: number,
  approvedAt: string,
  packages: readonly OrderPackageLine[],
  paid?: { link: OrderPaymentLink; writes: readonly GuardedWrite[] },
): Promise<OrderItem> {
  const commandIds = commands.plan.map((_, index) => firstCommandId + index);
  const snapshot = commandContext(order);
  const commissionPending = order.ref_code !== null;
  const puts = commandPuts(storeId, order.id, snapshot, commands.plan, commands.chain, firstCommandId, approvedAt);
  const extra = paid?.writes ?? [];
  // The order, its commands and the counts fit one transaction, except for orders placed with 98 commands before the counts existed
  // (or 97 with a payment beside them): their counts move in a second one (count_owed).
  const countsFit = 1 + puts.length + extra.length + 1 <= TRANSACTION_ITEMS_MAX;
  const sets = [
    '#status = :approved',
    'approved_at = :now',
    'updated_at = :now',
    'gsi2pk = :statusPk',
    'command_ids = :ids',
    'packages = :packages',
    ...(commissionPending ? ['commission_pending = :true'] : []),
    ...(countsFit ? [] : ['count_owed = :pending']),
    ...(paid ? ['payment_id = :paymentId', 'gateway = :gateway', 'paid_at = :paidAt'] : []),
  ];
  await writeGuarded([
    {
      item: update({
        Key: orderKey(storeId, order.id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':approved': 'APPROVED',
          ':pending': 'PENDING',
          ':now': approvedAt,
          ':statusPk': statusPk(storeId, 'APPROVED'),
          ':ids': commandIds,
          ':packages': packages,
          ...(commissionPending ? { ':true': true } : {}),
          ...(paid ? { ':paymentId': paid.link.payment_id, ':gateway': paid.link.gateway, ':paidAt': paid.link.paid_at } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      onConditionFailed: orderChanged,
    },
    ...puts,
    ...(countsFit ? [orderCountMove(storeId, order.id, 'PENDING', 'APPROVED')] : []),
    ...extra,
  ]);
  return {
    ...order,
    ...(paid?.link ?? {}),
    status: 'APPROVED',
    approved_at: approvedAt,
    updated_at: approvedAt,
    command_ids: commandIds,
    commission_pending: commissionPending,
    packages: [...packages],
    ...(countsFit ? {} : { count_owed: 'PENDING' as const }),
  };
}

/**
 * Moves the counts an approval could not move in its transaction (`count_owed`) to the order's
 * status, once: the removal of the mark is conditioned on it, so a second call (or a reversal that
 * moved them itself) changes nothing.
 */
export async function settleOrderCount(order: OrderItem): Promise<void> {
  if (order.count_owed === undefined) return;
  try {
    await writeGuarded([
      {
        item: update({
          Key: orderKey(order.store_id, order.id),
          UpdateExpression: 'REMOVE count_owed',
          ConditionExpression: 'count_owed = :owed AND #status = :status',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':owed': order.count_owed, ':status': order.status },
        }),
        onConditionFailed: () => new StaleRead(),
      },
      orderCountMove(order.store_id, order.id, order.count_owed, order.status),
    ]);
  } catch (error) {
    // Settled by another call, or the order moved on since and that move settled it.
    if (!(error instanceof StaleRead)) throw error;
  }
}

/** A mark of what the order still owed (`commission_pending`, `reversal_commission`) is paid: the order no longer carries it. */
export async function clearOrderMark(storeId: number, orderId: number, mark: 'commission_pending' | 'reversal_commission'): Promise<void> {
  await writeGuarded([
    {
      item: update({ Key: orderKey(storeId, orderId), UpdateExpression: `REMOVE ${mark}`, ConditionExpression: 'attribute_exists(pk)' }),
      onConditionFailed: () => new Error(`order ${orderId} of store ${storeId} is gone`),
    },
  ]);
}

/** The commission of an approved order has been credited: nothing is owed any more. */
export const clearCommissionPending = (storeId: number, orderId: number) => clearOrderMark(storeId, orderId, 'commission_pending');

/**
 * Rule 4 of section 13: an order approved by hand with no payment gets the payment that paid it,
 * and nothing else, in one transaction with `writes` (the payment's decision). StaleRead when the
 * order is no longer APPROVED or got a payment meanwhile.
 */
export async function linkPayment(order: OrderItem, link: OrderPaymentLink, writes: readonly GuardedWrite[]): Promise<OrderItem> {
  await writeGuarded([
    {
      item: update({
        Key: orderKey(order.store_id, order.id),
        UpdateExpression: 'SET payment_id = :paymentId, gateway = :gateway, paid_at = :paidAt',
        ConditionExpression: '#status = :approved AND (attribute_not_exists(payment_id) OR payment_id = :null)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':approved': 'APPROVED', ':null': null, ':paymentId': link.payment_id, ':gateway': link.gateway, ':paidAt': link.paid_at },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      onConditionFailed: orderChanged,
    },
    ...writes,
  ]);
  return { ...order, ...link };
}

/** PENDING -> CANCELED in one transaction with `releases` (the coupon's); answers the canceled item. */
export async function markCanceled(storeId: number, order: OrderItem, releases: readonly GuardedWrite[], canceledAt: string): Promise<OrderItem> {
  await writeGuarded([
    {
      item: update({
        Key: orderKey(storeId, order.id),
        UpdateExpression: 'SET #status = :canceled, canceled_at = :now, updated_at = :now, gsi2pk = :statusPk',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':canceled': 'CANCELED', ':pending': 'PENDING', ':now': canceledAt, ':statusPk': statusPk(storeId, 'CANCELED') },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      onConditionFailed: orderChanged,
    },
    orderCountMove(storeId, order.id, 'PENDING', 'CANCELED'),
    ...releases,
  ]);
  return { ...order, status: 'CANCELED', canceled_at: canceledAt, updated_at: canceledAt };
}
