import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCommands } from '#lib/admin/commands.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { storePk } from '#lib/db/keys.ts';
import { internalIdSk } from '#lib/db/order.ts';
import { createPackage, type CreatedOrder, type Store } from '../support/builders.ts';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/**
 * The order list's `email` (ignoring case) and `client_identifier` (exact) filters: what an
 * operator's bot needs to look a buyer up. Each is answered from an index partition of that
 * client's orders, in page and cursor mode, combined with the other filters; another store's
 * orders never appear.
 */
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (second: number) => new Date(T0 + second * 1000).toISOString();

type Seeded = { store: Store; other: Store; a: number; b: number; orders: CreatedOrder[]; otherOrder: CreatedOrder };
let seeded: Seeded;

async function place(store: Store, second: number, client: Record<string, string>, packageId: number) {
  const body = { client_name: 'Buyer', ...client, packages: [{ package_id: packageId, quantity: 1 }] };
  const res = await store.post('/v1/app/order', body, { headers: atTime(at(second)) });
  expect(res.status, res.text).toBe(200);
  return res.body as CreatedOrder;
}

/**
 * Store A: 1 Steve/steve@ (a), 2 Steve/Steve@Example.COM (b), 3 Alex/alex@ (a), 4 STEVE/steve@ (a),
 * 5 Steve/other@ (a), 6 Steve/steve@ (b); 1 and 6 approved. Store B: one Steve/steve@ order.
 */
beforeAll(async () => {
  const store = await newStore();
  const other = await newStore();
  const a = (await createPackage(store, { name: 'A' })).id;
  const b = (await createPackage(store, { name: 'B' })).id;
  const clients: [string, string, number][] = [
    ['Steve', 'steve@example.com', a],
    ['Steve', 'Steve@Example.COM', b],
    ['Alex', 'alex@example.com', a],
    ['STEVE', 'steve@example.com', a],
    ['Steve', 'other@example.com', a],
    ['Steve', 'steve@example.com', b],
  ];
  const orders: CreatedOrder[] = [];
  for (const [i, [client_identifier, client_email, pkg]] of clients.entries()) orders.push(await place(store, i + 1, { client_identifier, client_email }, pkg));
  for (const id of [1, 6]) expect((await store.post(`/v1/app/order/${id}/approve`)).status).toBe(200);
  const otherPackage = (await createPackage(other)).id;
  const otherOrder = await place(other, 3, { client_identifier: 'Steve', client_email: 'steve@example.com' }, otherPackage);
  seeded = { store, other, a, b, orders, otherOrder };
});

const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((order) => order.id);

async function page(store: Store, query: string) {
  const res = await store.get(`/v1/app/order?${query}`);
  expect(res.status, res.text).toBe(200);
  return res;
}

/** Every order of a filtered list, page by page in cursor mode. */
async function walk(store: Store, query: string, pageSize: number) {
  const seen: number[] = [];
  let cursor = '';
  for (let round = 0; round < 20; round++) {
    const res = await page(store, `page_cursor=${encodeURIComponent(cursor)}&page_size=${pageSize}&${query}`);
    seen.push(...ids(res));
    if (res.body.next_cursor === null) return seen;
    cursor = res.body.next_cursor;
  }
  throw new Error('cursor never ended');
}

/** The same list in page mode (all of it on one page) and in cursor mode at two page sizes. */
async function everyMode(query: string) {
  const { store } = seeded;
  const paged = await page(store, `limit=100&${query}`);
  expect(paged.body.meta.total).toBe(paged.body.data.length);
  const lists = [ids(paged), await walk(store, query, 1), await walk(store, query, 2)];
  expect(lists[1]).toEqual(lists[0]);
  expect(lists[2]).toEqual(lists[0]);
  return lists[0];
}

const steveEmail = `email=${encodeURIComponent('steve@example.com')}`;

