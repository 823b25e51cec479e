import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { creditCommission } from '#lib/db/affiliate.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { allocateCommandIds, commandPut, requeueUpdate } from '#lib/db/command.ts';
import { couponKey, discountKey } from '#lib/db/discount.ts';
import type { Key } from '#lib/db/entity.ts';
import { entitySk, nowIso, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { packageKey } from '#lib/db/package.ts';
import { nextId } from '#lib/db/sequence.ts';
import { rawNumber, retrying, StaleRead, transactGuarded, transactWrite, type GuardedWrite } from '#lib/db/transact.ts';
import { listVariables } from '#lib/db/variable.ts';
import {
  assertCouponUsable,
  couponClientLimit,
  couponNotFound,
  couponSoldOut,
  discountAmount,
  orderLines,
  renderDeliveries,
  resolveVariables,
  roundCents,
  subtotalOf,
  type CouponRecord,
  type Delivery,
} from '#lib/domain/order.ts';
import { badRequest, conflict, notFound } from '#lib/errors.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import { CURSOR_MAX, type Order, type OrderCreate, type OrderCursorPage, type OrderFilters, type OrderStatus } from '#lib/schemas/order.ts';
import type { Package } from '#lib/schemas/package.ts';
import { getMany } from '#lib/db/entity.ts';

/**
 * Orders. Calls below exclude the credential lookup every request makes.
 *
 * | access pattern                  | key / index                                                                 | calls |
 * |---------------------------------|-----------------------------------------------------------------------------|-------|
 * | create                          | Query `VARIABLE#` + BatchGet (packages, coupon sentinel `COUPON#<lower>`)   | 4     |
 * |                                 | + sequence ADD + TransactWrite: Put `STORE#<s> / ORDER#<id>`, Put sentinel  | (5 with a coupon) |
 * |                                 | `ORDER_INTERNAL#<internal_id>`, ConditionCheck per package; with a coupon   |       |
 * |                                 | also BatchGet (discount, per-client counters) and, in the transaction,      |       |
 * |                                 | `ADD uses 1` on the discount (conditioned on max_uses and on its revision)  |       |
 * |                                 | and `ADD uses 1` on both per-client counters (the limit_criteria one         |       |
 * |                                 | conditioned on max_uses_per_client)                                         |       |
 * | get by id                       | GetItem `STORE#<s> / ORDER#<id>` (consistent)                               | 1     |
 * | get by internal_id              | GetItem sentinel `STORE#<s> / ORDER_INTERNAL#<internal_id>` + GetItem order  | 2     |
 * |                                 | (the sentinel also holds `client_email`: the chat checks a buyer with it)   |       |
 * | list, newest first              | Query gsi1 `STORE#<s>#ORDER`, gsi1sk `<created_at>#<id>` descending          | see below |
 * | list by status                  | Query gsi2 `STORE#<s>#ORDER#<status>`, same sort key (moved on status change) | see below |
 * | `from` / `to`                   | range on that sort key (BETWEEN / >= / <=): never reads outside the range    |       |
 * | `package`                       | FilterExpression `contains(package_ids, :id)` after the read                 |       |
 * | approve                         | GetItem + `ADD n` on `#SEQ#COMMAND` (none without commands) + TransactWrite | 3     |
 * |                                 | (order update conditioned on PENDING + one Put per command); with a        | (+2..5) |
 * |                                 | ref_code, creditCommission (1 call when no affiliate owns the code, else 4) |       |
 * |                                 | then an UpdateItem clearing `commission_pending`                            |       |
 * | approve an APPROVED order       | GetItem                                                                     | 1     |
 * | cancel                          | GetItem + TransactWrite (order conditioned on PENDING; `ADD uses -1` on the  | 2     |
 * |                                 | discount and its counters, each conditioned on existence)                   |       |
 * | resend commands                 | GetItem + TransactWrite (each command back on the queue)                     | 2     |
 *
 * Lists. Cursor mode reads page_size + 1 matches (to know whether a next page exists): one
 * Query without the `package` filter; with it, Queries of 200 orders each until enough match
 * or 1000 orders were examined (a per-package index item would cost a write per line on every
 * order instead). A rare package therefore answers a short page, possibly empty, whose
 * next_cursor resumes after the last order examined: a request never reads a whole store's
 * history, and only `next_cursor: null` says the list is over. Page mode needs `total`, so it
 * reads every order of the range (one Query per MB) and slices the page in memory: deep pages
 * and large ranges cost what they read, which is why cursor mode is the one for full scans.
 * Both indexes are eventually consistent (an order shows in lists within about a second on
 * AWS); gets by id are strongly consistent.
 *
 * The cursor is base64url JSON `{s: store, f: digest of the filters, c: created_at, i: id}`
 * followed by a SHA-256 check of that text. It is only a position: the key it resumes from is
 * rebuilt from the caller's own store and filters, so a cursor forged around the check can move
 * within the caller's own list but never reach another store's items. A cursor that fails the
 * check, names another store, was issued for other filters, or names a position outside the
 * `from`/`to` range (DynamoDB refuses such a start key: it would be a 500) is a 400.
 *
 * Coupons. The coupon is found by its sentinel (case-insensitive code -> discount_id), validated
 * (lib/domain/order.ts), and its use reserved in the order's own transaction: `ADD uses 1`
 * conditioned on `uses < max_uses` (so concurrent orders can never exceed it) and on the revision
 * read (a coupon PATCHed meanwhile is read again). Uses are counted per client under both
 * criteria (`COUPON_CLIENT#<discount>#<CLIENT_EMAIL|CLIENT_IDENTIFIER>#<lower value>`), so a
 * later change of `limit_criteria` counts history too; the counter of the coupon's criteria is
 * conditioned on `max_uses_per_client`. Canceling gives all three back with `ADD -1`, each
 * conditioned on existence so a deleted coupon is not brought back as a bare counter.
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
 */
const ORDER = 'ORDER';

export const orderKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: entitySk(ORDER, orderId) });
/** The sort key of an order's internal_id sentinel; chat messages live under it (lib/db/chat.ts). */
export const internalIdSk = (internalId: string) => `ORDER_INTERNAL#${internalId}`;
const internalIdKey = (storeId: number, internalId: string) => ({ pk: storePk(storeId), sk: internalIdSk(internalId) });
const allOrdersPk = (storeId: number) => `${storePk(storeId)}#ORDER`;
const statusPk = (storeId: number, status: OrderStatus) => `${storePk(storeId)}#ORDER#${status}`;
const listSk = (createdAt: string, orderId: number) => `${createdAt}#${padId(orderId)}`;

