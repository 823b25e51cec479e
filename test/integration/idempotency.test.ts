import { describe, expect, it } from 'vitest';
import { buyerLogin, mailsTo, requestCode, uniqueEmail } from '../support/buyer.ts';
import { createOrder, createPackage, orderBody } from '../support/builders.ts';
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
    const max = await store.post(
      '/v1/app/tag',
      { name: 'Sale', color: '#ef4444' },
      { headers: { 'idempotency-key': `${'k'.repeat(200)}${key('m')['idempotency-key']}`.slice(0, 255) } },
    );
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

  describe('keys are scoped to the caller (issue 23)', () => {
    const checkoutOf = (packageId: number, extra: Record<string, unknown> = {}) => ({
      cart: [{ package_id: packageId, quantity: 1 }],
      client_name: 'Steve Smith',
      client_identifier: 'Steve',
      ...extra,
    });
    const checkout = (domain: string, body: unknown, headers: Record<string, string>, token?: string) =>
      call('POST', '/v1/webstore/checkout', { json: body, token, headers: { ...headers, 'x-store-domain': domain } });
    const expectOwnOrder = (res: Awaited<ReturnType<typeof checkout>>, not: { order_id: string }) => {
      expect(res.status, res.text).toBe(200);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(res.body.order_id).not.toBe(not.order_id);
    };

    it("buyer X's key, sent with the same body by buyer Y and by a buyer of another store, answers neither: each places its own order", async () => {
      const [store, other] = [await newStore(), await newStore()];
      const [pkg, otherPkg] = [await createPackage(store, { price: 5 }), await createPackage(other, { price: 5 })];
      expect(otherPkg.id).toBe(pkg.id);
      const [x, y, z] = [await buyerLogin(store.domain), await buyerLogin(store.domain), await buyerLogin(other.domain)];
      const headers = key('checkout');
      const body = checkoutOf(pkg.id);
      const ofX = await checkout(store.domain, body, headers, x.token);
      expect(ofX.status, ofX.text).toBe(200);
      expectOwnOrder(await checkout(store.domain, body, headers, y.token), ofX.body);
      expectOwnOrder(await checkout(other.domain, body, headers, z.token), ofX.body);
      // X's own retry is still X's answer.
      const again = await checkout(store.domain, body, headers, x.token);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(ofX.body);
      expect((await store.get('/v1/app/order')).body.meta.total).toBe(2);
      expect((await other.get('/v1/app/order')).body.meta.total).toBe(1);
    });

    it("buyer X's key, sent by a guest with X's very body (X's e-mail in it), does not hand X's order to the guest", async () => {
      const store = await newStore();
      const pkg = await createPackage(store, { price: 5 });
      const x = await buyerLogin(store.domain);
      const headers = key('guest-of-x');
      const body = checkoutOf(pkg.id, { client_email: x.email });
      const ofX = await checkout(store.domain, body, headers, x.token);
      expect(ofX.status, ofX.text).toBe(200);
      expectOwnOrder(await checkout(store.domain, body, headers), ofX.body);
    });

    it("a guest's key answers only that guest: another client_email runs its own checkout, the same one (any case) gets the replay", async () => {
      const store = await newStore();
      const pkg = await createPackage(store, { price: 5 });
      const headers = key('guest');
      const body = checkoutOf(pkg.id, { client_email: 'steve@example.com' });
      const first = await checkout(store.domain, body, headers);
      expect(first.status, first.text).toBe(200);
      const otherGuest = await checkout(store.domain, { ...body, client_email: 'alex@example.com' }, headers);
      expect(otherGuest.status, otherGuest.text).toBe(200);
      expect(otherGuest.headers['idempotent-replayed']).toBeUndefined();
      const sameGuest = await checkout(store.domain, { ...body, client_email: ' STEVE@example.com' }, headers);
      expect(sameGuest.status).toBe(422);
      expect(firstError(sameGuest).code).toBe('IDEMPOTENCY_KEY_REUSED');
      const replay = await checkout(store.domain, body, headers);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
    });

    it("a buyer's key answers the buyer whichever of its tokens the retry carries", async () => {
      const store = await newStore();
      const pkg = await createPackage(store, { price: 5 });
      const email = uniqueEmail();
      const [first, second] = [await buyerLogin(store.domain, email), await buyerLogin(store.domain, email)];
      const headers = key('tokens');
      const body = checkoutOf(pkg.id);
      const placed = await checkout(store.domain, body, headers, first.token);
      const retried = await checkout(store.domain, body, headers, second.token);
      expect(retried.headers['idempotent-replayed']).toBe('true');
      expect(retried.body).toEqual(placed.body);
    });
  });

  it('scopes keys to the path as routed: /order/3/note and /order/%33/note are one path, one note', async () => {
    const store = await newStore();
    const order = await createOrder(store);
    const encoded = `/v1/app/order/${[...String(order.id)].map((digit) => `%3${digit}`).join('')}/note`;
    const headers = key('note');
    const first = await store.post(`/v1/app/order/${order.id}/note`, { content: 'Call back' }, { headers });
    expect(first.status, first.text).toBe(200);
    const again = await store.post(encoded, { content: 'Call back' }, { headers });
    expect(again.status, again.text).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await store.get(`/v1/app/order/${order.id}/note`)).body).toHaveLength(1);
  });

  it('the routes that issue a credential keep no answer: a used code with the same key is refused, never the token again', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    const headers = { ...key('verify'), 'x-store-domain': store.domain };
    const first = await call('POST', '/v1/webstore/auth/verify', { json: { email, code }, headers });
    expect(first.status, first.text).toBe(200);
    const again = await call('POST', '/v1/webstore/auth/verify', { json: { email, code }, headers });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.text).not.toContain(first.body.access_token);
    // The login ignores a key too: the same key and body run again and mail another code.
    const login = { json: { email }, headers };
    expect((await call('POST', '/v1/webstore/auth/login', login)).status).toBe(200);
    const mailed = mailsTo(store.domain, email).length;
    const second = await call('POST', '/v1/webstore/auth/login', login);
    expect(second.status, second.text).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(mailsTo(store.domain, email)).toHaveLength(mailed + 1);
  });
});
