import { describe, expect, it } from 'vitest';
import { buyerLogin, uniqueEmail } from '../support/buyer.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { createOrder as buildOrder, ISO_Z, type Store } from '../support/builders.ts';

type Buyer = Awaited<ReturnType<typeof buyerLogin>>;

const createOrder = (store: Store, clientEmail: string) => buildOrder(store, { client_email: clientEmail, client_name: 'Steve' });

/** A store, one of its buyers, and an order of that buyer (same e-mail). */
async function setup(name = 'Chat store') {
  const store = await newStore(name);
  const buyer = await buyerLogin(store.domain);
  const order = await createOrder(store, buyer.email);
  const app = `/v1/app/order/${order.internal_id}/chat/messages`;
  const web = `/v1/webstore/order/${order.internal_id}/chat/messages`;
  return { store, buyer, order, app, web };
}

const storeSays = (store: Store, path: string, message: string) => store.post(path, { message });
const buyerSays = (buyer: Buyer, path: string, message: string) => buyer.post(path, { message });

describe('POST /v1/app/order/{internal_id}/chat/messages', () => {
  it('adds a store message: user_type store, source api, read by seller, the store name as sender', async () => {
    const { store, app } = await setup('Pixel Shop');
    const res = await storeSays(store, app, '  Your rank is active.  ');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      message: 'Your rank is active.',
      attachments: [],
      user_type: 'store',
      sender_name: 'Pixel Shop',
      source: 'api',
      read_by: ['seller'],
      timestamp: expect.stringMatching(ISO_Z),
    });
    const list = await store.get(app);
    expect(list.body.data).toEqual([res.body]);
  });

  it.each([
    ['message missing', {}, 'message'],
    ['message blank', { message: '  ' }, 'message'],
    ['message over 4000 characters', { message: 'x'.repeat(4001) }, 'message'],
    ['message not a string', { message: ['hi'] }, 'message'],
    ['an unknown field', { message: 'hi', user_type: 'buyer' }, 'user_type'],
  ])('refuses %s with 422 naming the field, adding nothing', async (_case, body, field) => {
    const { store, buyer, app, web } = await setup();
    const res = await store.post(app, body);
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe(field);
    const fromBuyer = await buyer.post(web, body);
    expect(fromBuyer.status).toBe(422);
    expect(firstError(fromBuyer).field).toBe(field);
    expect((await store.get(app)).body.meta.total).toBe(0);
  });

  it('accepts 4000 characters', async () => {
    const { store, app } = await setup();
    expect((await storeSays(store, app, 'x'.repeat(4000))).status).toBe(200);
  });

  it('answers 404 for an unknown internal_id, an order id in its place, or one that cannot be an internal_id', async () => {
    const { store, order } = await setup();
    for (const id of ['AbCdEfGhIjKlMnOpQrStUv', String(order.id), 'a.b', `${order.internal_id}x`, order.internal_id.slice(0, -1)]) {
      const res = await store.post(`/v1/app/order/${encodeURIComponent(id)}/chat/messages`, { message: 'hi' });
      expect(res.status, id).toBe(404);
      expect((await store.get(`/v1/app/order/${encodeURIComponent(id)}/chat/messages`)).status, id).toBe(404);
    }
  });
});

