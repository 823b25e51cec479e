import { describe, expect, it } from 'vitest';
import { revokeCredential } from '#lib/db/credential.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { buyerLogin, lastCode, sessionCookieOf, sessionLogin, uniqueEmail } from '../support/buyer.ts';
import { approvedOrder, claim, createServer } from '../support/delivery.ts';
import { createPackage } from '../support/builders.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/**
 * Every credential is its store's: presented through another store's host or x-store-domain it
 * is refused (or, where no credential is needed, simply not used) and it still works at its own
 * store afterwards. One block per kind of credential, every route that reads one included.
 */
const handoffAt = (domain: string, cookie: string) => call('GET', '/auth/handoff', { host: domain, cookie });
const meAt = (domain: string, token: string) => call('GET', '/v1/webstore/customer/me', { token, headers: { 'x-store-domain': domain } });

describe("store A's session cookie on store B's domain", () => {
  it('logout there is a 401 that ends nothing; A logs out at A afterwards', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const res = await call('POST', '/auth/logout', { host: b.domain, cookie });
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    expect(res.headers['set-cookie']).toBeUndefined();
    // The BatchGet (domain + cookie) that finds it foreign, and no delete.
    expect(dynamoDbCalls(res)).toBe(1);
    expect((await handoffAt(a.domain, cookie)).status).toBe(200);
    // At its own store the same cookie logs out, once.
    expect((await call('POST', '/auth/logout', { host: a.domain, cookie })).status).toBe(200);
    expect((await handoffAt(a.domain, cookie)).status).toBe(401);
  });

  it("20 logouts racing on B with A's cookie are all 401 and the session lives on", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('POST', '/auth/logout', { host: b.domain, cookie })));
    expect(answers.map((res) => res.status)).toEqual(Array(20).fill(401));
    expect((await handoffAt(a.domain, cookie)).status).toBe(200);
  });

  it("an expired, revoked or made-up cookie is the same 401 at logout (nothing tells them from another store's)", async () => {
    const b = await newStore('B');
    for (const cookie of ['store_session=sss_madeupmadeupmadeupmadeupmadeupmadeupmadeupma', 'store_session=x']) {
      const res = await call('POST', '/auth/logout', { host: b.domain, cookie });
      expect(res.status, cookie).toBe(401);
      expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    }
  });

  it("a login (verify) on B carrying it gets B its own session and leaves A's alone", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const email = uniqueEmail();
    expect((await call('POST', '/auth/login', { host: b.domain, json: { email }, cookie })).status).toBe(200);
    const verified = await call('POST', '/auth/verify', { host: b.domain, json: { email, code: lastCode(b.domain, email) }, cookie });
    expect(verified.status, verified.text).toBe(200);
    expect((await handoffAt(b.domain, sessionCookieOf(verified)!)).status).toBe(200);
    // The session the browser held belongs to A: the new login on B did not revoke it.
    expect((await handoffAt(a.domain, cookie)).status).toBe(200);
  });

  it('the handoff is refused on B (401) and A still issues one', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const res = await handoffAt(b.domain, cookie);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
    expect((await handoffAt(a.domain, cookie)).status).toBe(200);
  });

  it("is revoked only as its own store's, whoever calls the revoke", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const secret = cookie.split('=')[1]!;
    expect(await revokeCredential(secret, 'session', b.storeId)).toBe(false);
    expect(await revokeCredential(secret, 'buyer_token', a.storeId)).toBe(false);
    expect((await handoffAt(a.domain, cookie)).status).toBe(200);
    expect(await revokeCredential(secret, 'session', a.storeId)).toBe(true);
    expect((await handoffAt(a.domain, cookie)).status).toBe(401);
  });
});

/** A request to every buyer-token route of the table, ids 1, an empty body: the credential is checked first. */
const buyerRoutes = routeEntries().filter(([, spec]) => spec.credential === 'buyer' || spec.credential === 'buyerOptional');

