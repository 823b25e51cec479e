import { describe, expect, it } from 'vitest';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
type Store = Awaited<ReturnType<typeof newStore>>;

const createPackage = async (store: Store, body: Record<string, unknown>) => {
  const res = await store.post('/v1/app/package', { name: 'Package', price: 1, ...body });
  expect(res.status).toBe(200);
  return res.body;
};

describe('POST /v1/app/package', () => {
  it('creates a package with defaults and answers 200 with it', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/package', { name: 'VIP', price: 0, commands: [{ command: 'give {player} diamond 1' }] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 1,
      store_id: store.storeId,
      name: 'VIP',
      price: 0,
      category_id: null,
      parent_id: null,
      image: null,
      commands: [{ command: 'give {player} diamond 1', servers: null, stage: 'APPROVED', offline_execute: true, delay_seconds: 0 }],
      description: '',
      enabled: true,
      stock: null,
      per_customer_limit: null,
      tags: [],
      expiry_days: null,
      created_at: expect.stringMatching(ISO_Z),
      updated_at: res.body.created_at,
    });
    expect((await store.get('/v1/app/package/1')).body).toEqual(res.body);
    expect((await store.post('/v1/app/package', { name: 'MVP', price: 5 })).body).toMatchObject({ id: 2, commands: [] });
  });

  it('keeps a category, a parent and explicit command settings', async () => {
    const store = await newStore();
    const category = (await store.post('/v1/app/category', { name: 'Ranks' })).body;
    const parent = await createPackage(store, { name: 'Coins' });
    const res = await store.post('/v1/app/package', {
      name: '100 coins',
      price: 9.9,
      category_id: category.id,
      parent_id: parent.id,
      commands: [
        { command: 'eco give {player} 100', offline_execute: false, delay_seconds: 30 },
        { command: 'say thanks', delay_seconds: 0 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      category_id: category.id,
      parent_id: parent.id,
      commands: [
        { command: 'eco give {player} 100', offline_execute: false, delay_seconds: 30 },
        { command: 'say thanks', offline_execute: true, delay_seconds: 0 },
      ],
    });
  });

  it.each([
    ['name missing', { price: 1 }, 'name'],
    ['name too long', { name: 'x'.repeat(101), price: 1 }, 'name'],
    ['price missing', { name: 'x' }, 'price'],
    ['price negative', { name: 'x', price: -0.01 }, 'price'],
    ['price a string', { name: 'x', price: '10' }, 'price'],
    ['price beyond the amount range', { name: 'x', price: 1e200 }, 'price'],
    ['price too small to store', { name: 'x', price: 1e-200 }, 'price'],
    ['category_id zero', { name: 'x', price: 1, category_id: 0 }, 'category_id'],
    ['category_id fractional', { name: 'x', price: 1, category_id: 1.5 }, 'category_id'],
    ['category_id beyond a safe integer', { name: 'x', price: 1, category_id: 1e200 }, 'category_id'],
    ['parent_id a string', { name: 'x', price: 1, parent_id: '1' }, 'parent_id'],
    ['image on create', { name: 'x', price: 1, image: 'http://x/y.png' }, 'image'],
    ['commands not an array', { name: 'x', price: 1, commands: 'say hi' }, 'commands'],
    ['command text missing', { name: 'x', price: 1, commands: [{ offline_execute: true }] }, 'commands.0.command'],
    ['command text blank', { name: 'x', price: 1, commands: [{ command: ' ' }] }, 'commands.0.command'],
    ['offline_execute not boolean', { name: 'x', price: 1, commands: [{ command: 'a' }, { command: 'b', offline_execute: 'no' }] }, 'commands.1.offline_execute'],
    ['delay_seconds negative', { name: 'x', price: 1, commands: [{ command: 'a', delay_seconds: -1 }] }, 'commands.0.delay_seconds'],
    ['delay_seconds fractional', { name: 'x', price: 1, commands: [{ command: 'a', delay_seconds: 1.5 }] }, 'commands.0.delay_seconds'],
    ['unknown command field', { name: 'x', price: 1, commands: [{ command: 'a', when: 'now' }] }, 'commands.0.when'],
    ['unknown field', { name: 'x', price: 1, store_id: 9 }, 'store_id'],
  ])('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/package', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);
  });

  it('rejects a body that is not JSON or not an object with 400, and 1e999 (Infinity once parsed) with 422, creating nothing', async () => {
    const store = await newStore();
    expect((await store.post('/v1/app/package', undefined, { raw: '{"name":', contentType: 'application/json' })).status).toBe(400);
    expect((await store.post('/v1/app/package', [{ name: 'x', price: 1 }])).status).toBe(400);
    const infinite = await store.post('/v1/app/package', undefined, { raw: '{"name":"x","price":1e999}', contentType: 'application/json' });
    expect(infinite.status).toBe(422);
    expect(firstError(infinite).field).toBe('price');
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);
  });

  it('accepts the largest price', async () => {
    const store = await newStore();
    expect((await createPackage(store, { price: 1_000_000_000 })).price).toBe(1_000_000_000);
  });

  it('rejects a missing category or parent with 422 naming the field, and creates nothing', async () => {
    const store = await newStore();
    const noCategory = await store.post('/v1/app/package', { name: 'x', price: 1, category_id: 5 });
    expect(noCategory.status).toBe(422);
    expect(firstError(noCategory)).toMatchObject({ field: 'category_id', message: 'Category 5 does not exist in this store' });
    const noParent = await store.post('/v1/app/package', { name: 'x', price: 1, parent_id: 7 });
    expect(noParent.status).toBe(422);
    expect(firstError(noParent)).toMatchObject({ field: 'parent_id', message: 'Package 7 does not exist in this store' });
    const both = await store.post('/v1/app/package', { name: 'x', price: 1, category_id: 5, parent_id: 7 });
    expect(both.status).toBe(422);
    expect(both.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['category_id', 'parent_id']);
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);
  });

  it('refuses a variation as a parent (422) and creates nothing', async () => {
    const store = await newStore();
    const parent = await createPackage(store, { name: 'Coins' });
    const variation = await createPackage(store, { name: '100 coins', parent_id: parent.id });
    const res = await store.post('/v1/app/package', { name: 'nested', price: 1, parent_id: variation.id });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'parent_id', message: expect.stringContaining('is itself a variation') });
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(2);
  });
});

