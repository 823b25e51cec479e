import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { findOrCreateCustomer } from '#lib/db/customer.ts';
import { consumeLoginCode, issueLoginCode, LOGIN_CODE_TTL_SECONDS, loginCodeHash, loginCodeKey } from '#lib/db/login-code.ts';
import { serverKeys } from '#lib/server-secret.ts';
import { buyerLogin, lastCode, mailsTo, outbox, requestCode, sessionCookieOf, sessionLogin, uniqueEmail, verify } from '../support/buyer.ts';
import { atTime, call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const login = (domain: string, json: unknown, extraHeaders: Record<string, string> = {}) =>
  call('POST', '/v1/webstore/auth/login', { json, headers: { 'x-store-domain': domain, ...extraHeaders } });
const me = (domain: string, token?: string) => call('GET', '/v1/webstore/customer/me', { token, headers: { 'x-store-domain': domain } });
const otherCode = (code: string, offset = 1) => String((Number(code) + offset) % 1_000_000).padStart(6, '0');
const storedAttempts = async (storeId: number, email: string) =>
  (await db.send(new GetCommand({ TableName: TABLE, Key: loginCodeKey(storeId, email), ConsistentRead: true }))).Item?.attempts;

describe('POST /v1/webstore/auth/login', () => {
  it('mails a 6-digit code to the lower-cased address and answers without it', async () => {
    const store = await newStore();
    const email = uniqueEmail('Mixed.Case').replace('example.com', 'EXAMPLE.com');
    const res = await login(store.domain, { email: `  ${email} ` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sent: true, expires_in: LOGIN_CODE_TTL_SECONDS });
    const mails = mailsTo(store.domain, email);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.to).toBe(email.toLowerCase());
    expect(mail.code).toMatch(/^\d{6}$/);
    expect(mail.text).toContain(mail.code);
    expect(mail.subject).toContain(store.domain);
    expect(res.text).not.toContain(mail.code);
  });

  it.each([
    ['not an e-mail', { email: 'nobody' }, 'email'],
    ['missing e-mail', {}, 'email'],
    ['e-mail not a string', { email: 42 }, 'email'],
    ['unknown field', { email: 'a@example.com', code: '123456' }, 'code'],
  ])('rejects %s with 422 naming the field and mails nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await login(store.domain, body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    // The store is new: no mail of any address may have gone out for it.
    expect(outbox().filter((mail) => mail.store_domain === store.domain)).toHaveLength(0);
  });

  it('needs x-store-domain (400) naming a known store (404)', async () => {
    const noHeader = await call('POST', '/v1/webstore/auth/login', { json: { email: 'a@example.com' } });
    expect(noHeader.status).toBe(400);
    expect(firstError(noHeader).code).toBe('STORE_DOMAIN_REQUIRED');
    const unknown = await login('no-such-store.localhost', { email: 'a@example.com' });
    expect(unknown.status).toBe(404);
    expect(firstError(unknown).code).toBe('NOT_FOUND');
  });

  it('sends at most 5 codes per address per 10 minutes: the 6th is 429 with Retry-After and mails nothing', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    // The limit counts per fixed 10-minute window: the burst runs at one pinned moment inside one.
    const insideOneWindow = atTime(new Date(Math.floor(Date.now() / 600_000) * 600_000 + 60_000).toISOString());
    const results = await Promise.all(Array.from({ length: 7 }, () => login(store.domain, { email }, insideOneWindow)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(2);
    expect(firstError(refused[0]!).code).toBe('RATE_LIMITED');
    const retryAfter = Number(refused[0]!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(mailsTo(store.domain, email)).toHaveLength(5);
    // Another address is not affected.
    expect((await login(store.domain, { email: uniqueEmail() })).status).toBe(200);
  });
});

describe('POST /v1/webstore/auth/verify', () => {
  it('creates the customer on first verify and returns a working bearer token', async () => {
    const store = await newStore();
    const email = uniqueEmail('first.login');
    const res = await verify(store.domain, email, await requestCode(store.domain, email));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^sbt_/),
      token_type: 'Bearer',
      expires_in: 7 * 24 * 3600,
      customer: {
        id: 1,
        store_id: store.storeId,
        email,
        name: email.split('@')[0],
        avatar: null,
        social_id: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
    });
    const profile = await me(store.domain, res.body.access_token);
    expect(profile.status).toBe(200);
    expect(profile.body).toEqual(res.body.customer);
  });

  it('finds the same customer on a later login, whatever the case of the address', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const first = await buyerLogin(store.domain, email);
    const upper = email.toUpperCase();
    const again = await verify(store.domain, upper, await requestCode(store.domain, upper));
    expect(again.status).toBe(200);
    expect(again.body.customer.id).toBe(first.customer.id);
    expect(again.body.access_token).not.toBe(first.token);
    expect((await buyerLogin(store.domain)).customer.id).toBe(first.customer.id + 1);
  });

  it('creates one customer when first logins of one address race', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const customers = await Promise.all(Array.from({ length: 6 }, () => findOrCreateCustomer(store.storeId, email)));
    expect(new Set(customers.map((c) => c.id)).size).toBe(1);
  });

  it('accepts a code once', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    expect((await verify(store.domain, email, code)).status).toBe(200);
    const reused = await verify(store.domain, email, code);
    expect(reused.status).toBe(401);
    expect(firstError(reused)).toMatchObject({ code: 'LOGIN_CODE_INVALID', message: 'Invalid or expired code' });
  });

  it('gives exactly one token when the right code is sent 10 times at once', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(store.domain, email, code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(9);
  });

  it('allows 5 attempts: the right code works after 4 wrong ones', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    for (let i = 1; i <= 4; i++) {
      const wrong = await verify(store.domain, email, otherCode(code, i));
      expect(wrong.status).toBe(401);
      expect(firstError(wrong).code).toBe('LOGIN_CODE_INVALID');
    }
    expect((await verify(store.domain, email, code)).status).toBe(200);
  });

  it('refuses the right code on the 6th try, after 5 wrong ones', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    for (let i = 1; i <= 5; i++) expect((await verify(store.domain, email, otherCode(code, i))).status).toBe(401);
    const sixth = await verify(store.domain, email, code);
    expect(sixth.status).toBe(401);
    expect(firstError(sixth).code).toBe('LOGIN_CODE_INVALID');
  });

  it('counts at most 5 attempts when 12 wrong guesses race, after which the right code fails', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    const guesses = await Promise.all(Array.from({ length: 12 }, (_, i) => verify(store.domain, email, otherCode(code, i + 1))));
    expect(guesses.every((r) => r.status === 401)).toBe(true);
    expect(await storedAttempts(store.storeId, email)).toBe(5);
    expect((await verify(store.domain, email, code)).status).toBe(401);
  });

  it('refuses an expired code even when it is right', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const { code } = await issueLoginCode(await serverKeys(), store.storeId, email, Date.now() - (LOGIN_CODE_TTL_SECONDS + 1) * 1000);
    const res = await verify(store.domain, email, code);
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('LOGIN_CODE_INVALID');
  });

  it('replaces the previous code with a new login', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const old = await requestCode(store.domain, email);
    let fresh = await requestCode(store.domain, email);
    // Codes are random: on the rare equal pair, ask once more.
    if (fresh === old) fresh = await requestCode(store.domain, email);
    expect((await verify(store.domain, email, old)).status).toBe(401);
    expect((await verify(store.domain, email, fresh)).status).toBe(200);
  });

  it("does not accept store A's code at store B, and creates no customer there", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const email = uniqueEmail();
    const code = await requestCode(a.domain, email);
    expect((await verify(b.domain, email, code)).status).toBe(401);
    expect((await verify(a.domain, email, code)).status).toBe(200);
    expect((await buyerLogin(b.domain)).customer.id).toBe(1);
  });

  it.each([
    ['a 5-digit code', { code: '12345' }, 'code'],
    ['a code with letters', { code: '12a456' }, 'code'],
    ['a numeric code', { code: 123456 }, 'code'],
    ['no e-mail', { email: undefined }, 'email'],
    ['an unknown field', { remember: true }, 'remember'],
  ])('rejects %s with 422, without spending an attempt', async (_case, change, field) => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    const bad = await call('POST', '/v1/webstore/auth/verify', { json: { email, code, ...change }, headers: { 'x-store-domain': store.domain } });
    expect(bad.status).toBe(422);
    expect(firstError(bad)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(await storedAttempts(store.storeId, email)).toBe(0);
    expect((await verify(store.domain, email, code)).status).toBe(200);
  });
});

