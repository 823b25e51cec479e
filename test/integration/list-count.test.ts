import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { listCounterKey, STORE_WIDE_LISTS } from '#lib/db/list-count.ts';
import { createCategory, createDiscount, createPackage, createTag, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, newStore } from '../support/client.ts';

/*
 * Page-mode totals kept as counters (lib/db/list-count.ts): the counter moves in the same
 * transaction as the item, a page reads its counter and its own items, and a list whose items
 * are older than its counter is counted once.
 */

/** The items of a store's list as the table holds them, counted directly (not through the counter). */
async function itemsInTable(storeId: number, prefix: string): Promise<number> {
  const result = await db.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `STORE#${storeId}`, ':prefix': prefix },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return result.Count ?? 0;
}

const counterOf = async (storeId: number, list: string) => (await db.send(new GetCommand({ TableName: TABLE, Key: listCounterKey(storeId, list), ConsistentRead: true }))).Item;

/** The data of a store's items as they were before counters existed: no counter item at all. */
const forgetCounter = (storeId: number, list: string) => db.send(new DeleteCommand({ TableName: TABLE, Key: listCounterKey(storeId, list) }));

async function total(store: Store, path: string): Promise<number> {
  const res = await store.get(`${path}?limit=1`);
  expect(res.status, res.text).toBe(200);
  return res.body.meta.total;
}

