import { describe, expect, it } from 'vitest';
import { storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { creditOrderCommission } from '#lib/flows/affiliate-commission.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { buyerLogin } from '../support/buyer.ts';
import { createOrder, createPackage, createTag, type Store } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore, type ApiResponse } from '../support/client.ts';

/**
 * A POST whose write landed while its answer was lost (issue 28, Deliver item 2). A creation's
 * own transaction records what it created on the Idempotency-Key (lib/db/idempotency.ts
 * `createOnce`), so the careful client's retry (the same key and body, faults off) answers that
 * very thing, once, and never creates a second one; joining as an affiliate and settling a
 * withdrawal run again safely (the membership is shown, the settled line answered unchanged). Faults are injected
 * by the local stack (`x-local-dynamodb-fault`, infra/local/dynamodb-faults.ts): `lose-answer` on
 * every attempt of the creation's TransactWriteItems (the SDK's retries included) lands the write
 * and loses every answer, so the first request is a 503.
 */
const freshKey = (label: string) => `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`;
const LOSE_CREATION = 'lose-answer:TransactWriteItems:1-3';

type Send = (headers: Record<string, string>) => Promise<ApiResponse>;

/**
 * Sends a creation with a fresh key whose answer is lost, then the careful client's retry and a
 * replay; checks the 503, and that the retry and the replay answer the same created thing.
 */
