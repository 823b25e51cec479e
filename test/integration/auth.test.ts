import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '#lib/crypto.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { createApiToken, credentialKey, issueBuyerAccessToken, issueSession, revokeCredential } from '#lib/db/credential.ts';
import { buyerLogin } from '../support/buyer.ts';
import { call, firstError, newStore } from '../support/client.ts';

describe('operator API tokens', () => {
  it.each([
    ['no Authorization header', {}],
    ['a non-bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['an unknown token', { authorization: 'Bearer sat_unknownunknownunknownunknownunknown' }],
  ])('answers 401 UNAUTHENTICATED for %s', async (_case, headers) => {
    const res = await call('GET', '/v1/app/tag', { headers });
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('UNAUTHENTICATED');
  });

  it('checks the credential before the body: no token and a broken body is still 401', async () => {
    const res = await call('POST', '/v1/app/tag', { raw: '{not json', contentType: 'application/json' });
    expect(res.status).toBe(401);
  });

  it('stops a revoked token on the very next request, and leaves other tokens working', async () => {
    const store = await newStore();
    const second = await createApiToken(store.storeId);
    expect((await store.as(second.api_token).get('/v1/app/tag')).status).toBe(200);
    expect(await revokeCredential(second.api_token, 'api_token', store.storeId)).toBe(true);
    const res = await store.as(second.api_token).get('/v1/app/tag');
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('UNAUTHENTICATED');
    expect((await store.get('/v1/app/tag')).status).toBe(200);
  });

  it('answers 403 to an API key on an operator endpoint', async () => {
    const store = await newStore();
    const res = await store.as(store.identifyKey).get('/v1/app/tag');
    expect(res.status).toBe(403);
    expect(firstError(res).code).toBe('FORBIDDEN');
  });

  it('answers 401 to a buyer access token on an operator endpoint', async () => {
    const store = await newStore();
    const buyer = await issueBuyerAccessToken(store.storeId, 1);
    expect((await store.as(buyer.token).get('/v1/app/tag')).status).toBe(401);
  });

  it('stores secrets only as SHA-256 hashes', async () => {
    const store = await newStore();
    const item = (await db.send(new GetCommand({ TableName: TABLE, Key: credentialKey(hashSecret(store.token)) }))).Item;
    expect(item).toMatchObject({ kind: 'api_token', store_id: store.storeId });
    expect(JSON.stringify(item)).not.toContain(store.token);
    expect(JSON.stringify(item)).not.toContain(store.token.slice(4));
    const plain = await db.send(new GetCommand({ TableName: TABLE, Key: { pk: `CRED#${store.token}`, sk: '#CRED' } }));
    expect(plain.Item).toBeUndefined();
  });
});

describe('each credential only where its kind belongs', () => {
  it('refuses a session id as a buyer bearer token, and a buyer token or an API token as the session cookie', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const session = await issueSession(store.storeId, buyer.customer.id);
    // Each works where it belongs...
    expect((await buyer.get('/v1/webstore/customer/me')).status).toBe(200);
    expect((await call('GET', '/auth/handoff', { host: store.domain, cookie: `store_session=${session.sessionId}` })).status).toBe(200);
    // ...and nowhere else.
    const me = await call('GET', '/v1/webstore/customer/me', { token: session.sessionId, headers: { 'x-store-domain': store.domain } });
    expect(me.status).toBe(401);
    expect(firstError(me).code).toBe('CUSTOMER_UNAUTHENTICATED');
    for (const secret of [buyer.token, store.token]) {
      const handoff = await call('GET', '/auth/handoff', { host: store.domain, cookie: `store_session=${secret}` });
      expect(handoff.status).toBe(401);
      expect(handoff.body).toEqual({ error: 'CUSTOMER_UNAUTHENTICATED' });
    }
  });
});