describe('PATCH /v1/app/package/{packageId}', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const store = await newStore();
    const created = await createPackage(store, { name: 'Old', price: 3, commands: [{ command: 'a' }] });
    const res = await store.patch(`/v1/app/package/${created.id}`, { price: 4.5, commands: [{ command: 'b', delay_seconds: 60 }] }, { headers: atTime(created.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...created,
      price: 4.5,
      commands: [{ command: 'b', servers: null, stage: 'APPROVED', offline_execute: true, delay_seconds: 60 }],
      updated_at: expect.stringMatching(ISO_Z),
    });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    expect((await store.get(`/v1/app/package/${created.id}`)).body).toEqual(res.body);
  });

  it('moves a package between categories, so only its current category is held', async () => {
    const store = await newStore();
    const first = (await store.post('/v1/app/category', { name: 'First' })).body;
    const second = (await store.post('/v1/app/category', { name: 'Second' })).body;
    const pkg = await createPackage(store, { category_id: first.id });
    const moved = await store.patch(`/v1/app/package/${pkg.id}`, { category_id: second.id, name: 'Moved' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ category_id: second.id, name: 'Moved' });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(moved.body);
    expect((await store.delete(`/v1/app/category/${second.id}`)).status).toBe(409);
    expect((await store.delete(`/v1/app/category/${first.id}`)).status).toBe(204);
  });

  it('rejects a missing category or parent with 422, changing nothing', async () => {
    const store = await newStore();
    const category = (await store.post('/v1/app/category', { name: 'C' })).body;
    const pkg = await createPackage(store, { category_id: category.id });
    const res = await store.patch(`/v1/app/package/${pkg.id}`, { category_id: 99, name: 'Renamed' });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'category_id' });
    const parent = await store.patch(`/v1/app/package/${pkg.id}`, { parent_id: 99 });
    expect(parent.status).toBe(422);
    expect(firstError(parent)).toMatchObject({ field: 'parent_id' });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(409);
  });

  it('keeps variations one level deep: no self parent, no variation as parent, no parent becoming a variation', async () => {
    const store = await newStore();
    const top = await createPackage(store, { name: 'Top' });
    const other = await createPackage(store, { name: 'Other' });
    const variation = await createPackage(store, { name: 'Var', parent_id: top.id });

    const self = await store.patch(`/v1/app/package/${top.id}`, { parent_id: top.id });
    expect(self.status).toBe(422);
    expect(firstError(self).field).toBe('parent_id');
    const underVariation = await store.patch(`/v1/app/package/${other.id}`, { parent_id: variation.id });
    expect(underVariation.status).toBe(422);
    expect(firstError(underVariation).message).toContain('is itself a variation');
    const parentBecomesVariation = await store.patch(`/v1/app/package/${top.id}`, { parent_id: other.id });
    expect(parentBecomesVariation.status).toBe(422);
    expect(firstError(parentBecomesVariation).message).toContain('has 1 variation');
    expect((await store.get(`/v1/app/package/${top.id}`)).body).toEqual(top);
    expect((await store.get(`/v1/app/package/${other.id}`)).body).toEqual(other);

    const moved = await store.patch(`/v1/app/package/${variation.id}`, { parent_id: other.id });
    expect(moved.status).toBe(200);
    expect(moved.body.parent_id).toBe(other.id);
    // Top has no variation left, so it may now become one, and Other may not be deleted.
    expect((await store.patch(`/v1/app/package/${top.id}`, { parent_id: other.id })).status).toBe(200);
    expect((await store.delete(`/v1/app/package/${other.id}`)).status).toBe(409);
  });

  it('sets image to null and refuses any other image value', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, {});
    const cleared = await store.patch(`/v1/app/package/${pkg.id}`, { image: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.image).toBeNull();
    const res = await store.patch(`/v1/app/package/${pkg.id}`, { image: 'http://evil.example/x.png' });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('image');
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();
  });

  it('rejects empty and invalid patches with 422, changing nothing, and answers 404 for a missing package', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { name: 'Keep', price: 2 });
    for (const body of [{}, { price: -1 }, { price: 1e200 }, { name: '' }, { commands: [{}] }, { id: 3 }, { category_id: 'x' }]) {
      const res = await store.patch(`/v1/app/package/${pkg.id}`, body);
      expect(res.status).toBe(422);
      firstError(res);
    }
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
    expect((await store.patch('/v1/app/package/999', { name: 'x' })).status).toBe(404);
    expect((await store.patch('/v1/app/package/999', { category_id: null })).status).toBe(404);
  });

  it('keeps category counts exact under concurrent category changes of one package', async () => {
    const store = await newStore();
    const categories = [];
    for (const name of ['A', 'B', 'C', 'D']) categories.push((await store.post('/v1/app/category', { name })).body);
    const pkg = await createPackage(store, { category_id: categories[0].id });
    const results = await Promise.all(categories.slice(1).map((c) => store.patch(`/v1/app/package/${pkg.id}`, { category_id: c.id })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const final = (await store.get(`/v1/app/package/${pkg.id}`)).body.category_id;
    for (const category of categories) {
      const res = await store.delete(`/v1/app/category/${category.id}`);
      expect(res.status).toBe(category.id === final ? 409 : 204);
    }
  });
});

