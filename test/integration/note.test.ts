import { describe, expect, it } from 'vitest';
import { createApiToken } from '#lib/db/credential.ts';
import { dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { createOrder as buildOrder, ISO_Z, type Store } from '../support/builders.ts';

const createOrder = (store: Store) => buildOrder(store, { client_name: 'Steve' });

const notesOf = async (store: Store, orderId: number) => {
  const res = await store.get(`/v1/app/order/${orderId}/note`);
  expect(res.status).toBe(200);
  return res.body as { id: number; content: string }[];
};

describe('POST /v1/app/order/{orderId}/note', () => {
  it('creates a note written by the calling API token and answers the Order note', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const second = await createApiToken(store.storeId);
    const res = await store.post(`/v1/app/order/${order.id}/note`, { content: '  Call the customer back  ' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      order_id: order.id,
      user_id: expect.any(Number),
      content: 'Call the customer back',
      created_at: expect.stringMatching(ISO_Z),
      updated_at: res.body.created_at,
    });
    const other = await store.as(second.api_token).post(`/v1/app/order/${order.id}/note`, { content: 'Done' });
    expect(other.status).toBe(200);
    expect(other.body.user_id).toBe(second.credential_id);
    expect(other.body.user_id).not.toBe(res.body.user_id);
    expect(other.body.id).toBeGreaterThan(res.body.id);
    expect(await notesOf(store, order.id)).toEqual([res.body, other.body]);
  });

  it('accepts 2000 characters', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const res = await store.post(`/v1/app/order/${order.id}/note`, { content: 'x'.repeat(2000) });
    expect(res.status).toBe(200);
    expect(res.body.content).toHaveLength(2000);
  });

  it.each([
    ['content missing', {}, 'content'],
    ['content empty', { content: '' }, 'content'],
    ['content blank', { content: '   ' }, 'content'],
    ['content over 2000 characters', { content: 'x'.repeat(2001) }, 'content'],
    ['content not a string', { content: 5 }, 'content'],
    ['an unknown field', { content: 'x', user_id: 9 }, 'user_id'],
  ])('refuses %s with 422 naming the field, creating nothing', async (_case, body, field) => {
    const store = await newStore();
    const order = await createOrder(store);
    const res = await store.post(`/v1/app/order/${order.id}/note`, body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(await notesOf(store, order.id)).toEqual([]);
  });

  it('refuses a body that is not JSON (400) or not application/json (415)', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    expect((await store.post(`/v1/app/order/${order.id}/note`, undefined, { raw: '{"content":', contentType: 'application/json' })).status).toBe(400);
    expect((await store.post(`/v1/app/order/${order.id}/note`, undefined, { raw: 'content=x', contentType: 'text/plain' })).status).toBe(415);
    expect(await notesOf(store, order.id)).toEqual([]);
  });

  it('answers 404 for a missing order, and for an id that is no number, creating nothing', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const res = await store.post(`/v1/app/order/${order.id + 1}/note`, { content: 'x' });
    expect(res.status).toBe(404);
    expect(firstError(res)).toMatchObject({ code: 'NOT_FOUND', message: 'Order not found' });
    expect((await store.post(`/v1/app/order/${order.internal_id}/note`, { content: 'x' })).status).toBe(404);
    expect(await notesOf(store, order.id)).toEqual([]);
    expect((await store.get(`/v1/app/order/${order.id + 1}/note`)).status).toBe(404);
  });
});

describe('GET and DELETE /v1/app/order/{orderId}/note', () => {
  it('lists the notes of one order only, oldest first; an order without notes has []', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const other = await createOrder(store);
    expect(await notesOf(store, order.id)).toEqual([]);
    for (const content of ['first', 'second', 'third']) await store.post(`/v1/app/order/${order.id}/note`, { content });
    await store.post(`/v1/app/order/${other.id}/note`, { content: 'elsewhere' });
    expect((await notesOf(store, order.id)).map((note) => note.content)).toEqual(['first', 'second', 'third']);
    expect((await notesOf(store, other.id)).map((note) => note.content)).toEqual(['elsewhere']);
  });

  it('deletes a note (204); a second delete, or a delete under another order, is 404', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const other = await createOrder(store);
    const kept = (await store.post(`/v1/app/order/${order.id}/note`, { content: 'keep' })).body;
    const gone = (await store.post(`/v1/app/order/${order.id}/note`, { content: 'remove' })).body;
    const wrongOrder = await store.delete(`/v1/app/order/${other.id}/note/${gone.id}`);
    expect(wrongOrder.status).toBe(404);
    expect(firstError(wrongOrder).message).toBe('Note not found');
    expect((await store.delete(`/v1/app/order/${order.id}/note/${gone.id}`)).status).toBe(204);
    expect(await notesOf(store, order.id)).toEqual([kept]);
    expect((await store.delete(`/v1/app/order/${order.id}/note/${gone.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/order/${order.id}/note/abc`)).status).toBe(404);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's order and notes, changing nothing", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const order = await createOrder(a);
    const note = (await a.post(`/v1/app/order/${order.id}/note`, { content: 'private' })).body;
    // B has an order of the same id: A's note is still not B's.
    const ownOrder = await createOrder(b);
    expect(ownOrder.id).toBe(order.id);
    expect(await notesOf(b, ownOrder.id)).toEqual([]);
    expect((await b.delete(`/v1/app/order/${order.id}/note/${note.id}`)).status).toBe(404);
    const c = await newStore('C');
    expect((await c.get(`/v1/app/order/${order.id}/note`)).status).toBe(404);
    expect((await c.post(`/v1/app/order/${order.id}/note`, { content: 'x' })).status).toBe(404);
    expect(await notesOf(a, order.id)).toEqual([note]);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('note endpoints', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    // sequence ADD + one TransactWrite (the order's ConditionCheck and the Put)
    const created = await store.post(`/v1/app/order/${order.id}/note`, { content: 'x' });
    expect(dynamoDbCalls(created)).toBe(3);
    // one Query reads the order item (existence) and its notes
    expect(dynamoDbCalls(await store.get(`/v1/app/order/${order.id}/note`))).toBe(2);
    expect(dynamoDbCalls(await store.delete(`/v1/app/order/${order.id}/note/${created.body.id}`))).toBe(2);
    expect(dynamoDbCalls(await store.post(`/v1/app/order/${order.id}/note`, { content: '' }))).toBe(1);
    expect(dynamoDbCalls(await store.post(`/v1/app/order/${order.id + 1}/note`, { content: 'x' }))).toBe(3);
  });
});