async function loseThenRetry(send: Send, label: string) {
  const key = freshKey(label);
  const lost = await send({ 'idempotency-key': key, 'x-local-dynamodb-fault': LOSE_CREATION });
  expect(lost.status, lost.text).toBe(503);
  expect(firstError(lost).code).toBe('UNAVAILABLE');
  expect(Number(lost.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  const retried = await send({ 'idempotency-key': key });
  expect(retried.status, retried.text).not.toBe(409);
  const replayed = await send({ 'idempotency-key': key });
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.status).toBe(retried.status);
  expect(replayed.body).toEqual(retried.body);
  return { retried, key };
}

const ids = async (store: Store, path: string) => ((await store.get(path)).body.data as { id: number | string }[]).map((thing) => thing.id);

/** An affiliate of a new store with a balance from one commission, and its withdraw settings saved. */
async function fundedAffiliate() {
  const store = await newStore();
  const ref = `wd${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const buyer = await buyerLogin(store.domain);
  expect((await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref })).status).toBe(200);
  await creditOrderCommission(store.storeId, { id: 1, ref_code: ref, total: 500, client_email: 'someone.else@example.com', packages: [] });
  await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' } });
  const balance = (await buyer.get('/v1/webstore/affiliate/me')).body.balance as number;
  expect(balance).toBeGreaterThan(0);
  return { store, buyer, balance };
}

describe('a POST whose effect landed and whose answer was lost is answered on the retry, and done once', () => {
  it('tag: the retry answers the tag created, and the store holds one', async () => {
    const store = await newStore();
    const body = { name: 'Sale', color: '#ef4444' };
    const { retried } = await loseThenRetry((headers) => store.post('/v1/app/tag', body, { headers }), 'tag');
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject(body);
    expect(retried.body).toEqual((await store.get(`/v1/app/tag/${retried.body.id}`)).body);
    expect(await ids(store, '/v1/app/tag')).toEqual([retried.body.id]);
    // The retry read the tag back (credential, claim, GetItem, keep); a fresh keyed creation makes
    // as many calls as before its transaction also recorded the key (credential, claim, id, TransactWrite, keep).
    expect(dynamoDbCalls(retried)).toBe(4);
    expect(dynamoDbCalls(await store.post('/v1/app/tag', body, { headers: { 'idempotency-key': freshKey('tag-calls') } }))).toBe(5);
  });

  it('package: the retry answers the package created (its tags shown), and the store holds one', async () => {
    const store = await newStore();
    const tag = await createTag(store);
    const body = { name: 'VIP', price: 10, tags: [tag.id], commands: [{ command: 'give {client_identifier} vip' }] };
    const { retried } = await loseThenRetry((headers) => store.post('/v1/app/package', body, { headers }), 'package');
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ name: 'VIP', price: 10, tags: [tag.id] });
    expect(retried.body).toEqual((await store.get(`/v1/app/package/${retried.body.id}`)).body);
    expect(await ids(store, '/v1/app/package')).toEqual([retried.body.id]);
  });

  it('withdrawal of the whole balance: the retry answers the line written (not 422 on the emptied balance), and the balance is debited once', async () => {
    const { store, buyer, balance } = await fundedAffiliate();
    const { retried } = await loseThenRetry((headers) => buyer.post('/v1/webstore/affiliate/withdraw', { amount: balance }, headers), 'withdraw');
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toMatchObject({ operation: 'WITHDRAW_PENDING', amount: balance, withdraw_info: { full_name: 'Ana Souza' } });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.balance).toBe(0);
    expect(await ids(store, '/v1/app/affiliate/withdrawal')).toEqual([retried.body.id]);
    // The retry read the line back: credential, claim, GetItem, keep.
    expect(dynamoDbCalls(retried)).toBe(4);
  });

  it('affiliate join: the retry answers the membership made (joining again shows it), and the store holds one affiliate', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const ref = `jn${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
    const { retried } = await loseThenRetry((headers) => buyer.post('/v1/webstore/affiliate/join', { ref_code: ref }, headers), 'join');
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toMatchObject({ ref_code: ref, balance: 0 });
    expect(retried.body).toEqual((await buyer.get('/v1/webstore/affiliate/me')).body);
    expect((await store.get('/v1/app/affiliate')).body.meta.total).toBe(1);
  });

  it('affiliate link: the retry answers the link added (not 409 for the code it now holds), and the affiliate holds one more link', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const ref = `lk${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
    expect((await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref })).status).toBe(200);
    const code = `${ref}yt`;
    const { retried } = await loseThenRetry((headers) => buyer.post('/v1/webstore/affiliate/link', { name: 'YouTube', ref_code: code }, headers), 'link');
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ id: expect.any(Number), name: 'YouTube', ref_code: code, url: `https://${store.domain}/?ref=${code}`, sales: 0, revenue: 0, d7_visits: 0 });
    const links = (await buyer.get('/v1/webstore/affiliate/me')).body.links as { id: number; ref_code: string }[];
    expect(links.filter((link) => link.ref_code === code).map((link) => link.id)).toEqual([retried.body.id]);
    expect(links).toHaveLength(2);
  });

  for (const action of ['pay', 'reject'] as const) {
    it(`withdrawal ${action}: the retry answers the line settled, settled once (the balance given back once when rejected)`, async () => {
      const { store, buyer, balance } = await fundedAffiliate();
      const withdrawn = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: balance });
      expect(withdrawn.status, withdrawn.text).toBe(200);
      const path = `/v1/app/affiliate/withdrawal/${withdrawn.body.id}/${action}`;
      const body = action === 'reject' ? { message: 'Wrong PIX key' } : {};
      const { retried } = await loseThenRetry((headers) => store.post(path, body, { headers }), `withdrawal-${action}`);
      expect(retried.status, retried.text).toBe(200);
      expect(retried.body).toMatchObject({ id: withdrawn.body.id, operation: action === 'pay' ? 'WITHDRAW_PAID' : 'WITHDRAW_REJECTED' });
      expect((await buyer.get('/v1/webstore/affiliate/me')).body.balance).toBe(action === 'pay' ? 0 : balance);
      const settled = action === 'pay' ? 'PAID' : 'REJECTED';
      expect((await store.get(`/v1/app/affiliate/withdrawal?status=${settled}`)).body.meta.total).toBe(1);
      expect((await store.get('/v1/app/affiliate/withdrawal?status=PENDING')).body.meta.total).toBe(0);
    });
  }

  it('chat, from the store and from the buyer: each retry answers the message posted, and the chat holds one of each', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const order = await createOrder(store, { client_email: buyer.email, client_name: 'Steve' });
    const app = `/v1/app/order/${order.internal_id}/chat/messages`;
    const web = `/v1/webstore/order/${order.internal_id}/chat/messages`;
    const fromStore = (await loseThenRetry((headers) => store.post(app, { message: 'Your rank is active' }, { headers }), 'chat-store')).retried;
    expect(fromStore.status, fromStore.text).toBe(200);
    expect(fromStore.body).toMatchObject({ message: 'Your rank is active', user_type: 'store' });
    const fromBuyer = (await loseThenRetry((headers) => buyer.post(web, { message: 'Thanks!' }, headers), 'chat-buyer')).retried;
    expect(fromBuyer.status, fromBuyer.text).toBe(200);
    expect(fromBuyer.body).toMatchObject({ message: 'Thanks!', user_type: 'buyer' });
    // Each retry read the message back: credential, claim, GetItem, keep.
    expect(dynamoDbCalls(fromStore)).toBe(4);
    expect(dynamoDbCalls(fromBuyer)).toBe(4);
    const chat = (await store.get(app)).body.data as { id: string; message: string }[];
    expect(chat.map((message) => [message.id, message.message])).toEqual([
      [fromStore.body.id, 'Your rank is active'],
      [fromBuyer.body.id, 'Thanks!'],
    ]);
    // A fresh keyed post makes as many calls as before it recorded its key: credential, claim, BatchGet, TransactWrite, keep.
    expect(dynamoDbCalls(await store.post(app, { message: 'One more' }, { headers: { 'idempotency-key': freshKey('chat-calls') } }))).toBe(5);
  });

  /** The operator's other creations: what each sends, where the store lists them, and what the retry's answer must hold. */
  const operatorCreations = [
    { what: 'category', path: '/v1/app/category', body: { name: 'Ranks' }, list: '/v1/app/category' },
    { what: 'server', path: '/v1/app/server', body: { name: 'Survival' }, list: '/v1/app/server' },
    {
      what: 'promo',
      path: '/v1/app/promo',
      body: {
        name: 'Two for less',
        type: 'PROGRESSIVE',
        condition_mode: 'QUANTITY',
        starts_at: '2020-01-01T00:00:00.000Z',
        targets: [{ type: 'STORE' }],
        tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
      },
      list: '/v1/app/promo',
    },
    // A rerun would be 409 for the name the first attempt now holds.
    { what: 'variable', path: '/v1/app/variable', body: { name: 'nick', type: 'TEXT', description: 'Asked at checkout' }, list: '/v1/app/variable' },
  ];
  for (const creation of operatorCreations) {
    it(`${creation.what}: the retry answers the ${creation.what} created, and the store holds one`, async () => {
      const store = await newStore();
      const { retried } = await loseThenRetry((headers) => store.post(creation.path, creation.body, { headers }), creation.what);
      expect(retried.status, retried.text).toBe(200);
      expect(retried.body).toMatchObject({ name: creation.body.name });
      expect(retried.body).toEqual((await store.get(`${creation.path}/${retried.body.id}`)).body);
      expect(await ids(store, creation.list)).toEqual([retried.body.id]);
    });
  }

  it('webhook: the retry answers the webhook created with the very signing secret it was given, and the store holds one', async () => {
    const store = await newStore();
    const { retried } = await loseThenRetry((headers) => store.post('/v1/app/webhook', { url: 'https://example.com/hooks', events: ['order.approved'] }, { headers }), 'webhook');
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.secret).toEqual(expect.any(String));
    const { secret, ...shown } = retried.body;
    expect(shown).toEqual((await store.get(`/v1/app/webhook/${retried.body.id}`)).body);
    expect(await ids(store, '/v1/app/webhook')).toEqual([retried.body.id]);
  });

  it('order note: the retry answers the note written, and the order holds one', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const path = `/v1/app/order/${order.id}/note`;
    const { retried } = await loseThenRetry((headers) => store.post(path, { content: 'Called the buyer' }, { headers }), 'note');
    expect(retried.status, retried.text).toBe(200);
    expect((await store.get(path)).body).toEqual([retried.body]);
  });

  it('storefront quote: the retry answers the quote issued, its prices and expiry, and the store holds one', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 10 });
    const body = { cart: [{ package_id: pkg.id, quantity: 2 }] };
    const { retried } = await loseThenRetry((headers) => call('POST', '/v1/webstore/cart/quote', { json: body, headers: { 'x-store-domain': store.domain, ...headers } }), 'quote');
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toMatchObject({ quote_id: expect.any(String), expires_at: expect.any(String), subtotal: 20, total: 20 });
    const quotes = await queryAll({ pk: storePk(store.storeId), skPrefix: `${ENTITY.QUOTE}#` });
    expect(quotes.map((quote) => quote.quote_id)).toEqual([retried.body.quote_id]);
  });
});
