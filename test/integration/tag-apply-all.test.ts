import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { applyAllKey } from '#lib/db/tag.ts';
import { createPackage, createTag } from '../support/builders.ts';
import { call, dynamoDbCalls, newStore } from '../support/client.ts';

/**
 * Package reads read the tags they show (lib/db/tag.ts): the apply-all tag ids from one item moved
 * by the tags' own transactions, then one BatchGet; never every tag of the store.
 */

const applyAllItem = async (storeId: number) => (await db.send(new GetCommand({ TableName: TABLE, Key: applyAllKey(storeId), ConsistentRead: true }))).Item;
const idsOf = (item: Record<string, unknown> | undefined) => [...((item?.ids as Set<number> | undefined) ?? [])].map(Number).sort((a, b) => a - b);
const storefront = (domain: string, path: string) => call('GET', path, { headers: { 'x-store-domain': domain } });

describe('apply-all tag ids', () => {
  it('a new store starts them derived and empty; create, update and delete of a flagged tag move them', async () => {
    const store = await newStore();
    expect(await applyAllItem(store.storeId)).toMatchObject({ derived: true, store_id: store.storeId });
    const all = await createTag(store, { name: 'All', apply_to_all_packages: true });
    const plain = await createTag(store, { name: 'Plain' });
    expect(idsOf(await applyAllItem(store.storeId))).toEqual([all.id]);
    expect((await store.patch(`/v1/app/tag/${plain.id}`, { apply_to_all_packages: true })).body).toMatchObject({ id: plain.id, name: 'Plain', apply_to_all_packages: true });
    expect(idsOf(await applyAllItem(store.storeId))).toEqual([all.id, plain.id]);
    expect((await store.patch(`/v1/app/tag/${all.id}`, { apply_to_all_packages: false, name: 'Was all' })).body).toMatchObject({ name: 'Was all', apply_to_all_packages: false });
    expect(idsOf(await applyAllItem(store.storeId))).toEqual([plain.id]);
    expect((await store.delete(`/v1/app/tag/${plain.id}`)).status).toBe(204);
    expect(idsOf(await applyAllItem(store.storeId))).toEqual([]);
    // A missing tag: 404, and the ids do not move.
    const missing = await store.patch('/v1/app/tag/999999', { apply_to_all_packages: true });
    expect(missing.status).toBe(404);
    expect(idsOf(await applyAllItem(store.storeId))).toEqual([]);
  });

  it('a store older than them (no item, or ADDs without the derived mark) derives them once on its first package read', async () => {
    for (const before of ['absent', 'partial'] as const) {
      const store = await newStore();
      const old = await createTag(store, { name: 'Old all', apply_to_all_packages: true });
      const kept = await createTag(store, { name: 'Kept' });
      const pkg = await createPackage(store, { tags: [kept.id] });
      await db.send(new DeleteCommand({ TableName: TABLE, Key: applyAllKey(store.storeId) }));
      let fresh: { id: number } | undefined;
      if (before === 'partial') {
        // Older data, then a flagged tag created by the new code: its ADD made an item without `derived`.
        fresh = await createTag(store, { name: 'New all', apply_to_all_packages: true });
        expect(await applyAllItem(store.storeId)).not.toHaveProperty('derived');
      }
      const expected = [kept.id, old.id, ...(fresh ? [fresh.id] : [])].sort((a, b) => a - b);
      const first = await store.get(`/v1/app/package/${pkg.id}`);
      expect(first.body.tags, before).toEqual(expected);
      // The credential, one BatchGet of the package and the ids, the Query of the tags and the derived write, the BatchGet.
      expect(dynamoDbCalls(first), before).toBe(5);
      expect(await applyAllItem(store.storeId), before).toMatchObject({ derived: true });
      expect(idsOf(await applyAllItem(store.storeId)), before).toEqual([old.id, ...(fresh ? [fresh.id] : [])]);
      const again = await store.get(`/v1/app/package/${pkg.id}`);
      expect(again.body.tags, before).toEqual(expected);
      expect(dynamoDbCalls(again), before).toBe(3);
      // The storefront's one-package read (access read) may derive them too.
      await db.send(new DeleteCommand({ TableName: TABLE, Key: applyAllKey(store.storeId) }));
      const shown = await storefront(store.domain, `/v1/webstore/package/${pkg.id}`);
      expect(shown.status, shown.text).toBe(200);
      expect(
        shown.body.tags.map((tag: { id: number }) => tag.id),
        before,
      ).toEqual(expected);
      expect(await applyAllItem(store.storeId), before).toMatchObject({ derived: true });
    }
  });

  it('an id the set holds for a tag no longer flagged or deleted shows nothing', async () => {
    const store = await newStore();
    const tag = await createTag(store, { name: 'T' });
    const pkg = await createPackage(store);
    await db.send(
      new UpdateCommand({ TableName: TABLE, Key: applyAllKey(store.storeId), UpdateExpression: 'ADD ids :ids', ExpressionAttributeValues: { ':ids': new Set([tag.id, 999999]) } }),
    );
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual([]);
    expect((await store.get('/v1/app/package')).body.data[0].tags).toEqual([]);
  });

  it('30 parallel creates and updates toggling apply_to_all_packages end with the ids equal to the flagged tags, and every package showing them', async () => {
    const store = await newStore();
    const tags = await Promise.all(Array.from({ length: 10 }, (_, i) => createTag(store, { name: `t${i}` })));
    const pkg = await createPackage(store);
    const results = await Promise.all([
      ...tags.flatMap((tag, i) => [
        store.patch(`/v1/app/tag/${tag.id}`, { apply_to_all_packages: true }),
        store.patch(`/v1/app/tag/${tag.id}`, { apply_to_all_packages: i % 2 === 0 }),
      ]),
      ...Array.from({ length: 10 }, (_, i) => store.post('/v1/app/tag', { name: `new${i}`, color: '#000', apply_to_all_packages: i % 3 === 0 })),
    ]);
    expect(results.map((res) => res.status)).toEqual(Array(30).fill(200));
    const everyTag = [];
    for (let page = 1; ; page++) {
      const res = await store.get(`/v1/app/tag?limit=100&page=${page}`);
      everyTag.push(...res.body.data);
      if (res.body.data.length < 100) break;
    }
    expect(everyTag).toHaveLength(20);
    const flagged = everyTag
      .filter((tag: { apply_to_all_packages: boolean }) => tag.apply_to_all_packages)
      .map((tag: { id: number }) => tag.id)
      .sort((a: number, b: number) => a - b);
    expect(idsOf(await applyAllItem(store.storeId))).toEqual(flagged);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual(flagged);
  });

  it('a package read reads the ids it shows, whatever the store holds (120 tags), and sent tags are checked by id', async () => {
    const store = await newStore();
    const few = await createPackage(store);
    const bare = await store.get(`/v1/app/package/${few.id}`);
    // No tag anywhere: the credential, one BatchGet of the package and the apply-all ids, nothing more.
    expect(dynamoDbCalls(bare)).toBe(2);
    const tags = [];
    for (let i = 0; i < 120; i += 20) tags.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => createTag(store, { name: `t${i + j}` })))));
    const pkg = await createPackage(store, { tags: [tags[5]!.id, tags[110]!.id] });
    const read = await store.get(`/v1/app/package/${pkg.id}`);
    expect(read.body.tags).toEqual([tags[5]!.id, tags[110]!.id]);
    expect(dynamoDbCalls(read)).toBe(3);
    const page = await store.get('/v1/app/package');
    // The credential; the page Query and one BatchGet (counter, apply-all ids) in parallel, then one BatchGet of the tags.
    expect(dynamoDbCalls(page)).toBe(4);
    const bad = await store.patch(`/v1/app/package/${pkg.id}`, { tags: [tags[0]!.id, 999999] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'tags.1' })]);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual([tags[5]!.id, tags[110]!.id]);
  });
});
