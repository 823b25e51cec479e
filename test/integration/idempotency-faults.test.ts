import { describe, expect, it } from 'vitest';
import { createPackage, orderBody, type Store } from '../support/builders.ts';
import { atTime, call, firstError, newStore } from '../support/client.ts';

/**
 * Idempotency-Key under DynamoDB faults (issue 28), through the local stack against DynamoDB
 * Local: `x-local-dynamodb-fault` (infra/local/dynamodb-faults.ts) loses the answer of a call that
 * landed, fails or throttles the attempts it names, inside the SDK's retry loop (3 attempts).
 * Every POST here carries a fresh key; "the retry" is the careful client's: the same key and body, faults off.
 */
const freshKey = (label: string) => `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`;
const faulted = (fault: string, key: string, extra: Record<string, string> = {}) => ({ headers: { 'idempotency-key': key, 'x-local-dynamodb-fault': fault, ...extra } });
const keyed = (key: string, extra: Record<string, string> = {}) => ({ headers: { 'idempotency-key': key, ...extra } });
const tagNames = async (store: Store) => ((await store.get('/v1/app/tag')).body.data as { name: string }[]).map((tag) => tag.name);
const orderTotal = async (store: Store) => (await store.get('/v1/app/order')).body.meta.total as number;
const expect503 = (res: Awaited<ReturnType<typeof call<{ request_id?: string }>>>) => {
  expect(res.status, res.text).toBe(503);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(firstError(res).code).toBe('UNAVAILABLE');
  expect(res.body.request_id).toBeTruthy();
};

