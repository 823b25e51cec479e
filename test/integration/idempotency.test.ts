import { describe, expect, it } from 'vitest';
import { buyerLogin } from '../support/buyer.ts';
import { createPackage, orderBody } from '../support/builders.ts';
import { atTime, call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/** Idempotency-Key on the POST routes of /v1/app and /v1/webstore (extensions section 12). */
const key = (label: string) => ({ 'idempotency-key': `${label}-${process.pid}-${Math.random().toString(36).slice(2)}` });

describe('Idempotency-Key', () => {
  it('10 concurrent requests with one key create one order; the others get the replay or a 409', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5 });
    const headers = key('order');
    const answers = await Promise.all(Array.from({ length: 10 }, () => store.post('/v1/app/order', orderBody(pkg.id), { headers })));
    const created = answers.filter((res) => res.status === 200 && res.headers['idempotent-replayed'] === undefined);
    const replayed = answers.filter((res) => res.status === 200 && res.headers['idempotent-replayed'] === 'true');
    const running = answers.filter((res) => res.status === 409);
    expect(created).toHaveLength(1);
    expect(replayed.length + running.length).toBe(9);
    for (const res of replayed) expect(res.body).toEqual(created[0]!.body);
    for (const res of running) expect(firstError(res).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    const orders = await store.get('/v1/app/order?page_cursor=&page_size=50');
    expect(orders.body.data).toHaveLength(1);
  });

  it('a repeat with the same key and the same JSON value (any key order) gets the first answer, replayed, with no new effect', async () => {
    const store = await newStore();
    const headers = key('tag');
    const first = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers });
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await call('POST', '/v1/app/tag', { token: store.token, raw: '{ "color": "#ef4444",\n "name": "Sale" }', headers });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await store.get('/v1/app/tag')).body.data).toHaveLength(1);
  });

  it('the same key with another body is 422 IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const store = await newStore();
    const headers = key('reuse');
    expect((await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers })).status).toBe(200);
    const other = await store.post('/v1/app/tag', { name: 'Other', color: '#ef4444' }, { headers });
    expect(other.status).toBe(422);
    expect(firstError(other)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', field: 'Idempotency-Key' });
    expect((await store.get('/v1/app/tag')).body.data.map((tag: { name: string }) => tag.name)).toEqual(['Sale']);
  });

  it('keeps a 4xx answer too: the repeat of a refused body is the same refusal, replayed', async () => {
    const store = await newStore();
    const headers = key('refused');
    const first = await store.post('/v1/app/tag', { name: '' }, { headers });
    expect(first.status).toBe(422);
    const again = await store.post('/v1/app/tag', { name: '' }, { headers });
    expect(again.status).toBe(422);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('refuses a key over 255 characters (400 in the envelope) and accepts 255; nothing is created by the refusal', async () => {
    const store = await newStore();
    const long = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(long.status).toBe(400);
    expect(firstError(long)).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY', field: 'Idempotency-Key' });
    expect((await store.get('/v1/app/tag')).body.data).toHaveLength(0);
    const max = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers: { 'idempotency-key': `${'k'.repeat(200)}${key('m')['idempotency-key']}`.slice(0, 255) } });
    expect(max.status).toBe(200);
  });

  it('scopes keys to the store and to the path: another store, or another path, runs its own request', async () => {
    const [a, b] = [await newStore(), await newStore()];
    const headers = key('scope');
    expect((await a.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers })).status).toBe(200);
    const otherStore = await b.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers });
    expect(otherStore.status).toBe(200);
    expect(otherStore.headers['idempotent-replayed']).toBeUndefined();
    expect((await b.get('/v1/app/tag')).body.data).toHaveLength(1);
    const otherPath = await a.post('/v1/app/category', { name: 'Sale' }, { headers });
    expect(otherPath.status).toBe(200);
    expect(otherPath.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps the answer 24 hours: after that the key runs a new request', async () => {
    const store = await newStore();
    const headers = key('expiry');
    const start = '2030-01-01T00:00:00.000Z';
    expect((await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers: { ...headers, ...atTime(start) } })).status).toBe(200);
    const within = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers: { ...headers, ...atTime(start, 23 * 3600_000) } });
    expect(within.headers['idempotent-replayed']).toBe('true');
    const after = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, { headers: { ...headers, ...atTime(start, 24 * 3600_000 + 1000) } });
    expect(after.status).toBe(200);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect((await store.get('/v1/app/tag')).body.data).toHaveLength(2);
  });

  it("works on the buyer routes, scoped to the buyer's store, and a replay carries CORS headers", async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const headers = { ...key('buyer'), 'x-store-domain': store.domain, origin: `https://${store.domain}` };
    const body = { ref_code: `ref${Date.now().toString(36)}` };
    const first = await call('POST', '/v1/webstore/affiliate/join', { token: buyer.token, json: body, headers });
    expect(first.status, first.text).toBe(200);
    const again = await call('POST', '/v1/webstore/affiliate/join', { token: buyer.token, json: body, headers });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['access-control-allow-origin']).toBe(`https://${store.domain}`);
    expect(again.body).toEqual(first.body);
  });

  it('a POST route with read access still writes its idempotency record (and nothing else)', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const headers = key('presign');
    const body = { content_type: 'image/png' };
    const first = await store.post(`/v1/app/package/${pkg.id}/image/upload`, body, { headers });
    expect(first.status, first.text).toBe(200);
    const again = await store.post(`/v1/app/package/${pkg.id}/image/upload`, body, { headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('costs 2 DynamoDB calls on a first POST (claim, keep) and answers a replay with 1 after the credential', async () => {
    const store = await newStore();
    const plain = await store.post('/v1/app/tag', { name: 'A', color: '#ef4444' });
    const headers = key('calls');
    const first = await store.post('/v1/app/tag', { name: 'B', color: '#ef4444' }, { headers });
    expect(dynamoDbCalls(first)).toBe(dynamoDbCalls(plain) + 2);
    const replay = await store.post('/v1/app/tag', { name: 'B', color: '#ef4444' }, { headers });
    expect(dynamoDbCalls(replay)).toBe(2);
  });
});