describe('the buyer side: /v1/webstore/order/{internal_id}/chat/messages', () => {
  it('adds a buyer message (user_type buyer, source web, read by buyer, the customer name) that the store sees', async () => {
    const { store, buyer, app, web } = await setup();
    const res = await buyerSays(buyer, web, 'Where is my rank?');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      message: 'Where is my rank?',
      attachments: [],
      user_type: 'buyer',
      sender_name: buyer.customer.name,
      source: 'web',
      read_by: ['buyer'],
      timestamp: expect.stringMatching(ISO_Z),
    });
    const seen = await store.get(app);
    expect(seen.body.data).toEqual([{ ...res.body, read_by: ['buyer', 'seller'] }]);
  });

  it('lets in the buyer whose e-mail is the order e-mail in another case', async () => {
    const store = await newStore();
    const email = uniqueEmail('Mixed.Case');
    const buyer = await buyerLogin(store.domain, email.toLowerCase());
    const order = await createOrder(store, email.toUpperCase());
    const web = `/v1/webstore/order/${order.internal_id}/chat/messages`;
    expect((await buyerSays(buyer, web, 'hello')).status).toBe(200);
    expect((await buyer.get(web)).body.meta.total).toBe(1);
  });

  it('answers 404 to another buyer of the store, and to a buyer of another store, adding and marking nothing', async () => {
    const { store, buyer, order, app, web } = await setup();
    await storeSays(store, app, 'for the owner only');
    const stranger = await buyerLogin(store.domain);
    const get = await stranger.get(web);
    expect(get.status).toBe(404);
    expect(firstError(get)).toMatchObject({ code: 'NOT_FOUND', message: 'Order not found' });
    expect((await buyerSays(stranger, web, 'let me in')).status).toBe(404);
    // The same e-mail in another store is another customer of another store.
    const elsewhere = await newStore();
    const twin = await buyerLogin(elsewhere.domain, buyer.email);
    expect((await twin.get(web)).status).toBe(404);
    expect((await buyerSays(twin, web, 'hi')).status).toBe(404);
    const messages = (await store.get(app)).body.data;
    expect(messages).toHaveLength(1);
    expect(messages[0].read_by).toEqual(['seller']);
    expect((await buyer.get(`/v1/webstore/order/${order.internal_id}x/chat/messages`)).status).toBe(404);
  });

  it('needs a buyer token of the store (401 without)', async () => {
    const { store, web } = await setup();
    const res = await call('GET', web, { headers: { 'x-store-domain': store.domain } });
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    expect((await call('GET', web, { token: store.token, headers: { 'x-store-domain': store.domain } })).status).toBe(401);
  });
});

describe('read marks', () => {
  it("reading marks the other side's messages as read by the reader, never the reader's own", async () => {
    const { store, buyer, app, web } = await setup();
    const question = (await buyerSays(buyer, web, 'question')).body;
    const answer = (await storeSays(store, app, 'answer')).body;
    // The store has not read yet: the buyer sees its question unread by the seller.
    expect((await buyer.get(web)).body.data).toEqual([
      { ...question, read_by: ['buyer'] },
      { ...answer, read_by: ['seller', 'buyer'] },
    ]);
    expect((await store.get(app)).body.data).toEqual([
      { ...question, read_by: ['buyer', 'seller'] },
      { ...answer, read_by: ['seller', 'buyer'] },
    ]);
    const followUp = (await buyerSays(buyer, web, 'thanks')).body;
    expect((await buyer.get(web)).body.data.map((m: { read_by: string[] }) => m.read_by)).toEqual([['buyer', 'seller'], ['seller', 'buyer'], ['buyer']]);
    expect(followUp.read_by).toEqual(['buyer']);
  });

  it('marks only what the page shows and what came before it, and never moves a mark back', async () => {
    const { store, buyer, app, web } = await setup();
    for (const text of ['b1', 'b2', 'b3', 'b4']) await buyerSays(buyer, web, text);
    // Page 2 of 2 holds the two oldest messages: only those become read.
    const older = await store.get(`${app}?page=2&limit=2`);
    expect(older.body.data.map((m: { message: string }) => m.message)).toEqual(['b1', 'b2']);
    expect(older.body.data.every((m: { read_by: string[] }) => m.read_by.includes('seller'))).toBe(true);
    const fromBuyer = (await buyer.get(web)).body.data;
    expect(fromBuyer.map((m: { read_by: string[] }) => m.read_by)).toEqual([['buyer', 'seller'], ['buyer', 'seller'], ['buyer'], ['buyer']]);
    await store.get(`${app}?page=1&limit=2`);
    await store.get(`${app}?page=2&limit=2`);
    expect((await buyer.get(web)).body.data.every((m: { read_by: string[] }) => m.read_by.includes('seller'))).toBe(true);
  });
});