describe('GET /v1/app/order?email=', () => {
  it("lists the client e-mail's orders only, ignoring case, newest first, in both modes", async () => {
    expect(await everyMode(steveEmail)).toEqual([6, 4, 2, 1]);
    expect(await everyMode(`email=${encodeURIComponent('STEVE@example.Com')}`)).toEqual([6, 4, 2, 1]);
    expect(await everyMode(`email=${encodeURIComponent(' alex@example.com ')}`)).toEqual([3]);
    expect(await everyMode(`email=${encodeURIComponent('nobody@example.com')}`)).toEqual([]);
  });

  it('pages with the full meta, keeping the filter in the URLs', async () => {
    const res = await page(seeded.store, `limit=2&${steveEmail}`);
    expect(ids(res)).toEqual([6, 4]);
    expect(res.body.meta).toMatchObject({ total: 4, last_page: 2, next_page_url: `/v1/app/order?page=2&limit=2&${steveEmail}` });
    expect(ids(await page(seeded.store, `page=2&limit=2&${steveEmail}`))).toEqual([2, 1]);
  });

  it('combines with status, package, from/to and client_identifier', async () => {
    const { a, b } = seeded;
    expect(await everyMode(`${steveEmail}&status=APPROVED`)).toEqual([6, 1]);
    expect(await everyMode(`${steveEmail}&status=PENDING`)).toEqual([4, 2]);
    expect(await everyMode(`${steveEmail}&package=${b}`)).toEqual([6, 2]);
    expect(await everyMode(`${steveEmail}&package=${a}&status=PENDING`)).toEqual([4]);
    expect(await everyMode(`${steveEmail}&from=${at(2)}&to=${at(4)}`)).toEqual([4, 2]);
    expect(await everyMode(`${steveEmail}&client_identifier=Steve`)).toEqual([6, 2, 1]);
    expect(await everyMode(`${steveEmail}&client_identifier=STEVE`)).toEqual([4]);
  });
});