describe('Idempotency-Key under DynamoDB faults', () => {
  it("the claim's answer lost and the SDK's retry of it: the request goes on as the owner (no 409), once", async () => {
    const store = await newStore();
    const key = freshKey('claim');
    // Calls: the credential (GetItem), then the claim: the request's first UpdateItem.
    const res = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, faulted('lose-answer:UpdateItem:1', key));
    expect(res.status, res.text).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const again = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, keyed(key));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(res.body);
    expect(await tagNames(store)).toEqual(['Sale']);
  });

  it("the claim's answer lost on every attempt: 503, the claim let go, and the retry runs at once (not 409 for 30 s)", async () => {
    const store = await newStore();
    const key = freshKey('claim-lost');
    const failed = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, faulted('lose-answer:UpdateItem:1-3', key));
    expect503(failed);
    expect(failed.headers['retry-after']).toBe('1');
    const retried = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(await tagNames(store)).toEqual(['Sale']);
  });

  it("the claim lands with its answer lost, then the SDK's retries are throttled: 503, the claim let go, and the retry runs at once (not 409 for 30 s)", async () => {
    const store = await newStore();
    const key = freshKey('claim-lost-throttled');
    // The last attempt's error (a throttle) says nothing of the first, which landed.
    const failed = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, faulted('lose-answer:UpdateItem:1,throttle:UpdateItem:2-3', key));
    expect503(failed);
    expect(failed.headers['retry-after']).toBe('1');
    const retried = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(await tagNames(store)).toEqual(['Sale']);
  });

  it('an approval applied whose answer is lost on every attempt: the retry runs again and answers the approved order, its commands queued once', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5, commands: [{ command: 'give {client_identifier} vip' }] });
    const order = (await store.post('/v1/app/order', orderBody(pkg.id))).body as { id: number };
    const key = freshKey('approve');
    expect503(await store.post(`/v1/app/order/${order.id}/approve`, {}, faulted('lose-answer:TransactWriteItems:1-3', key)));
    const retried = await store.post(`/v1/app/order/${order.id}/approve`, {}, keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.status).toBe('APPROVED');
    expect((await store.get(`/v1/app/order/${order.id}/command`)).body).toHaveLength(1);
  });

  it('an order written whose answer is lost on every attempt: 503, and the retry answers that very order, never a second one', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5, stock: 1 });
    const key = freshKey('order');
    const failed = await store.post('/v1/app/order', orderBody(pkg.id), faulted('lose-answer:TransactWriteItems:1-3', key));
    expect503(failed);
    expect(await orderTotal(store)).toBe(1);
    const retried = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key));
    expect(retried.status, retried.text).toBe(200);
    const orders = (await store.get('/v1/app/order')).body.data as { id: number }[];
    expect(orders.map((order) => order.id)).toEqual([retried.body.id]);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(0);
    // And that answer is the one kept from now on.
    const replay = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(retried.body);
  });

  it('a guest checkout of the last unit told 503 after its order landed gets its order on the retry, not 422 OUT_OF_STOCK', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5, stock: 1 });
    const key = freshKey('checkout');
    const body = { cart: [{ package_id: pkg.id, quantity: 1 }], client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
    const send = (extra: Record<string, string>) =>
      call('POST', '/v1/webstore/checkout', { json: body, headers: { 'x-store-domain': store.domain, 'idempotency-key': key, ...extra } });
    expect503(await send({ 'x-local-dynamodb-fault': 'lose-answer:TransactWriteItems:1-3' }));
    const retried = await send({});
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.order_id).toEqual(expect.any(String));
    expect(await orderTotal(store)).toBe(1);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.stock).toBe(0);
  });

  it('an order whose transaction was throttled on every attempt wrote nothing: the key is released and the retry places it', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5 });
    const key = freshKey('throttled');
    expect503(await store.post('/v1/app/order', orderBody(pkg.id), faulted('throttle:TransactWriteItems:1-3', key)));
    expect(await orderTotal(store)).toBe(0);
    const retried = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(await orderTotal(store)).toBe(1);
  });

  it('a creation refused outright (throttled) wrote nothing: released, the retry runs and creates it once', async () => {
    const store = await newStore();
    const key = freshKey('tag-throttled');
    expect503(await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, faulted('throttle:TransactWriteItems:1-3', key)));
    expect(await tagNames(store)).toEqual([]);
    expect((await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, keyed(key))).status).toBe(200);
    expect(await tagNames(store)).toEqual(['Sale']);
  });

  it('a creation that may have landed (a 500 from DynamoDB) records it with the key: the injected 500 wrote nothing, so the key is released and the retry creates it once', async () => {
    const store = await newStore();
    const key = freshKey('tag-500');
    expect503(await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, faulted('fail:TransactWriteItems:1-3', key)));
    expect(await tagNames(store)).toEqual([]);
    const retried = await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }, keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await tagNames(store)).toEqual(['Sale']);
  });

  it('a write that may have landed (a 500 from DynamoDB) on a route that cannot answer it again (a delivery key, shown once, kept only hashed) is never run again: the retry is 409 IDEMPOTENCY_ANSWER_LOST, kept', async () => {
    const store = await newStore();
    const server = (await store.post('/v1/app/server', { name: 'Survival' })).body as { id: number };
    const key = freshKey('server-key-500');
    expect503(await store.post(`/v1/app/server/${server.id}/key`, {}, faulted('fail:TransactWriteItems:1-3', key)));
    const retried = await store.post(`/v1/app/server/${server.id}/key`, {}, keyed(key));
    expect(retried.status, retried.text).toBe(409);
    expect(firstError(retried).code).toBe('IDEMPOTENCY_ANSWER_LOST');
    const again = await store.post(`/v1/app/server/${server.id}/key`, {}, keyed(key));
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('keeping the answer fails after the order was placed: 503 with Retry-After: 1 in the envelope (never a 502), and the retry answers that order', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5 });
    const key = freshKey('keep');
    // UpdateItem 1 is the claim, 2 the order's id; keeping the answer is 3 (3 attempts). The settle that follows works.
    const failed = await store.post('/v1/app/order', orderBody(pkg.id), faulted('fail:UpdateItem:3-5', key));
    expect503(failed);
    expect(failed.headers['retry-after']).toBe('1');
    expect(await orderTotal(store)).toBe(1);
    const retried = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key));
    expect(retried.status, retried.text).toBe(200);
    expect(await orderTotal(store)).toBe(1);
  });

  it('keeping and settling both fail: 503 with Retry-After until the claim may be taken over; within it 409 IN_USE, after it the order', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5 });
    const key = freshKey('keep-settle');
    const start = '2031-01-01T00:00:00.000Z';
    const failed = await store.post('/v1/app/order', orderBody(pkg.id), faulted('fail:UpdateItem:3-8,fail:DeleteItem:1-3', key, atTime(start)));
    expect503(failed);
    expect(Number(failed.headers['retry-after'])).toBeGreaterThan(1);
    expect(await orderTotal(store)).toBe(1);
    const early = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key, atTime(start, 2000)));
    expect(early.status).toBe(409);
    expect(firstError(early).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    const later = await store.post('/v1/app/order', orderBody(pkg.id), keyed(key, atTime(start, 31_000)));
    expect(later.status, later.text).toBe(200);
    expect(await orderTotal(store)).toBe(1);
  });

  it('settling a 5xx fails too: still 503 with Retry-After in the envelope, and the delivery key is not issued twice', async () => {
    const store = await newStore();
    const server = (await store.post('/v1/app/server', { name: 'Survival' })).body as { id: number };
    const key = freshKey('settle');
    const start = '2031-01-01T00:00:00.000Z';
    // The key's transaction fails (a 500: it may have landed), then so does the settle's UpdateItem (attempts 3-5: the claim and the credential id were 1 and 2).
    const failed = await store.post(`/v1/app/server/${server.id}/key`, {}, faulted('fail:TransactWriteItems:1-3,fail:UpdateItem:3-5', key, atTime(start)));
    expect(Number(failed.headers['retry-after'])).toBeGreaterThan(1);
    expect503(failed);
    const later = await store.post(`/v1/app/server/${server.id}/key`, {}, keyed(key, atTime(start, 31_000)));
    expect(later.status, later.text).toBe(409);
    expect(firstError(later).code).toBe('IDEMPOTENCY_ANSWER_LOST');
  });
});