type Criteria = (typeof LIMIT_CRITERIA)[number];
const CRITERIA: readonly Criteria[] = ['CLIENT_EMAIL', 'CLIENT_IDENTIFIER'];
const clientCounterKey = (storeId: number, discountId: number, criteria: Criteria, value: string) => ({
  pk: storePk(storeId),
  sk: `COUPON_CLIENT#${padId(discountId)}#${criteria}#${value.toLowerCase()}`,
});
const clientValue = (criteria: Criteria, client: Pick<OrderCreate, 'client_email' | 'client_identifier'>) =>
  criteria === 'CLIENT_EMAIL' ? client.client_email : client.client_identifier;

interface OrderItem extends Order {
  package_ids: number[];
  deliveries: Delivery[];
  /** The coupon's discount id and the sort keys of its per-client counters, for the release. */
  discount_id: number | null;
  coupon_counters: string[];
  command_ids: number[];
  commission_pending?: boolean;
}

/** The response shape, field by field: nothing internal leaves this module. */
export function toOrder(item: OrderItem): Order {
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

const stripped = <T>(item: Record<string, unknown> | undefined) => (item ? (stripKeys(item) as T) : undefined);

interface CouponState {
  record: CouponRecord;
  clientUses: Record<Criteria, number>;
}

/** The coupon named by the order (via its sentinel) and this client's use counts; 422 when no such code. */
async function loadCoupon(storeId: number, sentinel: { discount_id: number } | undefined, input: OrderCreate): Promise<CouponState> {
  if (!sentinel) throw couponNotFound(input.coupon!);
  const discountId = sentinel.discount_id;
  const counterKeys = CRITERIA.map((criteria) => clientCounterKey(storeId, discountId, criteria, clientValue(criteria, input)));
  const [couponItem, ...counters] = await getMany([discountKey(storeId, discountId), ...counterKeys]);
  const record = stripped<CouponRecord>(couponItem);
  // Deleted between the two reads: the code no longer names a coupon.
  if (!record) throw couponNotFound(input.coupon!);
  const uses = (index: number) => stripped<{ uses: number }>(counters[index])?.uses ?? 0;
  return { record, clientUses: { CLIENT_EMAIL: uses(0), CLIENT_IDENTIFIER: uses(1) } };
}

/** The coupon's part of the order's transaction: the reserved use and the two per-client counts. */
function couponWrites(storeId: number, coupon: CouponRecord, input: OrderCreate, now: string): GuardedWrite[] {
  const use: GuardedWrite = {
    item: {
      Update: {
        TableName: TABLE,
        Key: discountKey(storeId, coupon.id),
        UpdateExpression: 'ADD uses :one',
        ConditionExpression: 'attribute_exists(pk) AND revision = :revision AND (attribute_not_exists(max_uses) OR attribute_type(max_uses, :null) OR uses < max_uses)',
        ExpressionAttributeValues: { ':one': 1, ':revision': coupon.revision, ':null': 'NULL' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    onConditionFailed: (current) => {
      if (!current) return couponNotFound(coupon.coupon);
      return rawNumber(current, 'revision') === coupon.revision ? couponSoldOut(coupon.coupon) : new StaleRead();
    },
  };
  const counters = CRITERIA.map((criteria): GuardedWrite => {
    const limited = coupon.max_uses_per_client !== null && criteria === coupon.limit_criteria;
    return {
      item: {
        Update: {
          TableName: TABLE,
          Key: clientCounterKey(storeId, coupon.id, criteria, clientValue(criteria, input)),
          UpdateExpression: 'ADD uses :one SET store_id = :store, entity = :entity, updated_at = :now',
          ...(limited ? { ConditionExpression: 'attribute_not_exists(uses) OR uses < :max' } : {}),
          ExpressionAttributeValues: { ':one': 1, ':store': storeId, ':entity': 'COUPON_CLIENT', ':now': now, ...(limited ? { ':max': coupon.max_uses_per_client } : {}) },
        },
      },
      onConditionFailed: () => couponClientLimit(coupon),
    };
  });
  return [use, ...counters];
}

/** 128 random bits, URL-safe: the order's unguessable public reference. */
const newInternalId = () => randomBytes(16).toString('base64url');

export function createOrder(storeId: number, input: OrderCreate): Promise<Order> {
  let orderId: number | undefined;
  const internalId = newInternalId();
  return retrying(async () => {
    const packageKeys = input.packages.map((line) => packageKey(storeId, line.package_id));
    const sentinelKey = input.coupon === null ? undefined : couponKey(storeId, input.coupon);
    const [items, variables] = await Promise.all([getMany([...packageKeys, ...(sentinelKey ? [sentinelKey] : [])]), listVariables(storeId)]);

    const catalog = new Map<number, Package>();
    for (const item of items.slice(0, packageKeys.length)) {
      const pkg = stripped<Package>(item);
      if (pkg) catalog.set(pkg.id, pkg);
    }
    const lines = orderLines(input.packages, catalog);
    const packageIds = lines.map((line) => line.package_id);
    const orderVariables = resolveVariables(variables, input.variables, packageIds);
    const subtotal = subtotalOf(lines);
    const now = Date.now();

    let coupon: CouponRecord | undefined;
    if (sentinelKey) {
      const state = await loadCoupon(storeId, stripped<{ discount_id: number }>(items[packageKeys.length]), input);
      coupon = state.record;
      assertCouponUsable(coupon, lines, { ...input, clientUses: state.clientUses[coupon.limit_criteria], now });
    }
    const discount = coupon ? discountAmount(coupon, lines) : 0;

    orderId ??= await nextId(storeId, ORDER);
    const createdAt = new Date(now).toISOString();
    const deliveries = renderDeliveries(lines, catalog, {
      order_id: orderId,
      internal_id: internalId,
      client_identifier: input.client_identifier,
      client_name: input.client_name,
      client_email: input.client_email,
      client_social: input.client_social,
      variables: new Map(orderVariables.map((variable) => [variable.name.toLowerCase(), variable.value])),
      knownVariables: new Set(variables.map((variable) => variable.name.toLowerCase())),
    });
    const item: OrderItem = {
      id: orderId,
      store_id: storeId,
      internal_id: internalId,
      status: 'PENDING',
      subtotal,
      discount,
      total: roundCents(subtotal - discount),
      client_identifier: input.client_identifier,
      client_email: input.client_email,
      client_name: input.client_name,
      client_social: input.client_social,
      packages: lines,
      variables: orderVariables,
      coupon: coupon?.coupon ?? null,
      ref_code: input.ref_code,
      approved_at: null,
      canceled_at: null,
      created_at: createdAt,
      updated_at: createdAt,
      package_ids: packageIds,
      deliveries,
      discount_id: coupon?.id ?? null,
      coupon_counters: coupon ? CRITERIA.map((criteria) => clientCounterKey(storeId, coupon.id, criteria, clientValue(criteria, input)).sk) : [],
      command_ids: [],
    };
    const sortKey = listSk(createdAt, orderId);
    await transactGuarded([
      {
        item: {
          Put: {
            TableName: TABLE,
            Item: { ...orderKey(storeId, orderId), entity: ORDER, gsi1pk: allOrdersPk(storeId), gsi1sk: sortKey, gsi2pk: statusPk(storeId, 'PENDING'), gsi2sk: sortKey, ...item },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        onConditionFailed: () => new Error(`order id ${orderId} allocated twice in store ${storeId}`),
      },
      {
        item: {
          Put: {
            TableName: TABLE,
            Item: { ...internalIdKey(storeId, internalId), entity: 'ORDER_INTERNAL', store_id: storeId, order_id: orderId, client_email: input.client_email },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        onConditionFailed: () => new Error('internal_id collision'),
      },
      ...packageKeys.map(
        (key): GuardedWrite => ({
          item: { ConditionCheck: { TableName: TABLE, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
          // Deleted since the read: read again, and the order answers 422 naming it.
          onConditionFailed: () => new StaleRead(),
        }),
      ),
      ...(coupon ? couponWrites(storeId, coupon, input, createdAt) : []),
    ]);
    return toOrder(item);
  });
}

async function getOrderItem(storeId: number, orderId: number): Promise<OrderItem> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: orderKey(storeId, orderId), ConsistentRead: true }));
  if (!result.Item) throw notFound('Order');
  return stripKeys(result.Item) as unknown as OrderItem;
}

/** The order with this id in this store; 404 `Order not found` otherwise (another store's included). */
export async function getOrder(storeId: number, orderId: number): Promise<Order> {
  return toOrder(await getOrderItem(storeId, orderId));
}

const INTERNAL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The order with this internal_id in this store; 404 `Order not found` otherwise. */
export async function getOrderByInternalId(storeId: number, internalId: string): Promise<Order> {
  if (!INTERNAL_ID.test(internalId)) throw notFound('Order');
  const sentinel = await db.send(new GetCommand({ TableName: TABLE, Key: internalIdKey(storeId, internalId), ConsistentRead: true }));
  const orderId = sentinel.Item?.order_id as number | undefined;
  if (orderId === undefined) throw notFound('Order');
  return getOrder(storeId, orderId);
}

// ---------------------------------------------------------------------------------------------
// Status changes

/** Credits the ref_code's affiliate (once per order) and clears the flag that says it is owed. */
async function settleCommission(storeId: number, item: OrderItem): Promise<void> {
  if (!item.commission_pending || item.ref_code === null) return;
  await creditCommission(storeId, item.ref_code, item.id, item.total, item.packages);
  await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: orderKey(storeId, item.id),
      UpdateExpression: 'REMOVE commission_pending',
      ConditionExpression: 'attribute_exists(pk)',
    }),
  );
}

const orderChanged = (current: unknown) => (current ? new StaleRead() : notFound('Order'));

export async function approveOrder(storeId: number, orderId: number): Promise<Order> {
  const approved = await retrying(async () => {
    const item = await getOrderItem(storeId, orderId);
    if (item.status === 'CANCELED') throw conflict('Order is canceled; only a PENDING order can be approved');
    if (item.status === 'APPROVED') return item;

    const approvedAt = nowIso();
    const count = item.deliveries.length;
    const firstId = count > 0 ? await allocateCommandIds(storeId, count) : 0;
    const commandIds = item.deliveries.map((_, index) => firstId + index);
    const snapshot = {
      client_identifier: item.client_identifier,
      client_email: item.client_email,
      client_name: item.client_name,
      client_social: item.client_social,
      internal_id: item.internal_id,
      variables: item.variables,
    };
    const commissionPending = item.ref_code !== null;
    await transactGuarded([
      {
        item: {
          Update: {
            TableName: TABLE,
            Key: orderKey(storeId, orderId),
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
      ...item.deliveries.map(
        (delivery, index): GuardedWrite => ({
          item: commandPut(storeId, commandIds[index]!, orderId, snapshot, delivery, approvedAt),
          onConditionFailed: () => new Error(`command id ${commandIds[index]} allocated twice in store ${storeId}`),
        }),
      ),
    ]);
    return { ...item, status: 'APPROVED' as const, approved_at: approvedAt, updated_at: approvedAt, command_ids: commandIds, commission_pending: commissionPending };
  });
  await settleCommission(storeId, approved);
  return toOrder(approved);
}

/**
 * PENDING -> CANCELED, giving the coupon use back. Canceling a CANCELED order answers it
 * unchanged (a repeated cancel is harmless and releases nothing twice); an APPROVED order has
 * delivered, so canceling it is a 409.
 */
export function cancelOrder(storeId: number, orderId: number): Promise<Order> {
  // Release targets found missing (a deleted coupon): left out of the next attempt.
  const gone = new Set<string>();
  return retrying(async () => {
    const item = await getOrderItem(storeId, orderId);
    if (item.status === 'CANCELED') return toOrder(item);
    if (item.status === 'APPROVED') throw conflict('Order is approved; only a PENDING order can be canceled');

    const canceledAt = nowIso();
    const releases: Key[] =
      item.discount_id === null ? [] : [discountKey(storeId, item.discount_id), ...item.coupon_counters.map((sk) => ({ pk: storePk(storeId), sk }))];
    await transactGuarded([
      {
        item: {
          Update: {
            TableName: TABLE,
            Key: orderKey(storeId, orderId),
            UpdateExpression: 'SET #status = :canceled, canceled_at = :now, updated_at = :now, gsi2pk = :statusPk',
            ConditionExpression: '#status = :pending',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':canceled': 'CANCELED', ':pending': 'PENDING', ':now': canceledAt, ':statusPk': statusPk(storeId, 'CANCELED') },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        onConditionFailed: orderChanged,
      },
      ...releases
        .filter((key) => !gone.has(key.sk))
        .map(
          (key): GuardedWrite => ({
            item: {
              Update: {
                TableName: TABLE,
                Key: key,
                UpdateExpression: 'ADD uses :minus',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':minus': -1 },
              },
            },
            onConditionFailed: () => {
              gone.add(key.sk);
              return new StaleRead();
            },
          }),
        ),
    ]);
    return toOrder({ ...item, status: 'CANCELED', canceled_at: canceledAt, updated_at: canceledAt });
  });
}

/** Puts every command of an APPROVED order back on the queue (PENDING, same execute_at). */
export async function resendOrderCommands(storeId: number, orderId: number): Promise<{ order_id: number; resent: number }> {
  const item = await getOrderItem(storeId, orderId);
  if (item.status !== 'APPROVED') throw conflict(`Order is ${item.status}; only an APPROVED order has commands to resend`);
  if (item.command_ids.length > 0) {
    const now = nowIso();
    await transactWrite(item.command_ids.map((id) => requeueUpdate(storeId, id, now)));
  }
  return { order_id: orderId, resent: item.command_ids.length };
}

// ---------------------------------------------------------------------------------------------
// Lists

const filterDigest = (filters: OrderFilters) =>
  createHash('sha256')
    .update(JSON.stringify([filters.status ?? null, filters.from ?? null, filters.to ?? null, filters.package ?? null]))
    .digest('base64url')
    .slice(0, 16);
const cursorCheck = (body: string) => createHash('sha256').update(`order-cursor:v1:${body}`).digest('base64url').slice(0, 22);

interface Position {
  created_at: string;
  id: number;
}

export function encodeCursor(storeId: number, filters: OrderFilters, position: Position): string {
  const body = Buffer.from(JSON.stringify({ s: storeId, f: filterDigest(filters), c: position.created_at, i: position.id })).toString('base64url');
  return `${body}.${cursorCheck(body)}`;
}

const invalidCursor = () => badRequest('page_cursor is invalid, or was issued for another store or other filters', 'INVALID_CURSOR', 'page_cursor');
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function decodeCursor(storeId: number, filters: OrderFilters, cursor: string): Position {
  if (cursor.length > CURSOR_MAX) throw invalidCursor();
  const [body, check, ...rest] = cursor.split('.');
  if (!body || !check || rest.length > 0 || check !== cursorCheck(body)) throw invalidCursor();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const { s, f, c, i } = (payload ?? {}) as Record<string, unknown>;
  if (s !== storeId || f !== filterDigest(filters) || typeof c !== 'string' || !ISO_Z.test(c) || !Number.isSafeInteger(i) || (i as number) < 1) {
    throw invalidCursor();
  }
  if ((filters.from !== undefined && c < filters.from) || (filters.to !== undefined && c > filters.to)) throw invalidCursor();
  return { created_at: c, id: i as number };
}

/** The Query of a filtered list (newest first) and the start key that resumes after `after`. */
function listQuery(storeId: number, filters: OrderFilters) {
  const index = filters.status ? ('gsi2' as const) : ('gsi1' as const);
  const partition = filters.status ? statusPk(storeId, filters.status) : allOrdersPk(storeId);
  const names: Record<string, string> = { '#pk': `${index}pk` };
  const values: Record<string, unknown> = { ':pk': partition };
  let range = '';
  // `<to>$` sorts after every `<to>#<id>`: `to` is inclusive.
  if (filters.from && filters.to) {
    range = ' AND #sk BETWEEN :from AND :to';
    Object.assign(values, { ':from': filters.from, ':to': `${filters.to}$` });
  } else if (filters.from) {
    range = ' AND #sk >= :from';
    values[':from'] = filters.from;
  } else if (filters.to) {
    range = ' AND #sk <= :to';
    values[':to'] = `${filters.to}$`;
  }
  if (range) names['#sk'] = `${index}sk`;
  let filter: string | undefined;
  if (filters.package !== undefined) {
    filter = 'contains(package_ids, :package)';
    values[':package'] = filters.package;
  }
  const input: QueryCommandInput = {
    TableName: TABLE,
    IndexName: index,
    KeyConditionExpression: `#pk = :pk${range}`,
    FilterExpression: filter,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
  };
  const startAfter = (position: Position) => {
    const sortKey = listSk(position.created_at, position.id);
    return { ...orderKey(storeId, position.id), [`${index}pk`]: partition, [`${index}sk`]: sortKey };
  };
  /** The position of a LastEvaluatedKey: its index sort key is `<created_at>#<id>`. */
  const positionOf = (key: Record<string, unknown>): Position => {
    const sortKey = String(key[`${index}sk`]);
    const separator = sortKey.lastIndexOf('#');
    return { created_at: sortKey.slice(0, separator), id: Number(sortKey.slice(separator + 1)) };
  };
  return { input, startAfter, positionOf };
}

/** Every order matching the filters, newest first (page mode). One Query per MB of the range. */
export async function listOrders(storeId: number, filters: OrderFilters): Promise<Order[]> {
  const { input } = listQuery(storeId, filters);
  const orders: Order[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    orders.push(...(page.Items ?? []).map((item) => toOrder(stripKeys(item) as unknown as OrderItem)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return orders;
}

/** Orders examined per Query when the `package` filter drops some after the read. */
const FILTERED_BATCH = 200;
/** Orders one cursor page examines at most (only the `package` filter can make it examine more than it answers). */
const EXAMINED_MAX = 1000;

/** One page in cursor mode: `cursor` empty on the first call. */
export async function listOrdersByCursor(storeId: number, filters: OrderFilters, cursor: string, pageSize: number): Promise<OrderCursorPage> {
  const { input, startAfter, positionOf } = listQuery(storeId, filters);
  const wanted = pageSize + 1;
  const orders: Order[] = [];
  let examined = 0;
  let startKey: Record<string, unknown> | undefined = cursor === '' ? undefined : startAfter(decodeCursor(storeId, filters, cursor));
  do {
    const limit = input.FilterExpression ? FILTERED_BATCH : wanted - orders.length;
    const page = await db.send(new QueryCommand({ ...input, Limit: limit, ExclusiveStartKey: startKey }));
    examined += page.ScannedCount ?? 0;
    orders.push(...(page.Items ?? []).map((item) => toOrder(stripKeys(item) as unknown as OrderItem)));
    startKey = page.LastEvaluatedKey;
  } while (startKey && orders.length < wanted && examined < EXAMINED_MAX);
  if (orders.length > pageSize) {
    const data = orders.slice(0, pageSize);
    return { data, next_cursor: encodeCursor(storeId, filters, data[data.length - 1]!) };
  }
  // No match beyond this page: the list is over, or EXAMINED_MAX ran out first (resume after the last order examined).
  return { data: orders, next_cursor: startKey ? encodeCursor(storeId, filters, positionOf(startKey)) : null };
}