describe('buyer tokens', () => {
  it("are refused at another store's domain, and without or with a bad token (401 CUSTOMER_UNAUTHENTICATED)", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const buyer = await buyerLogin(a.domain);
    for (const res of [
      await me(b.domain, buyer.token),
      await me(a.domain),
      await me(a.domain, 'sbt_forged'),
      await call('GET', '/v1/webstore/customer/me', { token: buyer.token }),
    ]) {
      expect(res.status).toBe(401);
      expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    }
    expect((await me(a.domain, buyer.token)).status).toBe(200);
  });
});

describe("login on the store's own domain", () => {
  it('sets an HttpOnly, SameSite=Lax session cookie for the whole site, and never puts the session in the body', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const sent = await call('POST', '/auth/login', { host: store.domain, json: { email } });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ sent: true, expires_in: LOGIN_CODE_TTL_SECONDS });
    const res = await call('POST', '/auth/verify', { host: store.domain, json: { email, code: lastCode(store.domain, email) } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ expires_in: 30 * 24 * 3600, customer: expect.objectContaining({ id: 1, email, store_id: store.storeId }) });
    const setCookie = [res.headers['set-cookie']].flat();
    expect(setCookie).toHaveLength(1);
    const attributes = setCookie[0]!.split('; ');
    expect(attributes[0]).toMatch(/^store_session=sss_[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', `Max-Age=${30 * 24 * 3600}`]));
    // The local stack serves store domains over plain http, so it drops Secure (INSECURE_COOKIES=1).
    expect(attributes).not.toContain('Secure');
    expect(res.text).not.toContain(attributes[0]!.split('=')[1]);
    const handoff = await call('GET', '/auth/handoff', { host: store.domain, cookie: sessionCookieOf(res) });
    expect(handoff.status).toBe(200);
  });

  it('refuses a wrong code (401) and sets no cookie', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    await call('POST', '/auth/login', { host: store.domain, json: { email } });
    const res = await call('POST', '/auth/verify', { host: store.domain, json: { email, code: otherCode(lastCode(store.domain, email)) } });
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('LOGIN_CODE_INVALID');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('answers 404 for a Host that is no store', async () => {
    const res = await call('POST', '/auth/login', { host: 'unknown-store.localhost', json: { email: 'a@example.com' } });
    expect(res.status).toBe(404);
  });

  it('logout revokes the session and clears the cookie', async () => {
    const store = await newStore();
    const { cookie } = await sessionLogin(store.domain);
    const res = await call('POST', '/auth/logout', { host: store.domain, cookie });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ logged_out: true });
    const cleared = [res.headers['set-cookie']].flat()[0]!.split('; ');
    expect(cleared).toEqual(expect.arrayContaining(['store_session=', 'Max-Age=0', 'Path=/', 'HttpOnly', 'SameSite=Lax']));
    const after = await call('GET', '/auth/handoff', { host: store.domain, cookie });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
    // Logging out without a session is harmless.
    expect((await call('POST', '/auth/logout', { host: store.domain })).status).toBe(200);
  });

  it('a new login revokes the session the browser still held', async () => {
    const store = await newStore();
    const first = await sessionLogin(store.domain);
    const email = uniqueEmail();
    await call('POST', '/auth/login', { host: store.domain, json: { email }, cookie: first.cookie });
    const second = await call('POST', '/auth/verify', { host: store.domain, json: { email, code: lastCode(store.domain, email) }, cookie: first.cookie });
    expect(second.status).toBe(200);
    expect((await call('GET', '/auth/handoff', { host: store.domain, cookie: first.cookie })).status).toBe(401);
    expect((await call('GET', '/auth/handoff', { host: store.domain, cookie: sessionCookieOf(second) })).status).toBe(200);
  });

  it("a session of store A is no session on store B's domain", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { cookie } = await sessionLogin(a.domain);
    const res = await call('GET', '/auth/handoff', { host: b.domain, cookie });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
  });
});