describe('GET and DELETE /v1/app/package', () => {
  it('lists in id order in page mode', async () => {
    const store = await newStore();
    for (const name of ['a', 'b', 'c']) await createPackage(store, { name });
    const res = await store.get('/v1/app/package?limit=2');
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['a', 'b']);
    expect(res.body.meta).toMatchObject({ total: 3, per_page: 2, last_page: 2, next_page_url: '/v1/app/package?page=2&limit=2' });
    expect((await store.get('/v1/app/package?page=x')).status).toBe(400);
  });

  it('deletes a package (204), giving back its category, after which it is 404', async () => {
    const store = await newStore();
    const category = (await store.post('/v1/app/category', { name: 'C' })).body;
    const pkg = await createPackage(store, { category_id: category.id });
    expect((await store.delete(`/v1/app/package/${pkg.id}`)).status).toBe(204);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).status).toBe(404);
    const again = await store.delete(`/v1/app/package/${pkg.id}`);
    expect(again.status).toBe(404);
    expect(firstError(again).code).toBe('NOT_FOUND');
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(204);
  });

  it('refuses (409) to delete a package with variations, saying so, until they are gone', async () => {
    const store = await newStore();
    const parent = await createPackage(store, { name: 'Coins' });
    const variation = await createPackage(store, { name: '100', parent_id: parent.id });
    const res = await store.delete(`/v1/app/package/${parent.id}`);
    expect(res.status).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('1 variation') });
    expect((await store.get(`/v1/app/package/${parent.id}`)).body).toEqual(parent);
    expect((await store.delete(`/v1/app/package/${variation.id}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${parent.id}`)).status).toBe(204);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's package, changes nothing, and refuses it as B's parent", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const pkg = await createPackage(a, { name: 'Mine' });
    const get = await b.get(`/v1/app/package/${pkg.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/package/${pkg.id}`, { name: 'Stolen' })).status).toBe(404);
    expect((await b.patch(`/v1/app/package/${pkg.id}`, { category_id: null })).status).toBe(404);
    expect((await b.delete(`/v1/app/package/${pkg.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/package')).body.data).toEqual([]);
    const variation = await b.post('/v1/app/package', { name: 'X', price: 1, parent_id: pkg.id });
    expect(variation.status).toBe(422);
    expect(firstError(variation).field).toBe('parent_id');
    expect((await a.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('package endpoints', async () => {
    const store = await newStore();
    const calls = dynamoDbCalls;
    const category = (await store.post('/v1/app/category', { name: 'C' })).body;
    // the apply-all tag ids (no tag sent, none applied to all: no BatchGet) + sequence ADD + one
    // TransactWrite (the Put and the category's counts)
    const created = await store.post('/v1/app/package', { name: 'P', price: 1, category_id: category.id });
    expect(calls(created)).toBe(4);
    // every read shows the tags that exist: the package and the apply-all tag ids, in one BatchGet
    // (no tag to BatchGet)
    expect(calls(await store.get(`/v1/app/package/${created.body.id}`))).toBe(2);
    // the page (Query with Limit) and, in parallel, one BatchGet of the list's counter and the apply-all tag ids
    expect(calls(await store.get('/v1/app/package'))).toBe(3);
    expect(calls(await store.patch(`/v1/app/package/${created.body.id}`, { name: 'Q', tags: [], stock: 5 }))).toBe(3);
    // a reference change (or enabling) reads the package, then moves the counts in one transaction
    expect(calls(await store.patch(`/v1/app/package/${created.body.id}`, { category_id: null }))).toBe(4);
    expect(calls(await store.patch(`/v1/app/package/${created.body.id}`, { enabled: false }))).toBe(4);
    expect(calls(await store.delete(`/v1/app/package/${created.body.id}`))).toBe(3);
    expect(calls(await store.post('/v1/app/package', { name: 'P', price: -1 }))).toBe(1);
  });
});