describe("store A's buyer token with store B's x-store-domain", () => {
  it.each(buyerRoutes.map(([name, spec]) => [name, spec.method, spec.path] as const))('%s (%s %s) answers 401 and changes nothing', async (_name, method, path) => {
    const a = await newStore('A');
    const b = await newStore('B');
    // Customer 1 exists in both stores: a store check left out would act as B's customer 1.
    const ownerAtB = await buyerLogin(b.domain);
    const buyer = await buyerLogin(a.domain);
    expect(buyer.customer.id).toBe(ownerAtB.customer.id);
    const body =
      method === 'GET' || method === 'DELETE'
        ? undefined
        : { name: 'Changed', amount: 1, ref_code: 'taken1', withdraw_settings: {}, message: 'hi', cart: [{ package_id: 1, quantity: 1 }] };
    const res = await call(method, path.replace(/\{[^}]+\}/g, '1'), { token: buyer.token, json: body, headers: { 'x-store-domain': b.domain } });
    expect(res.status, res.text).toBe(401);
    expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    expect((await meAt(b.domain, ownerAtB.token)).body.name).not.toBe('Changed');
    expect((await meAt(a.domain, buyer.token)).status).toBe(200);
  });

  it('covers every buyer route of the table', () => {
    expect(buyerRoutes.map(([name]) => name)).toEqual(
      expect.arrayContaining(['customer-me-update', 'affiliate-withdraw', 'webstore-order-list', 'webstore-checkout', 'chat-buyer-create']),
    );
  });
});

describe('login codes, handoffs and API credentials across stores', () => {
  it("A's login code is refused at B (401) and still logs in at A", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const email = uniqueEmail();
    await call('POST', '/v1/webstore/auth/login', { json: { email }, headers: { 'x-store-domain': a.domain } });
    const code = lastCode(a.domain, email);
    for (const attempt of [
      call('POST', '/v1/webstore/auth/verify', { json: { email, code }, headers: { 'x-store-domain': b.domain } }),
      call('POST', '/auth/verify', { host: b.domain, json: { email, code } }),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(401);
      expect(firstError(res).code).toBe('LOGIN_CODE_INVALID');
    }
    const atA = await call('POST', '/v1/webstore/auth/verify', { json: { email, code }, headers: { 'x-store-domain': a.domain } });
    expect(atA.status, atA.text).toBe(200);
  });

  it("A's handoff exchanged with B's identify key is 400 and A's key still gets it", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const { handoff } = (await handoffAt(a.domain, cookie)).body;
    const foreign = await call('POST', '/v1/app/customer/identify', { token: b.identifyKey, json: { handoff } });
    expect(foreign.status).toBe(400);
    expect((await call('POST', '/v1/app/customer/identify', { token: a.identifyKey, json: { handoff } })).status).toBe(200);
  });

  it("A's API token and identify key open nothing on B's domain: its routes do not take them", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    for (const token of [a.token, a.identifyKey]) {
      const res = await call('GET', '/v1/app/store', { token, host: b.domain });
      expect(res.status).toBe(404);
      // With x-store-domain B, an operator route still acts on the token's own store only.
      const own = await call('GET', '/v1/app/store', { token: a.token, headers: { 'x-store-domain': b.domain } });
      expect(own.body.id).toBe(a.storeId);
    }
    expect((await a.get('/v1/app/store')).status).toBe(200);
  });

  it("A's delivery key claims only A's commands, whatever store it names, and B's server still gets B's", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const serverA = await createServer(a);
    const serverB = await createServer(b);
    expect(serverA.id).toBe(serverB.id);
    await approvedOrder(b, [{ command: 'give {client_identifier} vip', servers: [serverB.id] }]);
    await createPackage(a);
    const foreign = await call('POST', '/v1/delivery/claim', { token: serverA.key, json: {}, headers: { 'x-store-domain': b.domain } });
    expect(foreign.status, foreign.text).toBe(200);
    expect(foreign.body.commands).toEqual([]);
    const own = await claim(serverB.key);
    expect(own.body.commands).toHaveLength(1);
    expect((await claim(serverA.key)).status).toBe(200);
  });
});
