import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { commandPuts } from '#lib/db/command.ts';
import { type CouponReservation } from '#lib/db/coupon-use.ts';
import { couponKey } from '#lib/db/discount.ts';
import { getMany } from '#lib/db/entity.ts';
import { entitySk, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { packageKey } from '#lib/db/package.ts';
import { nextId } from '#lib/db/sequence.ts';
import { StaleRead, transactGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { listVariables } from '#lib/db/variable.ts';
import { notFound } from '#lib/errors.ts';
import type { ChainEntry, PlannedCommand } from '#lib/schemas/command.ts';
import type { Order, OrderStatus, PlacedOrder } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/**
 * The order item and its status changes. The use cases (read, decide, write) are in
 * lib/flows/order.ts; lists and their cursor in lib/db/order-list.ts; the coupon's reservation
 * and release in lib/db/coupon-use.ts. Calls below exclude the credential lookup.
 *
 * | access pattern                  | key / index                                                                 | calls |
 * |---------------------------------|-----------------------------------------------------------------------------|-------|
 * | read for a new order            | Query `VARIABLE#` + BatchGet (packages, coupon sentinel `COUPON#<lower>`)   | 2     |
 * | next order id                   | ADD on `#SEQ#ORDER` (lib/db/sequence.ts)                                    | 1     |
 * | create                          | TransactWrite: Put `STORE#<s> / ORDER#<id>`, Put sentinel                   | 1     |
 * |                                 | `ORDER_INTERNAL#<internal_id>`, ConditionCheck per package, the coupon's    |       |
 * |                                 | reservation (lib/db/coupon-use.ts)                                          |       |
 * | get by id                       | GetItem `STORE#<s> / ORDER#<id>` (consistent)                               | 1     |
 * | get by internal_id              | GetItem sentinel `STORE#<s> / ORDER_INTERNAL#<internal_id>` + GetItem order  | 2     |
 * |                                 | (the sentinel also holds `client_email`: the chat checks a buyer with it)   |       |
 * | approve                         | TransactWrite: order update conditioned on PENDING + one Put per command    | 1     |
 * |                                 | and the chain item that orders them (lib/db/command.ts)                     |       |
 * | commission credited             | UpdateItem clearing `commission_pending`                                    | 1     |
 * | cancel                          | TransactWrite: order conditioned on PENDING + the coupon's release          | 1     |
 *
 * Commands are rendered when the order is placed (every input of a template is known then) and
 * kept in the order item (`deliveries`): an approval delivers what was sold, even if the package
 * has been edited or deleted since, and needs no catalog read.
 *
 * Approval happens once: the status update is conditioned on PENDING and every command is Put
 * in the same transaction (at most 99, checked when the order is placed), so racing approvals
 * produce exactly one set of commands. The commission is credited after that transaction
 * (creditCommission is idempotent per order); `commission_pending` is set by the transaction
 * and cleared once credited, so an approval call that finds an APPROVED order still pending
 * (the first one died in between) finishes the credit, and any later call does nothing.
 * Ids of commands allocated by an approval that then lost the race are skipped (gaps).
 *
 * Both list indexes (gsi1 all orders, gsi2 by status) are keyed `<created_at>#<id>`; the status
 * changes below move gsi2pk with the status.
 */
const ORDER = 'ORDER';

export const orderKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: entitySk(ORDER, orderId) });
/** The sort key of an order's internal_id sentinel; chat messages live under it (lib/db/chat.ts). */
export const internalIdSk = (internalId: string) => `ORDER_INTERNAL#${internalId}`;
const internalIdKey = (storeId: number, internalId: string) => ({ pk: storePk(storeId), sk: internalIdSk(internalId) });
export const allOrdersPk = (storeId: number) => `${storePk(storeId)}#ORDER`;
export const statusPk = (storeId: number, status: OrderStatus) => `${storePk(storeId)}#ORDER#${status}`;
export const listSk = (createdAt: string, orderId: number) => `${createdAt}#${padId(orderId)}`;

