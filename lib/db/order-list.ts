import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { cursorCodec, invalidCursor, isId } from '#lib/db/cursor.ts';
import { findCustomer } from '#lib/db/customer.ts';
import { allOrdersPk, buyerPk, fromItem, listSk, orderKey, statusPk, toOrder } from '#lib/db/order.ts';
import type { ServerKeys } from '#lib/crypto.ts';
import { customerUnauthenticated } from '#lib/errors.ts';
import { type Order, type OrderCursorPage, type OrderFilters } from '#lib/schemas/order.ts';

/**
 * Order lists. Calls below exclude the credential lookup.
 *
 * | access pattern                  | key / index                                                                 | calls |
 * |---------------------------------|-----------------------------------------------------------------------------|-------|
 * | list, newest first              | Query gsi1 `STORE#<s>#ORDER`, gsi1sk `<created_at>#<id>` descending          | see below |
 * | list by status                  | Query gsi2 `STORE#<s>#ORDER#<status>`, same sort key (moved on status change) | see below |
 * | a buyer's orders (cursor mode)  | GetItem customer + Query gsi3 `STORE#<s>#BUYER#<lower email>`, same sort key | 2     |
 * | `from` / `to`                   | range on that sort key (BETWEEN / >= / <=): never reads outside the range    |       |
 * | `package`                       | FilterExpression `contains(package_ids, :id)` after the read                 |       |
 *
 * Cursor mode reads page_size + 1 matches (to know whether a next page exists): one
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
 * The cursor (lib/db/cursor.ts) holds the position `{c: created_at, i: id}`, bound to the filters
 * (a buyer's list: and the buyer); besides the codec's own checks, a position outside the
 * `from`/`to` range is a 400.
 */

/** The filters of a list; `buyer` (a lower-case e-mail) lists one buyer's orders, and binds the cursor to that buyer. */
type ListFilters = OrderFilters & { buyer?: string };

const listFilters = (filters: ListFilters) => [
  filters.status ?? null, filters.from ?? null, filters.to ?? null, filters.package ?? null, ...(filters.buyer === undefined ? [] : [filters.buyer]),
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
  // DynamoDB refuses a start key outside the key condition's range: that would be a 500.
  if ((filters.from !== undefined && c < filters.from) || (filters.to !== undefined && c > filters.to)) throw invalidCursor();
  return { created_at: c, id: i };
}

/** The Query of a filtered list (newest first) and the start key that resumes after `after`. */
function listQuery(storeId: number, filters: ListFilters) {
  const index = filters.buyer !== undefined ? ('gsi3' as const) : filters.status ? ('gsi2' as const) : ('gsi1' as const);
  const partition = filters.buyer !== undefined ? buyerPk(storeId, filters.buyer) : filters.status ? statusPk(storeId, filters.status) : allOrdersPk(storeId);
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
    orders.push(...(page.Items ?? []).map((item) => toOrder(fromItem(item))));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return orders;
}

/** Orders examined per Query when the `package` filter drops some after the read. */
const FILTERED_BATCH = 200;
/** Orders one cursor page examines at most (only the `package` filter can make it examine more than it answers). */
const EXAMINED_MAX = 1000;

/** One page in cursor mode: `cursor` empty on the first call; `keys` make and check the cursors (lib/server-secret.ts). */
export async function listOrdersByCursor(storeId: number, filters: ListFilters, cursor: string, pageSize: number, keys: ServerKeys): Promise<OrderCursorPage> {
  const { input, startAfter, positionOf } = listQuery(storeId, filters);
  const wanted = pageSize + 1;
  const orders: Order[] = [];
  let examined = 0;
  let startKey: Record<string, unknown> | undefined = cursor === '' ? undefined : startAfter(decodeCursor(storeId, filters, cursor, keys));
  do {
    const limit = input.FilterExpression ? FILTERED_BATCH : wanted - orders.length;
    const page = await db.send(new QueryCommand({ ...input, Limit: limit, ExclusiveStartKey: startKey }));
    examined += page.ScannedCount ?? 0;
    orders.push(...(page.Items ?? []).map((item) => toOrder(fromItem(item))));
    startKey = page.LastEvaluatedKey;
  } while (startKey && orders.length < wanted && examined < EXAMINED_MAX);
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
