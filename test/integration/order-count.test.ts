import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { adminCommands } from '#lib/admin/commands.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { listCounterKey, ORDER_COUNT_SHARD_NAMES, ORDER_COUNT_SHARDS, ORDER_COUNTER, orderCountShard } from '#lib/db/list-count.ts';
import { orderKey } from '#lib/db/order.ts';
import { orderPage } from '#lib/db/order-list.ts';
import { ORDER_STATUSES, type OrderStatus } from '#lib/schemas/order.ts';
import { createPackage, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { dynamoDbCalls, newStore } from '../support/client.ts';

/**
 * The order list's page-mode totals (lib/db/order-list.ts, lib/db/order.ts): counts of all orders
 * and of each status in a base counter item and 16 shards, the order's shard moved by the same
 * transaction as the create, approval, cancel, refund or chargeback, and a page read with `Limit`
 * instead of the whole store.
 */

type Totals = Record<'ALL' | OrderStatus, number>;

/** The totals the list answers, unfiltered and for each status. */
async function listTotals(store: Store): Promise<Totals> {
  const totals = { ALL: 0 } as Totals;
  const all = await store.get('/v1/app/order?limit=1');
  expect(all.status, all.text).toBe(200);
  totals.ALL = all.body.meta.total;
  for (const status of ORDER_STATUSES) {
    const res = await store.get(`/v1/app/order?limit=1&status=${status}`);
    expect(res.status, res.text).toBe(200);
    totals[status] = res.body.meta.total;
  }
  return totals;
}

/** The totals the orders themselves give, each read by id (strongly consistent, no count involved). */
async function truth(store: Store, ids: readonly number[]): Promise<Totals> {
  const totals = { ALL: ids.length, PENDING: 0, APPROVED: 0, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 } as Totals;
  for (const id of ids) {
    const res = await store.get(`/v1/app/order/${id}`);
    totals[res.body.status as OrderStatus] += 1;
  }
  return totals;
}

const counterItem = async (storeId: number, counter: string = ORDER_COUNTER) =>
  (await db.send(new GetCommand({ TableName: TABLE, Key: listCounterKey(storeId, counter), ConsistentRead: true }))).Item;

/** Each count (`n`, `n_<STATUS>`) summed over the base item and its shards: what a total adds up. */
async function summedCounts(storeId: number): Promise<Record<string, number>> {
  const items = await Promise.all([ORDER_COUNTER, ...ORDER_COUNT_SHARD_NAMES].map((counter) => counterItem(storeId, counter)));
  const sums: Record<string, number> = {};
  for (const name of ['n', ...ORDER_STATUSES.map((status) => `n_${status}`)]) sums[name] = items.reduce((sum, item) => sum + Number(item?.[name] ?? 0), 0);
  return sums;
}

/** The state of a store from before the counts: no base item but `store_id`, no shard at all. */
async function forgetCounts(storeId: number): Promise<void> {
  await db.send(new PutCommand({ TableName: TABLE, Item: { ...listCounterKey(storeId, ORDER_COUNTER), store_id: storeId } }));
  await db.send(new BatchWriteCommand({ RequestItems: { [TABLE]: ORDER_COUNT_SHARD_NAMES.map((shard) => ({ DeleteRequest: { Key: listCounterKey(storeId, shard) } })) } }));
}

const orderItem = async (storeId: number, orderId: number) => (await db.send(new GetCommand({ TableName: TABLE, Key: orderKey(storeId, orderId), ConsistentRead: true }))).Item!;

async function ordersOf(store: Store, count: number, packageBody: Record<string, unknown> = {}): Promise<number[]> {
  const pkg = await createPackage(store, { price: 5, ...packageBody });
  const ids: number[] = [];
  // Ten at a time: the creates race on the store's counter item, as real checkouts do.
  for (let start = 0; start < count; start += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, count - start) }, () => placeOrder(store, orderBody(pkg.id))));
    ids.push(...batch.map((order) => order.id));
  }
  return ids.sort((a, b) => a - b);
}

