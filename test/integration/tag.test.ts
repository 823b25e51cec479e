import { describe, expect, it } from 'vitest';
import { atTime, firstError, newStore } from '../support/client.ts';

describe('POST /v1/app/tag', () => {
  it('creates a tag with name and color and answers 200 with the Tag', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/tag', { name: 'VIP', color: '#ff8800' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      store_id: store.storeId,
      name: 'VIP',
      color: '#ff8800',
      apply_to_all_packages: false,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updated_at: res.body.created_at,
    });
    expect((await store.get(`/v1/app/tag/${res.body.id}`)).body).toEqual(res.body);
  });

  it('allocates ids per store, from 1', async () => {
    const a = await newStore();
    const b = await newStore();
    expect((await a.post('/v1/app/tag', { name: 'A1', color: 'red' })).body.id).toBe(1);
    expect((await a.post('/v1/app/tag', { name: 'A2', color: 'red' })).body.id).toBe(2);
    expect((await b.post('/v1/app/tag', { name: 'B1', color: 'red' })).body.id).toBe(1);
  });

  it('gives distinct ids to 20 parallel creations', async () => {
    const store = await newStore();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.post('/v1/app/tag', { name: `T${i}`, color: '#000' })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(20);
    expect((await store.get('/v1/app/tag?limit=100')).body.meta.total).toBe(20);
  });

  it.each([
    ['name missing', { color: '#fff' }, 'name'],
    ['color missing', { name: 'x' }, 'color'],
    ['name empty', { name: '   ', color: '#fff' }, 'name'],
    ['name too long', { name: 'x'.repeat(51), color: '#fff' }, 'name'],
    ['name not a string', { name: 5, color: '#fff' }, 'name'],
    ['color not a colour', { name: 'x', color: 'not a colour!' }, 'color'],
    ['color bad hex', { name: 'x', color: '#12345' }, 'color'],
    ['apply_to_all_packages not boolean', { name: 'x', color: '#fff', apply_to_all_packages: 'yes' }, 'apply_to_all_packages'],
    ['unknown field', { name: 'x', color: '#fff', store_id: 99 }, 'store_id'],
  ])('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/tag', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/tag')).body.meta.total).toBe(0);
  });

  it('rejects a body that is not JSON (400), not an object (400) or not JSON-typed (415)', async () => {
    const store = await newStore();
    const broken = await store.post('/v1/app/tag', undefined, { raw: '{"name": ', contentType: 'application/json' });
    expect(broken.status).toBe(400);
    expect(firstError(broken).code).toBe('INVALID_JSON');
    const array = await store.post('/v1/app/tag', [{ name: 'x', color: '#fff' }]);
    expect(array.status).toBe(400);
    expect(firstError(array).code).toBe('INVALID_BODY');
    const form = await store.post('/v1/app/tag', undefined, { raw: 'name=x&color=red', contentType: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(firstError(form).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await store.get('/v1/app/tag')).body.meta.total).toBe(0);
  });
});

describe('PATCH /v1/app/tag/{tag-id}', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const store = await newStore();
    const created = (await store.post('/v1/app/tag', { name: 'Old', color: '#111111' })).body;
    const res = await store.patch(`/v1/app/tag/${created.id}`, { color: '#222222' }, { headers: atTime(created.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'Old', color: '#222222', created_at: created.created_at });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    const renamed = await store.patch(`/v1/app/tag/${created.id}`, { name: 'New', apply_to_all_packages: true });
    expect(renamed.body).toMatchObject({ name: 'New', color: '#222222', apply_to_all_packages: true });
  });

  it('rejects an empty patch and invalid fields with 422, changing nothing', async () => {
    const store = await newStore();
    const created = (await store.post('/v1/app/tag', { name: 'Keep', color: '#111' })).body;
    for (const body of [{}, { name: '' }, { color: 'rgb(1,2,3)' }, { id: 5 }]) {
      const res = await store.patch(`/v1/app/tag/${created.id}`, body);
      expect(res.status).toBe(422);
      firstError(res);
    }
    expect((await store.get(`/v1/app/tag/${created.id}`)).body).toEqual(created);
  });

  it('answers 404 for a missing tag and for a non-numeric id', async () => {
    const store = await newStore();
    expect((await store.patch('/v1/app/tag/999', { name: 'x' })).status).toBe(404);
    const res = await store.patch('/v1/app/tag/abc', { name: 'x' });
    expect(res.status).toBe(404);
    expect(firstError(res).code).toBe('NOT_FOUND');
  });
});

describe('GET and DELETE /v1/app/tag', () => {
  it("lists in id order (the page meta is the page-mode family's, test/integration/families.test.ts)", async () => {
    const store = await newStore();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await store.post('/v1/app/tag', { name, color: '#abc' });
    const res = await store.get('/v1/app/tag?page=2&limit=2');
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['c', 'd']);
  });

  it('defaults to page 1 and limit 20, and rejects a bad page or limit', async () => {
    const store = await newStore();
    const res = await store.get('/v1/app/tag');
    expect(res.body.meta).toMatchObject({ per_page: 20, current_page: 1, last_page: 1, total: 0, previous_page_url: null, next_page_url: null });
    expect((await store.get('/v1/app/tag?page=abc')).status).toBe(400);
    expect((await store.get('/v1/app/tag?page=0')).status).toBe(422);
    expect((await store.get('/v1/app/tag?limit=101')).status).toBe(422);
  });

  it('deletes a tag (204), after which it is 404', async () => {
    const store = await newStore();
    const created = (await store.post('/v1/app/tag', { name: 'Gone', color: '#000' })).body;
    const res = await store.delete(`/v1/app/tag/${created.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await store.get(`/v1/app/tag/${created.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/tag/${created.id}`)).status).toBe(404);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's tag and changes nothing", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const tag = (await a.post('/v1/app/tag', { name: 'Mine', color: '#123456' })).body;
    const get = await b.get(`/v1/app/tag/${tag.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/tag/${tag.id}`, { name: 'Stolen' })).status).toBe(404);
    expect((await b.delete(`/v1/app/tag/${tag.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/tag')).body.data).toEqual([]);
    expect((await a.get(`/v1/app/tag/${tag.id}`)).body).toEqual(tag);
  });
});