describe('GET /v1/app/order?client_identifier=', () => {
  it("lists that identifier's orders only, exactly as written, newest first, in both modes", async () => {
    expect(await everyMode('client_identifier=Steve')).toEqual([6, 5, 2, 1]);
    expect(await everyMode('client_identifier=STEVE')).toEqual([4]);
    expect(await everyMode('client_identifier=steve')).toEqual([]);
    // Trimmed like the order's own field.
    expect(await everyMode('client_identifier=%20Alex%20')).toEqual([3]);
  });

  it('combines with status, package and from/to, in both modes', async () => {
    const { a, b } = seeded;
    expect(await everyMode('client_identifier=Steve&status=APPROVED')).toEqual([6, 1]);
    expect(await everyMode('client_identifier=Steve&status=PENDING')).toEqual([5, 2]);
    expect(await everyMode('client_identifier=Steve&status=CANCELED')).toEqual([]);
    expect(await everyMode(`client_identifier=Steve&package=${a}`)).toEqual([5, 1]);
    expect(await everyMode(`client_identifier=Steve&package=${b}&status=APPROVED`)).toEqual([6]);
    expect(await everyMode(`client_identifier=Steve&from=${at(2)}&to=${at(5)}`)).toEqual([5, 2]);
    expect(await everyMode(`client_identifier=Steve&from=${at(2)}`)).toEqual([6, 5, 2]);
    expect(await everyMode(`client_identifier=Steve&to=${at(5)}`)).toEqual([5, 2, 1]);
  });

  it('follows a status change (the status is read from the order, not the index)', async () => {
    const store = await newStore();
    const pkg = (await createPackage(store)).id;
    const order = await place(store, 1, { client_identifier: 'Kim', client_email: 'kim@example.com' }, pkg);
    expect(await walk(store, 'client_identifier=Kim&status=PENDING', 5)).toEqual([order.id]);
    expect((await store.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(200);
    expect(await walk(store, 'client_identifier=Kim&status=PENDING', 5)).toEqual([]);
    expect(ids(await page(store, 'client_identifier=Kim&status=CANCELED'))).toEqual([order.id]);
  });
});

describe('tenancy of the filters', () => {
  it("never shows another store's orders of the same client, in either store, in either mode", async () => {
    const { store, other, otherOrder } = seeded;
    for (const query of [steveEmail, 'client_identifier=Steve', `${steveEmail}&client_identifier=Steve`]) {
      const mine = await page(store, query);
      expect(mine.body.data.every((order: { store_id: number }) => order.store_id === store.storeId)).toBe(true);
      expect(await walk(other, query, 1)).toEqual([otherOrder.id]);
      expect(ids(await page(other, query))).toEqual([otherOrder.id]);
    }
  });

  it('binds a cursor to the filters it was issued for: another e-mail, identifier or store is a 400', async () => {
    const { store, other } = seeded;
    const cursorOf = async (query: string) => (await page(store, `page_cursor=&page_size=1&${query}`)).body.next_cursor as string;
    const byEmail = await cursorOf(steveEmail);
    const byClient = await cursorOf('client_identifier=Steve');
    const unfiltered = await cursorOf('');
    const refused = [
      [byEmail, 'email=alex@example.com'],
      [byEmail, 'client_identifier=Steve'],
      [byEmail, ''],
      [byClient, 'client_identifier=STEVE'],
      [byClient, steveEmail],
      [unfiltered, steveEmail],
      [unfiltered, 'client_identifier=Steve'],
    ];
    for (const [cursor, query] of refused) {
      const res = await store.get(`/v1/app/order?page_cursor=${encodeURIComponent(cursor!)}&${query}`);
      expect(res.status, query).toBe(400);
      expect(firstError(res)).toMatchObject({ code: 'INVALID_CURSOR', field: 'page_cursor' });
    }
    expect((await other.get(`/v1/app/order?page_cursor=${encodeURIComponent(byClient)}&client_identifier=Steve`)).status).toBe(400);
    // The same filters, the e-mail in another case, are the same list.
    expect(ids(await page(store, `page_cursor=${encodeURIComponent(byEmail)}&email=STEVE@EXAMPLE.COM`))).toEqual([4, 2, 1]);
  });
});

describe('bad filter values', () => {
  it.each([
    ['email=not-an-email', 422, 'email'],
    ['email=', 422, 'email'],
    [`email=${'a'.repeat(250)}@example.com`, 422, 'email'],
    ['client_identifier=', 422, 'client_identifier'],
    ['client_identifier=%20%20', 422, 'client_identifier'],
    [`client_identifier=${'x'.repeat(256)}`, 422, 'client_identifier'],
    ['email=a@example.com&email=b@example.com', 400, 'email'],
    ['client_identifier=Steve&client_identifier=Alex', 400, 'client_identifier'],
    ['client_id=Steve', 400, 'client_id'],
  ])('refuses %s with %i naming %s, in both modes', async (query, status, field) => {
    for (const mode of ['', 'page_cursor=&']) {
      const res = await seeded.store.get(`/v1/app/order?${mode}${query}`);
      expect(res.status, res.text).toBe(status);
      expect(firstError(res).field).toBe(field);
    }
  });
});

describe('DynamoDB calls of a filtered list', () => {
  it('email: the credential + one Query of the buyer partition; client_identifier: + one BatchGet of its orders', async () => {
    const { store } = seeded;
    expect(dynamoDbCalls(await page(store, `page_cursor=&page_size=2&${steveEmail}`))).toBe(2);
    expect(dynamoDbCalls(await page(store, steveEmail))).toBe(2);
    expect(dynamoDbCalls(await page(store, 'page_cursor=&page_size=2&client_identifier=Steve'))).toBe(3);
    expect(dynamoDbCalls(await page(store, 'client_identifier=Steve'))).toBe(3);
    // Checked after the read: still one batch for a client with fewer than 200 orders.
    expect(dynamoDbCalls(await page(store, 'page_cursor=&client_identifier=Steve&status=APPROVED'))).toBe(3);
  });
});

describe('orders written before the client_identifier index', () => {
  /** An order as the previous version wrote it: its internal_id sentinel has no client entry. */
  async function legacyOrder(store: Store, second: number, pkg: number) {
    const order = await place(store, second, { client_identifier: 'Old', client_email: 'old@example.com' }, pkg);
    await db.send(new UpdateCommand({ TableName: TABLE, Key: { pk: storePk(store.storeId), sk: internalIdSk(order.internal_id) }, UpdateExpression: 'REMOVE gsi3pk, gsi3sk' }));
    return order;
  }

  it('are found by e-mail at once, and by client_identifier once `order index-clients` has run; racing runs index each once', async () => {
    const store = await newStore();
    const pkg = (await createPackage(store)).id;
    const legacy = [await legacyOrder(store, 1, pkg), await legacyOrder(store, 2, pkg), await legacyOrder(store, 3, pkg)];
    const fresh = await place(store, 4, { client_identifier: 'Old', client_email: 'old@example.com' }, pkg);
    expect(ids(await page(store, 'email=old@example.com'))).toEqual([fresh.id, ...legacy.map((order) => order.id).reverse()]);
    expect(ids(await page(store, 'client_identifier=Old'))).toEqual([fresh.id]);

    const runs = (await Promise.all([1, 2, 3].map(() => adminCommands['order index-clients']!.run({ store: String(store.storeId) })))) as { orders: number; indexed: number }[];
    expect(runs.every((run) => run.orders === 4)).toBe(true);
    expect(runs.reduce((sum, run) => sum + run.indexed, 0)).toBe(3);
    expect(await walk(store, 'client_identifier=Old', 1)).toEqual([fresh.id, ...legacy.map((order) => order.id).reverse()]);
    expect((await adminCommands['order index-clients']!.run({ store: String(store.storeId) })) as object).toEqual({ store_id: store.storeId, orders: 4, indexed: 0 });
  });
});
