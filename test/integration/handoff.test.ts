import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { createApiKey, issueSession, revokeCredential } from '#lib/db/credential.ts';
import { getCustomer } from '#lib/db/customer.ts';
import { handoffKey, issueHandoff } from '#lib/db/handoff.ts';
import { sessionLogin } from '../support/buyer.ts';
import { atTime, call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

const issue = (domain: string, cookie?: string, headers: Record<string, string> = {}) => call('GET', '/auth/handoff', { host: domain, cookie, headers });
const identify = (key: string | undefined, json: unknown, path = '/v1/app/customer/identify') => call('POST', path, { token: key, json });
const INVALID = { message: 'Invalid, used or expired handoff', code: 'HANDOFF_INVALID' };

async function loggedIn() {
  const store = await newStore();
  const session = await sessionLogin(store.domain);
  return { store, ...session };
}

async function handoffOf(domain: string, cookie: string): Promise<string> {
  const res = await issue(domain, cookie);
  if (res.status !== 200) throw new Error(`handoff issue failed: ${res.status} ${res.text}`);
  return res.body.handoff;
}

function expectInvalid(res: Awaited<ReturnType<typeof identify>>) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ errors: [INVALID] });
}

describe('GET {store_url}/auth/handoff', () => {
  it('issues a 60-second handoff to the logged-in customer, uncached', async () => {
    const { store, cookie } = await loggedIn();
    const res = await issue(store.domain, cookie);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ handoff: expect.stringMatching(/^sho_[A-Za-z0-9_-]{43}$/), expires_in: 60 });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('stores only the hash, with the identity, the expiry and a TTL', async () => {
    const { store, cookie, customer } = await loggedIn();
    const handoff = await handoffOf(store.domain, cookie);
    const item = (await db.send(new GetCommand({ TableName: TABLE, Key: handoffKey(handoff) }))).Item!;
    expect(item).toMatchObject({
      store_id: store.storeId,
      customer: { store_id: store.storeId, email: customer.email, name: customer.name, avatar: null, social_id: null },
    });
    expect(Date.parse(item.expires_at) - Date.parse(item.issued_at)).toBe(60_000);
    expect(item.expires_epoch).toBe(Math.floor(Date.parse(item.expires_at) / 1000));
    expect(JSON.stringify(item)).not.toContain(handoff);
  });

  it.each([
    ['no cookie', undefined],
    ['an unknown session', 'store_session=sss_unknown'],
    ['an empty cookie', 'store_session='],
  ])('answers 401 {error: CUSTOMER_UNAUTHENTICATED} with %s', async (_case, cookie) => {
    const store = await newStore();
    const res = await issue(store.domain, cookie);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
  });

  it('answers 401 {error: CUSTOMER_UNAUTHENTICATED} with an expired session', async () => {
    const { store, customer } = await loggedIn();
    const expired = await issueSession(store.storeId, customer.id, -1);
    const res = await issue(store.domain, `store_session=${expired.sessionId}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
  });

  it('gives exactly 20 of 25 concurrent requests a handoff; the rest get 429 RATE_LIMITED with Retry-After', async () => {
    const { store, cookie } = await loggedIn();
    // The limit counts per calendar minute: the burst runs at one pinned moment, a second into the next minute.
    const insideOneMinute = atTime(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 61_000).toISOString());
    const results = await Promise.all(Array.from({ length: 25 }, () => issue(store.domain, cookie, insideOneMinute)));
    const issued = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(issued).toHaveLength(20);
    expect(new Set(issued.map((r) => r.body.handoff)).size).toBe(20);
    expect(limited).toHaveLength(5);
    for (const res of limited) {
      expect(res.body).toEqual({ error: 'RATE_LIMITED' });
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    // The limit is per customer: another customer of the store is served.
    const other = await sessionLogin(store.domain);
    expect((await issue(store.domain, other.cookie)).status).toBe(200);
  });
});

describe('POST /v1/app/customer/identify', () => {
  it('returns the identity once, never a token', async () => {
    const { store, cookie, customer } = await loggedIn();
    const before = Date.now();
    const handoff = await handoffOf(store.domain, cookie);
    const res = await identify(store.identifyKey, { handoff });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      customer: { store_id: store.storeId, email: customer.email, name: customer.name, avatar: null, social_id: null, issued_at: expect.any(String) },
    });
    expect(res.body.customer.issued_at).toMatch(/Z$/);
    expect(Date.parse(res.body.customer.issued_at)).toBeGreaterThanOrEqual(before - 1000);
    expectInvalid(await identify(store.identifyKey, { handoff }));
  });

  it('carries the profile as it was when the handoff was issued', async () => {
    const { store, cookie, customer } = await loggedIn();
    const { updateCustomer } = await import('#lib/db/customer.ts');
    await updateCustomer(store.storeId, customer.id, { name: 'Renamed', avatar: 'https://cdn.example.com/r.png', social_id: 'sid-1' });
    const res = await identify(store.identifyKey, { handoff: await handoffOf(store.domain, cookie) });
    expect(res.body.customer).toMatchObject({ name: 'Renamed', avatar: 'https://cdn.example.com/r.png', social_id: 'sid-1' });
  });

  it.each([
    ['made up', 'sho_' + 'A'.repeat(43)],
    ['not a handoff at all', 'hello'],
    ['empty', ''],
    ['a session id', 'sss_' + 'A'.repeat(43)],
  ])('answers 400 HANDOFF_INVALID for a %s handoff', async (_case, handoff) => {
    const store = await newStore();
    expectInvalid(await identify(store.identifyKey, { handoff }));
  });

  it('refuses an expired handoff with the same answer', async () => {
    const { store, customer } = await loggedIn();
    const { handoff } = await issueHandoff(await getCustomer(store.storeId, customer.id), Date.now() - 61_000);
    expectInvalid(await identify(store.identifyKey, { handoff }));
  });

  it("refuses another store's handoff without consuming it", async () => {
    const { store, cookie } = await loggedIn();
    const foreign = await newStore('Foreign');
    const handoff = await handoffOf(store.domain, cookie);
    expectInvalid(await identify(foreign.identifyKey, { handoff }));
    expect((await identify(store.identifyKey, { handoff })).status).toBe(200);
  });

  it('takes the handoff only from the body: a query string is refused (400) and consumes nothing', async () => {
    const { store, cookie } = await loggedIn();
    const handoff = await handoffOf(store.domain, cookie);
    const both = await identify(store.identifyKey, { handoff }, `/v1/app/customer/identify?handoff=${handoff}`);
    expect(both.status).toBe(400);
    expect(firstError(both)).toMatchObject({ code: 'INVALID_QUERY', message: expect.stringContaining('never in the URL') });
    const queryOnly = await identify(store.identifyKey, {}, `/v1/app/customer/identify?handoff=${handoff}`);
    expect(queryOnly.status).toBe(400);
    expect(firstError(queryOnly).code).toBe('INVALID_QUERY');
    expect((await identify(store.identifyKey, { handoff })).status).toBe(200);
  });

  it.each([
    ['no handoff', {}, 'handoff'],
    ['a numeric handoff', { handoff: 5 }, 'handoff'],
    ['an unknown field', { handoff: 'x', customer_id: 1 }, 'customer_id'],
  ])('rejects a body with %s (422)', async (_case, body, field) => {
    const store = await newStore();
    const res = await identify(store.identifyKey, body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
  });

  it('needs an API key with customers:identify: none or unknown 401, operator token or other scope 403, revoked 401 at once', async () => {
    const { store, cookie } = await loggedIn();
    const { key } = await createApiKey(store.storeId, ['customers:identify']);
    expect((await identify(key, { handoff: await handoffOf(store.domain, cookie) })).status).toBe(200);
    const handoff = await handoffOf(store.domain, cookie);
    for (const res of [await identify(undefined, { handoff }), await identify('sak_unknown', { handoff })]) {
      expect(res.status).toBe(401);
      expect(firstError(res).code).toBe('UNAUTHENTICATED');
    }
    const operator = await identify(store.token, { handoff });
    expect(operator.status).toBe(403);
    expect(firstError(operator).code).toBe('FORBIDDEN');
    const { key: otherScope } = await createApiKey(store.storeId, ['orders:read']);
    const scoped = await identify(otherScope, { handoff });
    expect(scoped.status).toBe(403);
    expect(firstError(scoped).code).toBe('INSUFFICIENT_SCOPE');

    // The key that just worked stops on the very next request after its revocation.
    expect(await revokeCredential(key, 'api_key', store.storeId)).toBe(true);
    const revoked = await identify(key, { handoff });
    expect(revoked.status).toBe(401);
    // None of those attempts consumed it.
    expect((await identify(store.identifyKey, { handoff })).status).toBe(200);
  });

  it('gives exactly one 200 when 50 exchanges of one handoff race, in each of 20 rounds', async () => {
    const { store, cookie } = await loggedIn();
    for (let round = 0; round < 20; round++) {
      // 20 issues per minute: rounds past that use a second customer.
      const handoff = await handoffOf(store.domain, round < 10 ? cookie : (await sessionLogin(store.domain)).cookie);
      const results = await Promise.all(Array.from({ length: 50 }, () => identify(store.identifyKey, { handoff })));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      const failures = results.filter((r) => r.status !== 200);
      expect(failures).toHaveLength(49);
      for (const res of failures) expectInvalid(res);
    }
  });
});

describe('DynamoDB calls per request (x-local-dynamodb-calls)', () => {
  const calls = dynamoDbCalls;

  it('issue: BatchGet (domain + session) + customer Get + one TransactWrite; identify: key Get + one conditional Delete', async () => {
    const { store, cookie } = await loggedIn();
    const issued = await issue(store.domain, cookie);
    expect(calls(issued)).toBe(3);
    expect(calls(await identify(store.identifyKey, { handoff: issued.body.handoff }))).toBe(2);
    // A used handoff costs the same Delete; a malformed one never reaches the table.
    expect(calls(await identify(store.identifyKey, { handoff: issued.body.handoff }))).toBe(2);
    expect(calls(await identify(store.identifyKey, { handoff: 'nonsense' }))).toBe(1);
  });
});