describe('paging', () => {
  it('counts pages from the newest end; within a page, oldest to newest; full meta; past the last page, []', async () => {
    const { store, app } = await setup();
    for (const text of ['m1', 'm2', 'm3', 'm4', 'm5']) expect((await storeSays(store, app, text)).status).toBe(200);
    const page = async (query: string) => (await store.get(`${app}${query}`)).body;
    const first = await page('?limit=2');
    expect(first.data.map((m: { message: string }) => m.message)).toEqual(['m4', 'm5']);
    expect(first.meta).toEqual({
      total: 5,
      per_page: 2,
      current_page: 1,
      last_page: 3,
      first_page: 1,
      first_page_url: `${app}?page=1&limit=2`,
      last_page_url: `${app}?page=3&limit=2`,
      next_page_url: `${app}?page=2&limit=2`,
      previous_page_url: null,
    });
    expect((await page('?page=2&limit=2')).data.map((m: { message: string }) => m.message)).toEqual(['m2', 'm3']);
    const last = await page('?page=3&limit=2');
    expect(last.data.map((m: { message: string }) => m.message)).toEqual(['m1']);
    expect(last.meta.next_page_url).toBeNull();
    const past = await page('?page=4&limit=2');
    expect(past.data).toEqual([]);
    expect(past.meta).toMatchObject({ total: 5, current_page: 4, last_page: 3 });
    const all = await page('');
    expect(all.meta.per_page).toBe(20);
    expect(all.data.map((m: { message: string }) => m.message)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    const timestamps = all.data.map((m: { timestamp: string }) => m.timestamp);
    expect([...timestamps].sort()).toEqual(timestamps);
    expect((await page('?limit=100')).meta.per_page).toBe(100);
  });

  it('an order without messages has an empty first page', async () => {
    const { store, buyer, app, web } = await setup();
    const res = await store.get(app);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: [], meta: { total: 0, current_page: 1, last_page: 1 } });
    expect((await buyer.get(web)).body.data).toEqual([]);
  });

  it('refuses limit outside 1..100 (422) and a malformed page (400)', async () => {
    const { store, buyer, app, web } = await setup();
    for (const query of ['limit=0', 'limit=101', 'page=0']) {
      const res = await store.get(`${app}?${query}`);
      expect(res.status, query).toBe(422);
      expect((await buyer.get(`${web}?${query}`)).status, query).toBe(422);
    }
    expect((await store.get(`${app}?page=abc`)).status).toBe(400);
    expect((await store.get(`${app}?limit=1.5`)).status).toBe(400);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's order chat, adding nothing", async () => {
    const { store, app } = await setup();
    await storeSays(store, app, 'hello');
    const other = await newStore();
    expect((await other.get(app)).status).toBe(404);
    expect((await other.post(app, { message: 'intrusion' })).status).toBe(404);
    expect((await store.get(app)).body.meta.total).toBe(1);
  });

  it('keeps chats of different orders apart', async () => {
    const { store, buyer, app } = await setup();
    const second = await createOrder(store, buyer.email);
    const secondApp = `/v1/app/order/${second.internal_id}/chat/messages`;
    await storeSays(store, app, 'first order');
    await storeSays(store, secondApp, 'second order');
    expect((await store.get(app)).body.data.map((m: { message: string }) => m.message)).toEqual(['first order']);
    expect((await store.get(secondApp)).body.data.map((m: { message: string }) => m.message)).toEqual(['second order']);
  });
});

describe('DynamoDB calls per request (credential lookup included)', () => {
  it('chat endpoints', async () => {
    const { store, buyer, app, web } = await setup();
    // BatchGet (the internal_id sentinel, the store for sender_name) + Put
    expect(dynamoDbCalls(await storeSays(store, app, 'a'))).toBe(3);
    // BatchGet (sentinel with the order's e-mail, customer) + Put
    expect(dynamoDbCalls(await buyerSays(buyer, web, 'b'))).toBe(3);
    // one Query (sentinel, messages, marks) + the mark of the buyer's message
    expect(dynamoDbCalls(await store.get(app))).toBe(3);
    // nothing new to mark
    expect(dynamoDbCalls(await store.get(app))).toBe(2);
    // Query + GetItem customer + the mark of the store's message; then nothing to mark
    expect(dynamoDbCalls(await buyer.get(web))).toBe(4);
    expect(dynamoDbCalls(await buyer.get(web))).toBe(3);
    expect(dynamoDbCalls(await store.post(app, { message: '' }))).toBe(1);
  });
});
