import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { packageKey } from '#lib/db/package.ts';
import { firstError, newStore } from '../support/client.ts';

/** The catalog fields of extensions section 8 on the operator's package routes. */
type Store = Awaited<ReturnType<typeof newStore>>;

const createPackage = async (store: Store, body: Record<string, unknown> = {}) => {
  const res = await store.post('/v1/app/package', { name: 'Package', price: 1, ...body });
  expect(res.status).toBe(200);
  return res.body;
};
const createTag = async (store: Store, body: Record<string, unknown> = {}) => {
  const res = await store.post('/v1/app/tag', { name: 'Tag', color: '#fff', ...body });
  expect(res.status).toBe(200);
  return res.body;
};

describe('package catalog fields', () => {
  it('stores every field on create and shows it on GET', async () => {
    const store = await newStore();
    const sale = await createTag(store, { name: 'Sale' });
    const pkg = await createPackage(store, {
      description: '  Rank with perks  ',
      enabled: false,
      stock: 3,
      per_customer_limit: 1,
      tags: [sale.id, sale.id],
      expiry_days: 30,
    });
    expect(pkg).toMatchObject({ description: 'Rank with perks', enabled: false, stock: 3, per_customer_limit: 1, tags: [sale.id], expiry_days: 30 });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
  });

  it('accepts the bounds: 5,000 characters of 3-byte text (15,000 bytes), stock 0, expiry_days 1 and 3650', async () => {
    const store = await newStore();
    const description = '€'.repeat(5000);
    const pkg = await createPackage(store, { description, stock: 0, expiry_days: 3650 });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toMatchObject({ description, stock: 0, expiry_days: 3650 });
    expect((await createPackage(store, { expiry_days: 1 })).expiry_days).toBe(1);
  });

  it('changes the fields with PATCH, null included, and keeps the others', async () => {
    const store = await newStore();
    const tag = await createTag(store);
    const pkg = await createPackage(store, { stock: 5, per_customer_limit: 2, expiry_days: 7, tags: [tag.id] });
    const res = await store.patch(`/v1/app/package/${pkg.id}`, { stock: null, per_customer_limit: null, expiry_days: null, description: 'New', tags: [] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stock: null, per_customer_limit: null, expiry_days: null, description: 'New', tags: [], enabled: true, name: 'Package' });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(res.body);
  });

  it.each([
    ['description too long', { description: 'x'.repeat(5001) }, 'description'],
    ['description not a string', { description: 5 }, 'description'],
    ['enabled not a boolean', { enabled: 'yes' }, 'enabled'],
    ['stock negative', { stock: -1 }, 'stock'],
    ['stock fractional', { stock: 1.5 }, 'stock'],
    ['stock a string', { stock: '3' }, 'stock'],
    ['stock beyond a safe integer', { stock: 1e200 }, 'stock'],
    ['per_customer_limit zero', { per_customer_limit: 0 }, 'per_customer_limit'],
    ['expiry_days zero', { expiry_days: 0 }, 'expiry_days'],
    ['expiry_days over 3650', { expiry_days: 3651 }, 'expiry_days'],
    ['tags not an array', { tags: 1 }, 'tags'],
    ['a tag id not a number', { tags: ['1'] }, 'tags.0'],
    ['too many tags', { tags: Array.from({ length: 51 }, (_, i) => i + 1) }, 'tags'],
  ])('rejects %s with 422 naming the field, on create and on PATCH, changing nothing', async (_case, fields, field) => {
    const store = await newStore();
    const created = await store.post('/v1/app/package', { name: 'x', price: 1, ...fields });
    expect(created.status).toBe(422);
    expect(firstError(created)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);
    const pkg = await createPackage(store);
    const patched = await store.patch(`/v1/app/package/${pkg.id}`, fields);
    expect(patched.status).toBe(422);
    expect(firstError(patched).field).toBe(field);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
  });

  it('reads a package written before these fields existed as the defaults', async () => {
    const store = await newStore();
    const now = new Date().toISOString();
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          ...packageKey(store.storeId, 77),
          entity: 'PACKAGE',
          id: 77,
          store_id: store.storeId,
          name: 'Old',
          price: 2,
          category_id: null,
          parent_id: null,
          image: null,
          commands: [],
          created_at: now,
          updated_at: now,
        },
      }),
    );
    expect((await store.get('/v1/app/package/77')).body).toMatchObject({ description: '', enabled: true, stock: null, per_customer_limit: null, tags: [], expiry_days: null });
  });

  it('stores stock as a plain number, so an order can take units with a conditional ADD', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { stock: 2 });
    const key = packageKey(store.storeId, pkg.id);
    const take = (n: number) =>
      db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: key,
          UpdateExpression: 'ADD stock :minus',
          ConditionExpression: 'stock >= :n',
          ExpressionAttributeValues: { ':minus': -n, ':n': n },
        }),
      );
    await take(2);
    await expect(take(1)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await db.send(new GetCommand({ TableName: TABLE, Key: key }))).Item?.stock).toBe(0);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(0);
  });
});

describe('package tags', () => {
  it('refuses a missing or foreign tag id with 422 naming its position, changing nothing', async () => {
    const store = await newStore();
    const other = await newStore();
    const mine = await createTag(store);
    const foreign = await createTag(other);
    const created = await store.post('/v1/app/package', { name: 'x', price: 1, tags: [mine.id, 999, foreign.id + 1000] });
    expect(created.status).toBe(422);
    expect(created.body.errors.map((e: { field: string }) => e.field)).toEqual(['tags.1', 'tags.2']);
    expect(firstError(created).message).toBe('Tag 999 does not exist in this store');
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);

    const pkg = await createPackage(store, { tags: [mine.id] });
    const foreignOnly = await other.post('/v1/app/tag', { name: 'Only there', color: '#000' });
    const patched = await store.patch(`/v1/app/package/${pkg.id}`, { tags: [foreignOnly.body.id] });
    expect(patched.status).toBe(422);
    expect(firstError(patched).field).toBe('tags.0');
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual([mine.id]);
  });

  it('shows every tag applied to all packages, on every package, and follows the tag when that changes', async () => {
    const store = await newStore();
    const everywhere = await createTag(store, { name: 'All', apply_to_all_packages: true });
    const own = await createTag(store, { name: 'Own' });
    const tagged = await createPackage(store, { tags: [own.id] });
    const plain = await createPackage(store);
    expect(tagged.tags).toEqual([everywhere.id, own.id]);
    expect(plain.tags).toEqual([everywhere.id]);
    expect((await store.patch(`/v1/app/tag/${everywhere.id}`, { apply_to_all_packages: false })).status).toBe(200);
    expect((await store.get('/v1/app/package')).body.data.map((p: { tags: number[] }) => p.tags)).toEqual([[own.id], []]);
  });

  it('removes a deleted tag from the packages that carry it', async () => {
    const store = await newStore();
    const keep = await createTag(store, { name: 'Keep' });
    const gone = await createTag(store, { name: 'Gone' });
    const pkg = await createPackage(store, { tags: [gone.id, keep.id] });
    expect(pkg.tags).toEqual([keep.id, gone.id]);
    expect((await store.delete(`/v1/app/tag/${gone.id}`)).status).toBe(204);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual([keep.id]);
    // a new tag never takes the deleted one's id, so it cannot reappear on the package
    const next = await createTag(store, { name: 'Next' });
    expect(next.id).not.toBe(gone.id);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.tags).toEqual([keep.id]);
  });
});