describe('DynamoDB calls per request (x-local-dynamodb-calls)', () => {
  const calls = dynamoDbCalls;

  it('login, verify, customer/me and logout', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    // domain Get + TransactWrite (rate counter + code)
    expect(calls(await login(store.domain, { email }))).toBe(2);
    // domain Get + failed Delete + attempts ADD
    expect(calls(await verify(store.domain, email, otherCode(lastCode(store.domain, email))))).toBe(3);
    // domain Get + Delete + e-mail Get (miss) + id ADD + TransactWrite (customer + sentinel) + token Put
    const first = await verify(store.domain, email, lastCode(store.domain, email));
    expect(calls(first)).toBe(6);
    await login(store.domain, { email });
    // domain Get + Delete + e-mail Get + customer Get + token Put
    expect(calls(await verify(store.domain, email, lastCode(store.domain, email)))).toBe(5);
    // BatchGet (domain + token) + Get / UpdateItem
    expect(calls(await me(store.domain, first.body.access_token))).toBe(2);
    const patched = await call('PATCH', '/v1/webstore/customer/me', { token: first.body.access_token, json: { name: 'N' }, headers: { 'x-store-domain': store.domain } });
    expect(calls(patched)).toBe(2);
    const { cookie } = await sessionLogin(store.domain);
    // BatchGet (domain + session) + conditional Delete
    expect(calls(await call('POST', '/auth/logout', { host: store.domain, cookie }))).toBe(2);
  });
});

