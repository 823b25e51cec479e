import { describe, expect, it } from 'vitest';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /v1/app/category', () => {
  it('creates a category and answers 200 with it; ids are per store, from 1', async () => {
    const a = await newStore();
    const b = await newStore();
    const res = await a.post('/v1/app/category', { name: '  Ranks  ' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 1, store_id: a.storeId, name: 'Ranks', created_at: expect.stringMatching(ISO_Z), updated_at: res.body.created_at });
    expect((await a.get('/v1/app/category/1')).body).toEqual(res.body);
    expect((await a.post('/v1/app/category', { name: 'Kits' })).body.id).toBe(2);
    expect((await b.post('/v1/app/category', { name: 'Kits' })).body.id).toBe(1);
  });

  it.each([
    ['name missing', {}, 'name'],
    ['name blank', { name: '  ' }, 'name'],
    ['name too long', { name: 'x'.repeat(101) }, 'name'],
    ['name not a string', { name: 7 }, 'name'],
    ['unknown field', { name: 'x', id: 3 }, 'id'],
  ])('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/category', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/category')).body.meta.total).toBe(0);
  });

  it('rejects a body that is not an object with 400 and creates nothing', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/category', ['Ranks']);
    expect(res.status).toBe(400);
    expect(firstError(res).code).toBe('INVALID_BODY');
    expect((await store.get('/v1/app/category')).body.meta.total).toBe(0);
  });
});

describe('GET, PATCH, DELETE /v1/app/category', () => {
  it('lists in id order in page mode', async () => {
    const store = await newStore();
    for (const name of ['a', 'b', 'c']) await store.post('/v1/app/category', { name });
    const res = await store.get('/v1/app/category?page=2&limit=2');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['c']);
    expect(res.body.meta).toMatchObject({ total: 3, per_page: 2, current_page: 2, last_page: 2, next_page_url: null, previous_page_url: '/v1/app/category?page=1&limit=2' });
    expect((await store.get('/v1/app/category?limit=101')).status).toBe(422);
  });

  it('renames a category, moving updated_at, and rejects bad patches without change', async () => {
    const store = await newStore();
    const created = (await store.post('/v1/app/category', { name: 'Old' })).body;
    const res = await store.patch(`/v1/app/category/${created.id}`, { name: 'New' }, { headers: atTime(created.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'New', created_at: created.created_at });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(101) }, { store_id: 2 }]) {
      const bad = await store.patch(`/v1/app/category/${created.id}`, body);
      expect(bad.status).toBe(422);
      firstError(bad);
    }
    expect((await store.get(`/v1/app/category/${created.id}`)).body).toEqual(res.body);
    expect((await store.patch('/v1/app/category/99', { name: 'x' })).status).toBe(404);
  });

  it('deletes an unused category (204), after which it is 404', async () => {
    const store = await newStore();
    const created = (await store.post('/v1/app/category', { name: 'Gone' })).body;
    const res = await store.delete(`/v1/app/category/${created.id}`);
    expect(res.status).toBe(204);
    expect((await store.get(`/v1/app/category/${created.id}`)).status).toBe(404);
    const again = await store.delete(`/v1/app/category/${created.id}`);
    expect(again.status).toBe(404);
    expect(firstError(again).code).toBe('NOT_FOUND');
    expect((await store.get('/v1/app/category/abc')).status).toBe(404);
  });

  it('refuses (409) to delete a category that packages are in, saying so, until they leave it', async () => {
    const store = await newStore();
    const category = (await store.post('/v1/app/category', { name: 'Ranks' })).body;
    const one = (await store.post('/v1/app/package', { name: 'VIP', price: 10, category_id: category.id })).body;
    const two = (await store.post('/v1/app/package', { name: 'MVP', price: 20, category_id: category.id })).body;
    const res = await store.delete(`/v1/app/category/${category.id}`);
    expect(res.status).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('2 packages in it') });
    expect((await store.get(`/v1/app/category/${category.id}`)).status).toBe(200);

    expect((await store.patch(`/v1/app/package/${one.id}`, { category_id: null })).status).toBe(200);
    expect((await store.delete(`/v1/app/package/${two.id}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(204);
  });

  it('refuses (409) to delete a category a promo targets, saying so, until the promo is gone', async () => {
    const store = await newStore();
    const category = (await store.post('/v1/app/category', { name: 'Ranks' })).body;
    const promo = await store.post('/v1/app/promo', {
      name: 'Ranks sale',
      type: 'PROGRESSIVE',
      condition_mode: 'QUANTITY',
      starts_at: '2030-01-01T00:00:00Z',
      targets: [{ type: 'CATEGORY', id: category.id }],
      tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 10 }],
    });
    expect(promo.status).toBe(200);
    const res = await store.delete(`/v1/app/category/${category.id}`);
    expect(res.status).toBe(409);
    expect(firstError(res).message).toContain('1 promo targeting it');
    expect((await store.delete(`/v1/app/promo/${promo.body.id}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(204);
  });

  it('never leaves a package in a deleted category when the deletion races package creations', async () => {
    const store = await newStore();
    for (let round = 0; round < 8; round++) {
      const category = (await store.post('/v1/app/category', { name: `C${round}` })).body;
      const [created, deleted] = await Promise.all([
        store.post('/v1/app/package', { name: `P${round}`, price: 1, category_id: category.id }),
        store.delete(`/v1/app/category/${category.id}`),
      ]);
      const categoryNow = await store.get(`/v1/app/category/${category.id}`);
      if (created.status === 200) {
        expect(deleted.status).toBe(409);
        expect(categoryNow.status).toBe(200);
        expect((await store.get(`/v1/app/package/${created.body.id}`)).body.category_id).toBe(category.id);
      } else {
        expect(created.status).toBe(422);
        expect(firstError(created).field).toBe('category_id');
        expect(deleted.status).toBe(204);
        expect(categoryNow.status).toBe(404);
      }
    }
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's category, changes nothing, and refuses it as B's package category", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const category = (await a.post('/v1/app/category', { name: 'Mine' })).body;
    const get = await b.get(`/v1/app/category/${category.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/category/${category.id}`, { name: 'Stolen' })).status).toBe(404);
    expect((await b.delete(`/v1/app/category/${category.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/category')).body.data).toEqual([]);
    const pkg = await b.post('/v1/app/package', { name: 'X', price: 1, category_id: category.id });
    expect(pkg.status).toBe(422);
    expect(firstError(pkg).field).toBe('category_id');
    expect((await b.get('/v1/app/package')).body.meta.total).toBe(0);
    expect((await a.get(`/v1/app/category/${category.id}`)).body).toEqual(category);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('category endpoints', async () => {
    const store = await newStore();
    const calls = dynamoDbCalls;
    const created = await store.post('/v1/app/category', { name: 'C' });
    expect(calls(created)).toBe(3);
    expect(calls(await store.get(`/v1/app/category/${created.body.id}`))).toBe(2);
    // the list's counter (GetItem) and its page (Query with Limit), in parallel; the create and delete move the counter in their own write
    expect(calls(await store.get('/v1/app/category'))).toBe(3);
    expect(calls(await store.patch(`/v1/app/category/${created.body.id}`, { name: 'D' }))).toBe(2);
    expect(calls(await store.delete(`/v1/app/category/${created.body.id}`))).toBe(2);
  });
});
