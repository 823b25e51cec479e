import { cursorCodec, invalidCursor, isId } from '#lib/db/cursor.ts';
import { findCustomer } from '#lib/db/customer.ts';
import { getMany } from '#lib/db/entity.ts';
import { storePk } from '#lib/db/keys.ts';
import { countedPage, forgetOrderCounts, ORDER_COUNT_SHARD_NAMES, ORDER_COUNTER, type CountedList } from '#lib/db/list-count.ts';
import { allOrdersPk, buyerPk, clientPk, internalIdFromItem, listSk, orderFromItem, orderKey, orderResponse, statusPk, type OrderItem } from '#lib/db/order.ts';
import { queryPages, type QueryInput, type StartKey } from '#lib/db/query.ts';
import type { ServerKeys } from '#lib/crypto.ts';
import { customerUnauthenticated } from '#lib/errors.ts';
import { ORDER_STATUSES, type Order, type OrderCursorPage, type OrderFilters, type OrderStatus } from '#lib/schemas/order.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * Order lists. Calls below exclude the credential lookup.
 *
 * | access pattern                  | key / index                                                                 | calls |
 * |---------------------------------|-----------------------------------------------------------------------------|-------|
 * | list, newest first              | Query gsi1 `STORE#<s>#ORDER`, gsi1sk `<created_at>#<id>` descending          | see below |
 * | list by status                  | Query gsi2 `STORE#<s>#ORDER#<status>`, same sort key (moved on status change) | see below |
 * | `email` (operator), a buyer's   | Query gsi3 `STORE#<s>#BUYER#<lower email>`, same sort key (the buyer's route | see below |
 * | own orders                      | first reads its customer: 1 more call)                                      |       |
 * | `client_identifier`             | Query gsi3 `STORE#<s>#CLIENT#<identifier>` (the orders' internal_id          | see below |
 * |                                 | sentinels, lib/db/order.ts) + BatchGet of those orders                      |       |
 * | `from` / `to`                   | range on that sort key (BETWEEN / >= / <=): never reads outside the range    |       |
 * | `package`                       | FilterExpression `contains(package_ids, :id)` after the read                 |       |
 * | recount (admin `order recount`) | UpdateItem REMOVE the base counter's `counted` flags, then each of the 6     | 1 + 6 x   |
 * |                                 | totals read in turn: its first count (lib/db/list-count.ts)                 | (3 + 1/MB) |
 *
 * Filters combine. One partition answers: the buyer's when `email` is given (then `status` and
 * `client_identifier` are FilterExpressions on it), else the client's (then `status` and `package`
 * are checked on the orders the BatchGet reads), else the status's, else the store's. An `email`
 * or `client_identifier` list therefore costs what that client's orders cost, never the store's.
 * Orders written before the client_identifier index have no entry in it until the admin command
 * `order index-clients` (docs/operations.md) gives them one.
 *
 * Cursor mode reads page_size + 1 matches (to know whether a next page exists): one Query (plus
 * one BatchGet for a client's list) when nothing is checked after the read; otherwise batches of
 * 200 orders until enough match or 1000 orders were examined (a per-package index item would
 * cost a write per line on every order instead). A rare match therefore answers a short page,
 * possibly empty, whose next_cursor resumes after the last order examined: a request never reads
 * a whole store's history, and only `next_cursor: null` says the list is over.
 *
 * Page mode needs `total`. Unfiltered or filtered by `status` alone, the total is a count kept
 * with the orders (lib/db/list-count.ts; moved by every create and status change, lib/db/order.ts,
 * on the order's shard) and a page is one Query of gsi1 / gsi2 with `Limit` (page N > 1 first skips
 * (N-1)*limit entries with `Select COUNT`): 1 BatchGet (the base counter and its 16 shards, 17
 * small items: 17 read units, consistent) + 1 Query for page 1, whatever the store holds. With any other
 * filter (`from`, `to`, `package`, `email`, `client_identifier`) the total is that of a set no
 * count follows (a time range, a package among the lines, one client's orders), so page mode
 * reads every order of the filtered partition and range (one Query per MB) and slices the page in
 * memory: large ranges cost what they read, which is why cursor mode is the one for full scans;
 * with `email` or `client_identifier` that is the client's orders only. A page read from an index
 * may lag the count by an order created within the last second (the count is exact at once).
 * The indexes are eventually consistent (an order shows in lists within about a second on AWS);
 * gets by id, and the BatchGet of a client's list, are strongly consistent.
 *
 * The cursor (lib/db/cursor.ts) holds the position `{c: created_at, i: id}`, bound to the filters
 * (a buyer's list: and the buyer); besides the codec's own checks, a position outside the
 * `from`/`to` range is a 400. The next page's Query starts below that position's sort key.
 */

/** The filters of a list; `buyer` (a lower-case e-mail) lists one buyer's orders, and binds the cursor to that buyer. */
type ListFilters = OrderFilters & { buyer?: string };

/** The filters a cursor is bound to; the newer ones only when given, so that cursors issued before them stay valid. */
const listFilters = (filters: ListFilters) => [
  filters.status ?? null,
  filters.from ?? null,
  filters.to ?? null,
  filters.package ?? null,
  ...(filters.buyer === undefined ? [] : [filters.buyer]),
  ...(filters.email === undefined && filters.client_identifier === undefined ? [] : [{ email: filters.email ?? null, client_identifier: filters.client_identifier ?? null }]),
];
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const codec = cursorCodec('order', ({ c, i }) => (typeof c === 'string' && ISO_Z.test(c) && isId(i) ? { c, i } : undefined));

interface Position {
  created_at: string;
  id: number;
}

export function encodeCursor(storeId: number, filters: ListFilters, position: Position, keys: ServerKeys): string {
  return codec.encode(storeId, listFilters(filters), { c: position.created_at, i: position.id }, keys);
}

export function decodeCursor(storeId: number, filters: ListFilters, cursor: string, keys: ServerKeys): Position {
  const { c, i } = codec.decode(storeId, listFilters(filters), cursor, keys);
  // DynamoDB refuses a key condition whose range is empty (from above the position): that would be a 500.
  if ((filters.from !== undefined && c < filters.from) || (filters.to !== undefined && c > filters.to)) throw invalidCursor();
  return { created_at: c, id: i };
}

/**
 * The greatest sort key below `sortKey` that a list entry can have, as an inclusive bound: keys
 * are `<ISO time>#<digits>`, every character below `~`, so lowering the last character and
 * appending `~` passes every smaller key and stops before `sortKey` itself.
 */
const justBelow = (sortKey: string) => `${sortKey.slice(0, -1)}${String.fromCharCode(sortKey.charCodeAt(sortKey.length - 1) - 1)}~`;

/** What one batch of a list read found: the matching orders, and where the read stopped. */
interface Batch {
  orders: Order[];
  examined: number;
  lastKey: StartKey | undefined;
}

/**
 * The read of a filtered list (newest first), below `after` when resuming. `filtered` says whether
 * some orders read may not match (checked after the read), so that a page reads in batches.
 */
function listRead(storeId: number, filters: ListFilters, after?: Position) {
  const email = filters.buyer ?? filters.email;
  const bySentinel = email === undefined && filters.client_identifier !== undefined;
  const index = email !== undefined || bySentinel ? ('gsi3' as const) : filters.status ? ('gsi2' as const) : ('gsi1' as const);
  const partition =
    email !== undefined
      ? buyerPk(storeId, email)
      : bySentinel
        ? clientPk(storeId, filters.client_identifier!)
        : filters.status
          ? statusPk(storeId, filters.status)
          : allOrdersPk(storeId);
  const names: Record<string, string> = { '#pk': `${index}pk` };
  const values: Record<string, unknown> = { ':pk': partition };
  // `<to>$` sorts after every `<to>#<id>`: `to` is inclusive; a position is below `to` (decodeCursor).
  const lower = filters.from;
  const upper = after ? justBelow(listSk(after.created_at, after.id)) : filters.to ? `${filters.to}$` : undefined;
  let range = '';
  if (lower !== undefined && upper !== undefined) range = ' AND #sk BETWEEN :lower AND :upper';
  else if (lower !== undefined) range = ' AND #sk >= :lower';
  else if (upper !== undefined) range = ' AND #sk <= :upper';
  if (range) names['#sk'] = `${index}sk`;
  if (lower !== undefined) values[':lower'] = lower;
  if (upper !== undefined) values[':upper'] = upper;
  const conditions: string[] = [];
  // On the buyer's partition the other filters are checked by DynamoDB; a client's sentinels carry none of them.
  const matches: ((order: OrderItem) => boolean)[] = [];
  if (filters.package !== undefined) {
    if (bySentinel) matches.push((order) => order.package_ids.includes(filters.package!));
    else {
      conditions.push('contains(package_ids, :package)');
      values[':package'] = filters.package;
    }
  }
  if (filters.status && index !== 'gsi2') {
    if (bySentinel) matches.push((order) => order.status === filters.status);
    else {
      conditions.push('#status = :status');
      names['#status'] = 'status';
      values[':status'] = filters.status;
    }
  }
  if (filters.client_identifier !== undefined && !bySentinel) {
    conditions.push('client_identifier = :client');
    values[':client'] = filters.client_identifier;
  }
  const input: QueryInput = {
    IndexName: index,
    KeyConditionExpression: `#pk = :pk${range}`,
    FilterExpression: conditions.length > 0 ? conditions.join(' AND ') : undefined,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
  };
  /**
   * The batches of the read, one Query each (and, for a client's list, the BatchGet of the orders
   * its sentinels name), each Query's Limit asked of `limit` before it is sent.
   */
  async function* batches(limit?: () => number | undefined): AsyncGenerator<Batch> {
    for await (const page of queryPages(input, { limit })) {
      const items = page.Items ?? [];
      const orders = bySentinel
        ? (await getMany(items.map((sentinel) => orderKey(storeId, internalIdFromItem(sentinel).order_id)))).flatMap((item) => (item ? [orderFromItem(item)] : []))
        : items.map(orderFromItem);
      yield {
        orders: orders.filter((order) => matches.every((match) => match(order))).map(orderResponse),
        examined: page.ScannedCount ?? items.length,
        lastKey: page.LastEvaluatedKey,
      };
    }
  }
  /** The position of a LastEvaluatedKey: its index sort key is `<created_at>#<id>`. */
  const positionOf = (key: StartKey): Position => {
    const sortKey = String(key[`${index}sk`]);
    const separator = sortKey.lastIndexOf('#');
    return { created_at: sortKey.slice(0, separator), id: Number(sortKey.slice(separator + 1)) };
  };
  return { batches, positionOf, filtered: conditions.length + matches.length > 0 };
}

/**
 * Every order matching the filters, newest first (page mode): one Query per MB of the partition
 * and range (and, for a client's list, one BatchGet per 100 of its orders).
 */
async function listOrders(storeId: number, filters: OrderFilters): Promise<Order[]> {
  const orders: Order[] = [];
  for await (const batch of listRead(storeId, filters).batches()) orders.push(...batch.orders);
  return orders;
}

/** The counted order list: all orders (gsi1) or one status's (gsi2), newest first; its first count reads the table's orders. */
function countedOrders(storeId: number, status: OrderStatus | undefined): CountedList {
  const entity = { names: { '#entity': 'entity' }, values: { ':order': ENTITY.ORDER } };
  return {
    counter: ORDER_COUNTER,
    shards: ORDER_COUNT_SHARD_NAMES,
    field: status,
    page: status ? { index: 'gsi2', pk: statusPk(storeId, status), descending: true } : { index: 'gsi1', pk: allOrdersPk(storeId), descending: true },
    count: {
      // Notes share the prefix (`ORDER#<id>#NOTE#...`): only order items count.
      pk: storePk(storeId),
      skPrefix: `${ENTITY.ORDER}#`,
      // An order whose approval still owes its count move (`count_owed`, lib/db/order.ts) counts under the status it is owed in:
      // the settle moves it from there afterwards.
      filter: status
        ? {
            FilterExpression: '#entity = :order AND (count_owed = :status OR (attribute_not_exists(count_owed) AND #status = :status))',
            ExpressionAttributeNames: { ...entity.names, '#status': 'status' },
            ExpressionAttributeValues: { ...entity.values, ':status': status },
          }
        : { FilterExpression: '#entity = :order', ExpressionAttributeNames: entity.names, ExpressionAttributeValues: entity.values },
    },
  };
}

/** One page in page mode and the total: counted when unfiltered or by status alone, otherwise the filtered set read whole (see the header). */
export async function orderPage(storeId: number, filters: OrderFilters, page: number, limit: number): Promise<{ total: number; data: Order[] }> {
  const { from, to, package: packageId, email, client_identifier: clientIdentifier } = filters;
  if ([from, to, packageId, email, clientIdentifier].every((filter) => filter === undefined)) {
    return countedPage(storeId, countedOrders(storeId, filters.status), page, limit, (item) => orderResponse(orderFromItem(item)));
  }
  const orders = await listOrders(storeId, filters);
  return { total: orders.length, data: orders.slice((page - 1) * limit, page * limit) };
}

/** The page-mode totals, all orders and each status, counted once from the orders themselves (lib/db/list-count.ts `forgetOrderCounts`). */
export async function recountOrders(storeId: number): Promise<{ total: number; by_status: Record<OrderStatus, number> }> {
  await forgetOrderCounts(storeId);
  const totals: number[] = [];
  // One list after the other: each first count's transaction holds the base and every shard, so at once they would cancel each other.
  for (const status of [undefined, ...ORDER_STATUSES]) totals.push((await orderPage(storeId, { status }, 1, 1)).total);
  return { total: totals[0]!, by_status: Object.fromEntries(ORDER_STATUSES.map((status, index) => [status, totals[index + 1]!])) as Record<OrderStatus, number> };
}

/** Orders examined per Query when some are checked after the read. */
const FILTERED_BATCH = 200;
/** Orders one cursor page examines at most (only filters checked after the read can make it examine more than it answers). */
const EXAMINED_MAX = 1000;

/** One page in cursor mode: `cursor` empty on the first call; `keys` make and check the cursors (lib/server-secret.ts). */
export async function listOrdersByCursor(storeId: number, filters: ListFilters, cursor: string, pageSize: number, keys: ServerKeys): Promise<OrderCursorPage> {
  const after = cursor === '' ? undefined : decodeCursor(storeId, filters, cursor, keys);
  const { batches, positionOf, filtered } = listRead(storeId, filters, after);
  const wanted = pageSize + 1;
  const orders: Order[] = [];
  let examined = 0;
  let startKey: StartKey | undefined;
  for await (const batch of batches(() => (filtered ? FILTERED_BATCH : wanted - orders.length))) {
    examined += batch.examined;
    orders.push(...batch.orders);
    startKey = batch.lastKey;
    if (orders.length >= wanted || examined >= EXAMINED_MAX) break;
  }
  if (orders.length > pageSize) {
    const data = orders.slice(0, pageSize);
    return { data, next_cursor: encodeCursor(storeId, filters, data[data.length - 1]!, keys) };
  }
  // No match beyond this page: the list is over, or EXAMINED_MAX ran out first (resume after the last order examined).
  return { data: orders, next_cursor: startKey ? encodeCursor(storeId, filters, positionOf(startKey), keys) : null };
}

/** The logged-in buyer's own orders (by e-mail, ignoring case; guest orders under it included), newest first. */
export async function listBuyerOrders(storeId: number, customerId: number, cursor: string, pageSize: number, keys: ServerKeys): Promise<OrderCursorPage> {
  const customer = await findCustomer(storeId, customerId);
  if (!customer) throw customerUnauthenticated();
  return listOrdersByCursor(storeId, { buyer: customer.email.toLowerCase() }, cursor, pageSize, keys);
}