describe('login codes keyed with the server secret', () => {
  const OLD = { current: 'o'.repeat(64) };
  const ROTATING = { current: 'n'.repeat(64), previous: OLD.current };
  const AFTER = { current: 'n'.repeat(64) };
  const storedHash = async (storeId: number, email: string) =>
    (await db.send(new GetCommand({ TableName: TABLE, Key: loginCodeKey(storeId, email), ConsistentRead: true }))).Item?.code_hash as string;

  it('stores the HMAC under the running secret, never a hash anyone can recompute from store, e-mail and code', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const code = await requestCode(store.domain, email);
    const hash = await storedHash(store.storeId, email);
    expect(hash).toBe(loginCodeHash(await serverKeys(), store.storeId, email, code));
    expect(hash).not.toBe(createHash('sha256').update(`${store.storeId}\n${email.toLowerCase()}\n${code}`).digest('hex'));
    expect(JSON.stringify(await db.send(new GetCommand({ TableName: TABLE, Key: loginCodeKey(store.storeId, email) })))).not.toContain(`"${code}"`);
  });

  it('a code issued before a rotation works within the grace period (previous key kept), and not once the previous key is dropped', async () => {
    const store = await newStore();
    const email = uniqueEmail();
    const { code } = await issueLoginCode(OLD, store.storeId, email);
    expect(await consumeLoginCode(ROTATING, store.storeId, email, code)).toBe(true);
    const again = await issueLoginCode(OLD, store.storeId, email);
    expect(await consumeLoginCode(AFTER, store.storeId, email, again.code)).toBe(false);
    // Codes issued during the grace period are hashed with the new key: they outlive it.
    const fresh = await issueLoginCode(ROTATING, store.storeId, email);
    expect(await consumeLoginCode(AFTER, store.storeId, email, fresh.code)).toBe(true);
  });
});