describe('list counters', () => {
  it('a new store starts every store-wide list counted at 0: its first page reads the counter and the page, never a count', async () => {
    const store = await newStore();
    for (const list of STORE_WIDE_LISTS) expect(await counterOf(store.storeId, list), list).toMatchObject({ n: 0, counted: true, store_id: store.storeId });
    const first = await store.get('/v1/app/tag');
    expect(first.body.meta.total).toBe(0);
    expect(dynamoDbCalls(first)).toBe(3);
  });

  it('20 parallel creates and 10 parallel deletes of tags, and of discounts, end with total equal to the items stored', async () => {
    const store = await newStore();
    const tags = await Promise.all(Array.from({ length: 20 }, (_, i) => createTag(store, { name: `t${i}` })));
    const discounts = await Promise.all(Array.from({ length: 20 }, (_, i) => createDiscount(store, { coupon: `RACE${i}` })));
    const results = await Promise.all([
      ...tags.slice(0, 10).map((tag) => store.delete(`/v1/app/tag/${tag.id}`)),
      // The same tag deleted twice at once: one 204, one 404, and the count moves once.
      ...tags.slice(0, 5).map((tag) => store.delete(`/v1/app/tag/${tag.id}`)),
      ...discounts.slice(0, 10).map((discount) => store.delete(`/v1/app/discount/${discount.id}`)),
      ...Array.from({ length: 10 }, (_, i) => store.post('/v1/app/tag', { name: `more${i}`, color: '#000' })),
    ]);
    expect(results.map((res) => res.status).sort()).toEqual([...Array(20).fill(204), ...Array(10).fill(200), ...Array(5).fill(404)].sort());
    expect(await itemsInTable(store.storeId, 'TAG#')).toBe(20);
    expect(await total(store, '/v1/app/tag')).toBe(20);
    expect(await itemsInTable(store.storeId, 'DISCOUNT#')).toBe(10);
    expect(await total(store, '/v1/app/discount')).toBe(10);
  });

  it('a refused create or delete moves no count (409 on a taken code, 409 on a category in use)', async () => {
    const store = await newStore();
    await createDiscount(store, { coupon: 'SAME' });
    expect((await store.post('/v1/app/discount', { coupon: 'same', type: 'VALUE', value: 1 })).status).toBe(409);
    expect(await total(store, '/v1/app/discount')).toBe(1);
    const category = await createCategory(store);
    await createPackage(store, { category_id: category.id });
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(409);
    expect(await total(store, '/v1/app/category')).toBe(1);
    expect((await store.delete('/v1/app/category/999999')).status).toBe(404);
    expect(await total(store, '/v1/app/category')).toBe(1);
  });

  it('cuts deep pages from the list itself: every page in id order, the last one short, past it empty', async () => {
    const store = await newStore();
    const ids: number[] = [];
    for (let i = 0; i < 23; i++) ids.push((await createTag(store, { name: `p${i}` })).id);
    const seen: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await store.get(`/v1/app/tag?page=${page}&limit=10`);
      expect(res.body.meta).toMatchObject({ total: 23, current_page: page, last_page: 3 });
      seen.push(...res.body.data.map((tag: { id: number }) => tag.id));
    }
    expect(seen).toEqual(ids);
    const past = await store.get('/v1/app/tag?page=4&limit=10');
    expect(past.body).toMatchObject({ data: [], meta: { total: 23, last_page: 3 } });
    // A page number whose skip passes DynamoDB's 32-bit Limit (found by the fuzz test: a 503 before).
    for (const path of ['/v1/app/tag?page=174815580052&limit=5', '/v1/app/package?page=872598092162&limit=14', '/v1/app/category?page=9007199254740991&limit=100']) {
      const far = await store.get(path);
      expect(far.status, path).toBe(200);
      expect(far.body.data, path).toEqual([]);
    }
  });

  it('counts once a list whose items are older than its counter, then reads the counter', async () => {
    const store = await newStore();
    for (let i = 0; i < 7; i++) await createTag(store, { name: `old${i}` });
    await forgetCounter(store.storeId, 'TAG');
    // Credential, counter (absent), the count, the counter written, the page.
    const first = await store.get('/v1/app/tag?limit=5');
    expect(first.body.meta.total).toBe(7);
    expect(first.body.data).toHaveLength(5);
    expect(dynamoDbCalls(first)).toBe(5);
    expect(await counterOf(store.storeId, 'TAG')).toMatchObject({ n: 7, counted: true });
    const second = await store.get('/v1/app/tag?limit=5');
    expect(second.body.meta.total).toBe(7);
    expect(dynamoDbCalls(second)).toBe(3);
  });

  it('a counter that only holds the moves made since counters exist is replaced by the count', async () => {
    const store = await newStore();
    for (let i = 0; i < 4; i++) await createTag(store, { name: `old${i}` });
    // Older data: 4 tags, then one create under the new code made the counter 1 (not counted).
    await db.send(new PutCommand({ TableName: TABLE, Item: { ...listCounterKey(store.storeId, 'TAG'), n: 1, store_id: store.storeId } }));
    expect(await total(store, '/v1/app/tag')).toBe(4);
    await createTag(store, { name: 'new' });
    expect(await total(store, '/v1/app/tag')).toBe(5);
    expect(await counterOf(store.storeId, 'TAG')).toMatchObject({ n: 5, counted: true });
  });

  it('the first count racing creates and deletes never stores a wrong total', async () => {
    const store = await newStore();
    const tags = await Promise.all(Array.from({ length: 10 }, (_, i) => createTag(store, { name: `o${i}` })));
    await forgetCounter(store.storeId, 'TAG');
    const lists = Array.from({ length: 10 }, () => store.get('/v1/app/tag'));
    const writes = [
      ...Array.from({ length: 10 }, (_, i) => store.post('/v1/app/tag', { name: `n${i}`, color: '#fff' })),
      ...tags.slice(0, 5).map((tag) => store.delete(`/v1/app/tag/${tag.id}`)),
    ];
    const answers = await Promise.all([...lists, ...writes]);
    for (const res of answers) expect(res.status, res.text).toBeLessThan(300);
    expect(await itemsInTable(store.storeId, 'TAG#')).toBe(15);
    expect(await total(store, '/v1/app/tag')).toBe(15);
    expect(await counterOf(store.storeId, 'TAG')).toMatchObject({ n: 15, counted: true });
  });

  it("keeps the storefront's counts as packages are enabled, disabled, moved and deleted, in parallel", async () => {
    const store = await newStore();
    const storefrontTotal = async (query = '') => (await call('GET', `/v1/webstore/package?limit=1${query}`, { headers: { 'x-store-domain': store.domain } })).body.meta.total;
    const [a, b] = [await createCategory(store, { name: 'A' }), await createCategory(store, { name: 'B' })];
    const packages = await Promise.all(Array.from({ length: 12 }, (_, i) => createPackage(store, { name: `p${i}`, category_id: a.id, enabled: i % 2 === 0 })));
    expect([await storefrontTotal(), await storefrontTotal(`&category_id=${a.id}`), await storefrontTotal(`&category_id=${b.id}`)]).toEqual([6, 6, 0]);
    const changes = await Promise.all([
      // 3 enabled ones move to B, 3 disabled ones are enabled in A, 2 enabled ones are deleted, 1 disabled is disabled again.
      ...[0, 2, 4].map((i) => store.patch(`/v1/app/package/${packages[i]!.id}`, { category_id: b.id })),
      ...[1, 3, 5].map((i) => store.patch(`/v1/app/package/${packages[i]!.id}`, { enabled: true })),
      ...[6, 8].map((i) => store.delete(`/v1/app/package/${packages[i]!.id}`)),
      store.patch(`/v1/app/package/${packages[7]!.id}`, { enabled: false }),
    ]);
    for (const res of changes) expect(res.status, res.text).toBeLessThan(300);
    // A: 10 (enabled), 1, 3, 5 (enabled now); B: 0, 2, 4.
    expect([await storefrontTotal(), await storefrontTotal(`&category_id=${a.id}`), await storefrontTotal(`&category_id=${b.id}`)]).toEqual([7, 4, 3]);
    expect(await total(store, '/v1/app/package')).toBe(10);
    const pageOfB = await call('GET', `/v1/webstore/package?category_id=${b.id}`, { headers: { 'x-store-domain': store.domain } });
    // Created in parallel: ids follow allocation, not the array; the page is in id order.
    expect(pageOfB.body.data.map((pkg: { id: number }) => pkg.id)).toEqual([0, 2, 4].map((i) => packages[i]!.id).sort((x, y) => x - y));
  });

  it("counts a category's storefront list once when its counter is older data (the table, not the lagging index)", async () => {
    const store = await newStore();
    const category = await createCategory(store);
    for (let i = 0; i < 3; i++) await createPackage(store, { name: `p${i}`, category_id: category.id });
    await createPackage(store, { name: 'off', category_id: category.id, enabled: false });
    await forgetCounter(store.storeId, `PACKAGE#ENABLED#CATEGORY#${category.id}`);
    await forgetCounter(store.storeId, 'PACKAGE#ENABLED');
    const storefrontTotal = async (query = '') => (await call('GET', `/v1/webstore/package${query}`, { headers: { 'x-store-domain': store.domain } })).body.meta.total;
    expect(await storefrontTotal(`?category_id=${category.id}`)).toBe(3);
    expect(await storefrontTotal()).toBe(3);
    expect(await counterOf(store.storeId, `PACKAGE#ENABLED#CATEGORY#${category.id}`)).toMatchObject({ n: 3, counted: true });
  });

  it("keeps each store's counters its own", async () => {
    const [one, two] = [await newStore(), await newStore()];
    for (let i = 0; i < 3; i++) await createTag(one, { name: `t${i}` });
    expect(await total(one, '/v1/app/tag')).toBe(3);
    expect(await total(two, '/v1/app/tag')).toBe(0);
  });
});