export interface OrderItem extends PlacedOrder {
  /** The sort keys of the coupon's per-client counters, for the release. */
  coupon_counters: string[];
  command_ids: number[];
  commission_pending?: boolean;
}

/** The response shape, field by field: nothing internal leaves this module. */
export function toOrder(item: Order): Order {
  return {
    id: item.id,
    store_id: item.store_id,
    internal_id: item.internal_id,
    status: item.status,
    subtotal: item.subtotal,
    discount: item.discount,
    total: item.total,
    client_identifier: item.client_identifier,
    client_email: item.client_email,
    client_name: item.client_name,
    client_social: item.client_social,
    packages: item.packages.map(({ package_id, name, price, quantity }) => ({ package_id, name, price, quantity })),
    variables: item.variables.map(({ name, value }) => ({ name, value })),
    coupon: item.coupon,
    ref_code: item.ref_code,
    approved_at: item.approved_at,
    canceled_at: item.canceled_at,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export const fromItem = (item: Record<string, unknown>) => stripKeys(item) as unknown as OrderItem;

/** What a new order is judged against: the ordered packages that exist, the coupon's id (from its code's sentinel), the store's variables. */
export interface OrderCatalog {
  catalog: Map<number, Package>;
  couponDiscountId: number | undefined;
  variables: Variable[];
}

export async function readOrderCatalog(storeId: number, packageIds: readonly number[], coupon: string | null): Promise<OrderCatalog> {
  const packageKeys = packageIds.map((id) => packageKey(storeId, id));
  const sentinelKeys = coupon === null ? [] : [couponKey(storeId, coupon)];
  const [items, variables] = await Promise.all([getMany([...packageKeys, ...sentinelKeys]), listVariables(storeId)]);
  const [sentinel] = items.slice(packageKeys.length);
  const catalog = new Map<number, Package>();
  for (const item of items.slice(0, packageKeys.length)) {
    if (!item) continue;
    const pkg = stripKeys(item) as Package;
    catalog.set(pkg.id, pkg);
  }
  return { catalog, couponDiscountId: sentinel?.discount_id as number | undefined, variables };
}

export const nextOrderId = (storeId: number) => nextId(storeId, ORDER);

/** Stores a new PENDING order, its internal_id sentinel and the coupon's reservation, checking that every package still exists. */
export async function putNewOrder(order: PlacedOrder, coupon: CouponReservation | null): Promise<void> {
  const storeId = order.store_id;
  const item: OrderItem = { ...order, coupon_counters: coupon?.counterSks ?? [], command_ids: [] };
  const sortKey = listSk(item.created_at, item.id);
  await transactGuarded([
    {
      item: {
        Put: {
          TableName: TABLE,
          Item: { ...orderKey(storeId, item.id), entity: ORDER, gsi1pk: allOrdersPk(storeId), gsi1sk: sortKey, gsi2pk: statusPk(storeId, 'PENDING'), gsi2sk: sortKey, ...item },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      onConditionFailed: () => new Error(`order id ${item.id} allocated twice in store ${storeId}`),
    },
    {
      item: {
        Put: {
          TableName: TABLE,
          Item: { ...internalIdKey(storeId, item.internal_id), entity: 'ORDER_INTERNAL', store_id: storeId, order_id: item.id, client_email: item.client_email },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      onConditionFailed: () => new Error('internal_id collision'),
    },
    ...item.package_ids.map(
      (packageId): GuardedWrite => ({
        item: { ConditionCheck: { TableName: TABLE, Key: packageKey(storeId, packageId), ConditionExpression: 'attribute_exists(pk)' } },
        // Deleted since the read: read again, and the order answers 422 naming it.
        onConditionFailed: () => new StaleRead(),
      }),
    ),
    ...(coupon?.writes ?? []),
  ]);
}

export async function getOrderItem(storeId: number, orderId: number): Promise<OrderItem> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: orderKey(storeId, orderId), ConsistentRead: true }));
  if (!result.Item) throw notFound('Order');
  return fromItem(result.Item);
}

/** The order with this id in this store; 404 `Order not found` otherwise (another store's included). */
export async function getOrder(storeId: number, orderId: number): Promise<Order> {
  return toOrder(await getOrderItem(storeId, orderId));
}

const INTERNAL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The order item with this internal_id in this store; 404 `Order not found` otherwise. */
export async function getOrderItemByInternalId(storeId: number, internalId: string): Promise<OrderItem> {
  if (!INTERNAL_ID.test(internalId)) throw notFound('Order');
  const sentinel = await db.send(new GetCommand({ TableName: TABLE, Key: internalIdKey(storeId, internalId), ConsistentRead: true }));
  const orderId = sentinel.Item?.order_id as number | undefined;
  if (orderId === undefined) throw notFound('Order');
  return getOrderItem(storeId, orderId);
}

/** The order with this internal_id in this store; 404 `Order not found` otherwise. */
export const getOrderByInternalId = async (storeId: number, internalId: string): Promise<Order> => toOrder(await getOrderItemByInternalId(storeId, internalId));

const orderChanged = (current: unknown) => (current ? new StaleRead() : notFound('Order'));

/**
 * PENDING -> APPROVED with a Put per planned command (ids from `firstCommandId` on) and their
 * chain item; answers the approved item. StaleRead when the order changed since it was read.
 */
export async function markApproved(
  storeId: number,
  order: OrderItem,
  commands: { plan: readonly PlannedCommand[]; chain: readonly ChainEntry[] | null },
  firstCommandId: number,
  approvedAt: string,
): Promise<OrderItem> {
  const commandIds = commands.plan.map((_, index) => firstCommandId + index);
  const snapshot = {
    client_identifier: order.client_identifier,
    client_email: order.client_email,
    client_name: order.client_name,
    client_social: order.client_social,
    internal_id: order.internal_id,
    variables: order.variables,
  };
  const commissionPending = order.ref_code !== null;
  await transactGuarded([
    {
      item: {
        Update: {
          TableName: TABLE,
          Key: orderKey(storeId, order.id),
          UpdateExpression: `SET #status = :approved, approved_at = :now, updated_at = :now, gsi2pk = :statusPk, command_ids = :ids${commissionPending ? ', commission_pending = :true' : ''}`,
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':approved': 'APPROVED', ':pending': 'PENDING', ':now': approvedAt, ':statusPk': statusPk(storeId, 'APPROVED'), ':ids': commandIds,
            ...(commissionPending ? { ':true': true } : {}),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      onConditionFailed: orderChanged,
    },
    ...commandPuts(storeId, order.id, snapshot, commands.plan, commands.chain, firstCommandId, approvedAt),
  ]);
  return { ...order, status: 'APPROVED', approved_at: approvedAt, updated_at: approvedAt, command_ids: commandIds, commission_pending: commissionPending };
}

/** The commission of an approved order has been credited: nothing is owed any more. */
export async function clearCommissionPending(storeId: number, orderId: number): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: orderKey(storeId, orderId),
      UpdateExpression: 'REMOVE commission_pending',
      ConditionExpression: 'attribute_exists(pk)',
    }),
  );
}

/** PENDING -> CANCELED in one transaction with `releases` (the coupon's); answers the canceled item. */
export async function markCanceled(storeId: number, order: OrderItem, releases: readonly GuardedWrite[], canceledAt: string): Promise<OrderItem> {
  await transactGuarded([
    {
      item: {
        Update: {
          TableName: TABLE,
          Key: orderKey(storeId, order.id),
          UpdateExpression: 'SET #status = :canceled, canceled_at = :now, updated_at = :now, gsi2pk = :statusPk',
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':canceled': 'CANCELED', ':pending': 'PENDING', ':now': canceledAt, ':statusPk': statusPk(storeId, 'CANCELED') },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      onConditionFailed: orderChanged,
    },
    ...releases,
  ]);
  return { ...order, status: 'CANCELED', canceled_at: canceledAt, updated_at: canceledAt };
}