/** Every order id of a list in cursor mode (no count involved), newest first. */
async function walk(store: Store, query: string): Promise<number[]> {
  const seen: number[] = [];
  let cursor = '';
  do {
    const res = await store.get(`/v1/app/order?page_cursor=${encodeURIComponent(cursor)}&page_size=7${query}`);
    expect(res.status, res.text).toBe(200);
    seen.push(...res.body.data.map((order: { id: number }) => order.id));
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return seen;
}

describe('order list totals', () => {
  it('a new store starts its order counts exact at 0, and page 1 reads the count and one page', async () => {
    const store = await newStore();
    expect(await counterItem(store.storeId)).toMatchObject({
      n: 0,
      counted: true,
      n_PENDING: 0,
      counted_PENDING: true,
      n_APPROVED: 0,
      counted_APPROVED: true,
      n_CANCELED: 0,
      counted_CANCELED: true,
      n_REFUNDED: 0,
      counted_REFUNDED: true,
      n_CHARGEBACK: 0,
      counted_CHARGEBACK: true,
    });
    const first = await store.get('/v1/app/order?status=PENDING');
    expect(first.body.meta.total).toBe(0);
    // The credential, the count, the page's Query: never a count of the orders.
    expect(dynamoDbCalls(first)).toBe(3);
  });

  it('follows every move: create, approve, cancel, refund, chargeback, and a repeated call moves nothing', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 6);
    expect(await listTotals(store)).toEqual({ ALL: 6, PENDING: 6, APPROVED: 0, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
    const [a, b, c, d] = ids as [number, number, number, number];
    for (const id of [a, b, c]) expect((await store.post(`/v1/app/order/${id}/approve`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${d}/cancel`)).status).toBe(200);
    expect(await listTotals(store)).toEqual({ ALL: 6, PENDING: 2, APPROVED: 3, CANCELED: 1, REFUNDED: 0, CHARGEBACK: 0 });
    expect((await store.post(`/v1/app/order/${a}/refund`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${b}/chargeback`)).status).toBe(200);
    expect(await listTotals(store)).toEqual({ ALL: 6, PENDING: 2, APPROVED: 1, CANCELED: 1, REFUNDED: 1, CHARGEBACK: 1 });
    // Repeated and refused calls: the same answers, no count moved.
    expect((await store.post(`/v1/app/order/${c}/approve`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${d}/cancel`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${a}/refund`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${c}/cancel`)).status).toBe(409);
    expect((await store.post(`/v1/app/order/${d}/approve`)).status).toBe(409);
    expect(await listTotals(store)).toEqual(await truth(store, ids));
    expect(await listTotals(store)).toEqual({ ALL: 6, PENDING: 2, APPROVED: 1, CANCELED: 1, REFUNDED: 1, CHARGEBACK: 1 });
  });

  it("moves each order's counts on its own shard (id mod 16): consecutive orders spread over all of them, the base untouched", async () => {
    const store = await newStore();
    const ids = await ordersOf(store, ORDER_COUNT_SHARDS + 4);
    const [approved, canceled] = ids as [number, number];
    expect((await store.post(`/v1/app/order/${approved}/approve`)).status).toBe(200);
    expect((await store.post(`/v1/app/order/${canceled}/cancel`)).status).toBe(200);
    for (let shard = 0; shard < ORDER_COUNT_SHARDS; shard++) {
      const mine = ids.filter((id) => id % ORDER_COUNT_SHARDS === shard);
      const item = await counterItem(store.storeId, orderCountShard(shard));
      expect(mine.length, `shard ${shard}`).toBeGreaterThan(0);
      expect(Number(item?.n), `shard ${shard}`).toBe(mine.length);
      expect(Number(item?.n_APPROVED ?? 0), `shard ${shard}`).toBe(mine.includes(approved) ? 1 : 0);
      expect(Number(item?.n_CANCELED ?? 0), `shard ${shard}`).toBe(mine.includes(canceled) ? 1 : 0);
    }
    expect(await counterItem(store.storeId)).toMatchObject({ n: 0, n_PENDING: 0, n_APPROVED: 0, counted: true });
    expect(await listTotals(store)).toEqual(await truth(store, ids));
  });

  it('a store counted in the one item of before the shards answers right once orders move the shards, with no migration', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 5);
    for (const id of ids.slice(0, 2)) await store.post(`/v1/app/order/${id}/approve`);
    // The one counter item as the single-item code left it: every count exact in it, no shard.
    await forgetCounts(store.storeId);
    const exact = { n: 5, n_PENDING: 3, n_APPROVED: 2, n_CANCELED: 0, n_REFUNDED: 0, n_CHARGEBACK: 0 };
    const flags = Object.fromEntries(['counted', ...ORDER_STATUSES.map((status) => `counted_${status}`)].map((flag) => [flag, true]));
    await db.send(new PutCommand({ TableName: TABLE, Item: { ...listCounterKey(store.storeId, ORDER_COUNTER), store_id: store.storeId, ...exact, ...flags, moves: 9 } }));
    const later = await ordersOf(store, 3);
    await store.post(`/v1/app/order/${later[0]}/approve`);
    await store.post(`/v1/app/order/${ids[2]}/cancel`);
    await store.post(`/v1/app/order/${ids[0]}/refund`);
    const page = await store.get('/v1/app/order?limit=1&status=PENDING');
    // The credential, the BatchGet of the base and the shards, the page: no count of the orders.
    expect(dynamoDbCalls(page)).toBe(3);
    expect(await listTotals(store)).toEqual(await truth(store, [...ids, ...later]));
    expect(await listTotals(store)).toEqual({ ALL: 8, PENDING: 4, APPROVED: 2, CANCELED: 1, REFUNDED: 1, CHARGEBACK: 0 });
    // The base is as it was left: the moves since are on the shards.
    expect(await counterItem(store.storeId)).toMatchObject(exact);
  });

  it('the admin command `order recount` counts a total left wrong again from the orders, and the list answers from the counts after', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 6);
    await store.post(`/v1/app/order/${ids[0]}/approve`);
    // A base counted by a list function of before the shards while orders moved the shards: the moves counted twice.
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: listCounterKey(store.storeId, ORDER_COUNTER),
        UpdateExpression: 'ADD n :four, n_PENDING :four',
        ExpressionAttributeValues: { ':four': 4 },
      }),
    );
    expect((await listTotals(store)).ALL).toBe(10);
    const recounted = await adminCommands['order recount']!.run({ store: String(store.storeId) });
    expect(recounted).toEqual({ store_id: store.storeId, total: 6, by_status: { PENDING: 5, APPROVED: 1, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 } });
    expect(await listTotals(store)).toEqual(await truth(store, ids));
    const page = await store.get('/v1/app/order?limit=1');
    expect(dynamoDbCalls(page)).toBe(3);
  });

  it('an order refused at create (422) counts nowhere', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 1 });
    expect((await store.post('/v1/app/order', orderBody(pkg.id, { packages: [{ package_id: pkg.id, quantity: 2 }] }))).status).toBe(422);
    expect(await listTotals(store)).toEqual({ ALL: 0, PENDING: 0, APPROVED: 0, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
  });

  it('ends exact when creates, approvals, cancels, refunds and repeated calls race', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 30);
    const pkg = await createPackage(store, { price: 1 });
    const calls = [
      // The same order approved five times and canceled five times at once: one of the two wins.
      ...Array.from({ length: 5 }, () => store.post(`/v1/app/order/${ids[0]}/approve`)),
      ...Array.from({ length: 5 }, () => store.post(`/v1/app/order/${ids[0]}/cancel`)),
      ...ids.slice(1, 11).map((id) => store.post(`/v1/app/order/${id}/approve`)),
      ...ids.slice(11, 21).map((id) => store.post(`/v1/app/order/${id}/cancel`)),
      ...Array.from({ length: 15 }, () => store.post('/v1/app/order', orderBody(pkg.id))),
    ];
    const results = await Promise.all(calls);
    for (const res of results) expect([200, 409], res.text).toContain(res.status);
    const creates = results.slice(-15);
    for (const res of creates) expect(res.status, res.text).toBe(200);
    const created = creates.map((res) => res.body.id as number);
    // Then refunds of approved orders race with approvals of the new ones.
    await Promise.all([
      ...ids.slice(1, 6).flatMap((id) => [store.post(`/v1/app/order/${id}/refund`), store.post(`/v1/app/order/${id}/refund`)]),
      ...created.slice(0, 8).map((id) => store.post(`/v1/app/order/${id}/approve`)),
    ]);
    const firstWon = (await store.get(`/v1/app/order/${ids[0]}`)).body.status;
    expect(['APPROVED', 'CANCELED']).toContain(firstWon);
    // ids 1-5 refunded, 6-10 approved, 11-20 canceled, 21-29 and 7 of the new ones pending, 8 new ones approved.
    const expected = { ALL: 45, PENDING: 16, APPROVED: 13 + (firstWon === 'APPROVED' ? 1 : 0), CANCELED: 10 + (firstWon === 'CANCELED' ? 1 : 0), REFUNDED: 5, CHARGEBACK: 0 };
    expect(await truth(store, [...ids, ...created])).toEqual(expected);
    expect(await listTotals(store)).toEqual(expected);
  });

  it('pages newest first from the counted list, the same orders cursor mode walks, deep pages included', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 23);
    for (const id of ids.filter((id) => id % 3 === 0)) await store.post(`/v1/app/order/${id}/approve`);
    // Newest first is by created_at (orders placed at once may take ids out of that order): cursor mode's walk is the reference.
    const newestFirst = await walk(store, '');
    expect([...newestFirst].sort((a, b) => a - b)).toEqual(ids);
    const pages = [];
    for (let page = 1; page <= 6; page++) {
      const res = await store.get(`/v1/app/order?limit=5&page=${page}`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({ total: 23, current_page: page, last_page: 5 });
      pages.push(...res.body.data.map((order: { id: number }) => order.id));
    }
    expect(pages).toEqual(newestFirst);
    const approved = await walk(store, '&status=APPROVED');
    expect([...approved].sort((a, b) => a - b)).toEqual(ids.filter((id) => id % 3 === 0));
    const second = await store.get('/v1/app/order?limit=3&page=2&status=APPROVED');
    expect(second.body.meta).toMatchObject({ total: approved.length, last_page: Math.ceil(approved.length / 3) });
    expect(second.body.data.map((order: { id: number }) => order.id)).toEqual(approved.slice(3, 6));
    expect(second.body.data[0]).toMatchObject({ status: 'APPROVED', client_email: 'steve@example.com' });
    // A page past the end: the total still, no orders.
    const past = await store.get('/v1/app/order?limit=5&page=99');
    expect(past.body).toMatchObject({ data: [], meta: { total: 23, current_page: 99 } });
  });

  it('page 1 reads about `limit` orders whatever the store holds; a filtered list still reads its set', async () => {
    const store = await newStore();
    await ordersOf(store, 60);
    const scanned: number[] = [];
    const middleware = (next: (args: unknown) => Promise<{ output: { ScannedCount?: number } }>) => async (args: unknown) => {
      const result = await next(args);
      if (typeof result.output.ScannedCount === 'number') scanned.push(result.output.ScannedCount);
      return result;
    };
    db.middlewareStack.add(middleware as never, { step: 'initialize', name: 'countScanned' });
    try {
      const page = await orderPage(store.storeId, {}, 1, 5);
      expect(page.total).toBe(60);
      expect(page.data).toHaveLength(5);
      expect(scanned.reduce((sum, n) => sum + n, 0)).toBe(5);
      scanned.length = 0;
      const byStatus = await orderPage(store.storeId, { status: 'PENDING' }, 2, 5);
      expect(byStatus.total).toBe(60);
      // Page 2 skips 5 (Select COUNT) and reads 5.
      expect(scanned.reduce((sum, n) => sum + n, 0)).toBe(10);
      scanned.length = 0;
      const ranged = await orderPage(store.storeId, { from: '2000-01-01T00:00:00.000Z' }, 1, 5);
      expect(ranged.total).toBe(60);
      expect(scanned.reduce((sum, n) => sum + n, 0)).toBe(60);
    } finally {
      db.middlewareStack.remove('countScanned');
    }
  });

  it('a store whose orders are older than the counts counts each list once, exactly, then answers from the count', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 7);
    await store.post(`/v1/app/order/${ids[0]}/approve`);
    await store.post(`/v1/app/order/${ids[1]}/cancel`);
    // Before the counts: no counter item at all; then an order approved since moves an uncounted delta on its shard.
    await forgetCounts(store.storeId);
    await store.post(`/v1/app/order/${ids[2]}/approve`);
    expect(await counterItem(store.storeId, orderCountShard(ids[2]!))).toMatchObject({ n_PENDING: -1, n_APPROVED: 1 });
    const first = await store.get('/v1/app/order?limit=2&status=APPROVED');
    expect(first.body.meta.total).toBe(2);
    // The credential, the counts' BatchGet, the page, the count of the table's orders and its write (one transaction).
    expect(dynamoDbCalls(first)).toBe(5);
    // The base holds the count less the shard's delta.
    expect(await counterItem(store.storeId)).toMatchObject({ n_APPROVED: 1, counted_APPROVED: true });
    expect(await summedCounts(store.storeId)).toMatchObject({ n_APPROVED: 2 });
    expect(await counterItem(store.storeId)).not.toHaveProperty('counted_PENDING');
    const again = await store.get('/v1/app/order?limit=2&status=APPROVED');
    expect(again.body.meta.total).toBe(2);
    expect(dynamoDbCalls(again)).toBe(3);
    // Notes share the orders' key prefix and are not counted as orders.
    expect((await store.post(`/v1/app/order/${ids[3]}/note`, { content: 'call back' })).status).toBe(200);
    expect(await listTotals(store)).toEqual(await truth(store, ids));
    expect(await counterItem(store.storeId)).toMatchObject({ counted: true, counted_PENDING: true });
    expect(await summedCounts(store.storeId)).toMatchObject({ n: 7, n_PENDING: 4 });
  });

  it('a first count that a create and an approval straddle (+1 and -1: the count unchanged) stores nothing, and the next read is exact', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 3);
    const pkg = await createPackage(store, { price: 2 });
    // An older store whose counts have moved since (n_PENDING exists, not counted).
    await forgetCounts(store.storeId);
    await store.post(`/v1/app/order/${ids[0]}/approve`);
    let straddled = false;
    // Around the first count's own Query (consistent, Select COUNT): an order placed before it, one approved after it.
    const middleware = (next: (args: { input: Record<string, unknown> }) => Promise<unknown>) => async (args: { input: Record<string, unknown> }) => {
      const firstCount = args.input.Select === 'COUNT' && args.input.ConsistentRead === true && !straddled;
      if (firstCount) {
        straddled = true;
        await placeOrder(store, orderBody(pkg.id));
      }
      const result = await next(args);
      if (firstCount) expect((await store.post(`/v1/app/order/${ids[1]}/approve`)).status).toBe(200);
      return result;
    };
    db.middlewareStack.add(middleware as never, { step: 'initialize', name: 'straddleFirstCount' });
    try {
      const page = await orderPage(store.storeId, { status: 'PENDING' }, 1, 5);
      // What the count saw: ids[1], ids[2] and the new order.
      expect(page.total).toBe(3);
    } finally {
      db.middlewareStack.remove('straddleFirstCount');
    }
    expect(straddled).toBe(true);
    // The count missed the approval (a move on a shard, not on the base: the shards' ConditionChecks saw it): storing it
    // would have left PENDING one too high for good.
    expect(await counterItem(store.storeId)).not.toHaveProperty('counted_PENDING');
    expect((await listTotals(store)).PENDING).toBe(2);
    expect(await counterItem(store.storeId)).toMatchObject({ counted_PENDING: true });
    expect(await summedCounts(store.storeId)).toMatchObject({ n_PENDING: 2 });
  });

  it('a first count counts an order whose approval still owes its count move under the owed status, so the settle leaves it exact', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 2);
    await db.send(new DeleteCommand({ TableName: TABLE, Key: listCounterKey(store.storeId, ORDER_COUNTER) }));
    await crashedApproval(store.storeId, ids[0]!);
    // Counted before the settle: the owed order is still PENDING for the counts.
    expect(await listTotals(store)).toEqual({ ALL: 2, PENDING: 2, APPROVED: 0, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
    expect((await store.post(`/v1/app/order/${ids[0]}/approve`)).status).toBe(200);
    expect(await listTotals(store)).toEqual({ ALL: 2, PENDING: 1, APPROVED: 1, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
  });

  it('refunds racing the approvals that finish a half-done approval move the counts once', async () => {
    const store = await newStore();
    const ids = await ordersOf(store, 8);
    for (const id of ids) await crashedApproval(store.storeId, id);
    const results = await Promise.all(
      ids.flatMap((id) => [store.post(`/v1/app/order/${id}/refund`), ...Array.from({ length: 3 }, () => store.post(`/v1/app/order/${id}/approve`))]),
    );
    // An approval that comes after the refund is a 409; every refund lands.
    for (const res of results) expect([200, 409], res.text).toContain(res.status);
    for (const id of ids) expect(await orderItem(store.storeId, id)).not.toHaveProperty('count_owed');
    expect(await listTotals(store)).toEqual({ ALL: 8, PENDING: 0, APPROVED: 0, CANCELED: 0, REFUNDED: 8, CHARGEBACK: 0 });
  });

  it('an order placed with 98 commands before the counts approves in two writes, the counts exact', async () => {
    const store = await newStore();
    const [id] = await ordersOf(store, 1, { commands: Array.from({ length: 97 }, (_, i) => ({ command: `say ${i}` })) });
    await makeLegacy98(store.storeId, id!);
    const res = await store.post(`/v1/app/order/${id}/approve`);
    expect(res.status, res.text).toBe(200);
    const item = await orderItem(store.storeId, id!);
    expect(item.command_ids).toHaveLength(98);
    expect(item).not.toHaveProperty('count_owed');
    expect(await listTotals(store)).toEqual({ ALL: 1, PENDING: 0, APPROVED: 1, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
  });

  it('an approval that died between its two writes is finished once by the next approval calls, racing', async () => {
    const store = await newStore();
    const [id] = await ordersOf(store, 1);
    await crashedApproval(store.storeId, id!);
    expect(await listTotals(store)).toMatchObject({ PENDING: 1, APPROVED: 0 });
    const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/order/${id}/approve`)));
    for (const res of results) expect(res.status).toBe(200);
    expect(await orderItem(store.storeId, id!)).not.toHaveProperty('count_owed');
    expect(await listTotals(store)).toEqual({ ALL: 1, PENDING: 0, APPROVED: 1, CANCELED: 0, REFUNDED: 0, CHARGEBACK: 0 });
  });

  it('a refund of an order whose approval died between its two writes moves the counts from where they were left', async () => {
    const store = await newStore();
    const [id] = await ordersOf(store, 1);
    await crashedApproval(store.storeId, id!);
    expect((await store.post(`/v1/app/order/${id}/refund`)).status).toBe(200);
    expect(await orderItem(store.storeId, id!)).not.toHaveProperty('count_owed');
    expect(await listTotals(store)).toEqual({ ALL: 1, PENDING: 0, APPROVED: 0, CANCELED: 0, REFUNDED: 1, CHARGEBACK: 0 });
    // Approving it now is a 409 and settles nothing twice.
    expect((await store.post(`/v1/app/order/${id}/approve`)).status).toBe(409);
    expect(await listTotals(store)).toEqual({ ALL: 1, PENDING: 0, APPROVED: 0, CANCELED: 0, REFUNDED: 1, CHARGEBACK: 0 });
  });
});

/** Gives a PENDING order a 98th command, as orders could be placed before the counts joined the approval. */
async function makeLegacy98(storeId: number, orderId: number): Promise<void> {
  const item = await orderItem(storeId, orderId);
  const deliveries = item.deliveries as Record<string, unknown>[];
  expect(deliveries).toHaveLength(97);
  await db.send(new PutCommand({ TableName: TABLE, Item: { ...item, deliveries: [...deliveries, { ...deliveries[96], command: 'say 97' }] } }));
}

/** The state the first write of a two-write approval leaves when the process dies before the second: APPROVED, counts still PENDING. */
async function crashedApproval(storeId: number, orderId: number): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: orderKey(storeId, orderId),
      UpdateExpression: 'SET #status = :approved, approved_at = :now, gsi2pk = :statusPk, count_owed = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':approved': 'APPROVED', ':now': new Date().toISOString(), ':statusPk': `STORE#${storeId}#ORDER#APPROVED`, ':pending': 'PENDING' },
    }),
  );
}
