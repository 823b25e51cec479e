import { describe, expect, it } from 'vitest';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/** CORS of the storefront and buyer routes (extensions section 8). */
type Store = Awaited<ReturnType<typeof newStore>>;

const fromOrigin = (store: Store, path: string, origin: string, headers: Record<string, string> = {}) =>
  call('GET', path, { headers: { 'x-store-domain': store.domain, origin, ...headers } });
const preflight = (path: string, origin?: string) =>
  call('OPTIONS', path, { headers: { ...(origin ? { origin } : {}), 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-store-domain' } });

const allowOrigin = (res: { headers: Record<string, unknown> }) => res.headers['access-control-allow-origin'];

describe('CORS headers on storefront and buyer responses', () => {
  it('allow https://<store domain> and, on the local stack, http://<store domain>[:port]; not another origin', async () => {
    const store = await newStore();
    for (const origin of [`https://${store.domain}`, `http://${store.domain}:5173`, `http://${store.domain}`]) {
      const res = await fromOrigin(store, '/v1/webstore', origin);
      expect(res.status).toBe(200);
      expect(allowOrigin(res)).toBe(origin);
      expect(res.headers.vary).toBe('Origin');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
    for (const origin of ['https://evil.example', `https://${store.domain}:8443`, `https://x.${store.domain}`]) {
      const res = await fromOrigin(store, '/v1/webstore', origin);
      expect(res.status).toBe(200);
      expect(allowOrigin(res)).toBeUndefined();
      expect(res.headers.vary).toBe('Origin');
    }
  });

  it("allow another store's domain only for that store", async () => {
    const store = await newStore();
    const other = await newStore();
    expect(allowOrigin(await fromOrigin(store, '/v1/webstore', `https://${other.domain}`))).toBeUndefined();
  });

  it('ride on errors after the store is known (404, 401), so a page can read why', async () => {
    const store = await newStore();
    const origin = `https://${store.domain}`;
    const missing = await fromOrigin(store, '/v1/webstore/package/999', origin);
    expect(missing.status).toBe(404);
    expect(allowOrigin(missing)).toBe(origin);
    const unauthenticated = await fromOrigin(store, '/v1/webstore/customer/me', origin, { authorization: 'Bearer sbt_nope' });
    expect(unauthenticated.status).toBe(401);
    expect(allowOrigin(unauthenticated)).toBe(origin);
  });

  it('are never on operator routes', async () => {
    const store = await newStore();
    const res = await store.get('/v1/app/store', { headers: { origin: `https://${store.domain}` } });
    expect(res.status).toBe(200);
    expect(allowOrigin(res)).toBeUndefined();
  });
});

describe('allowed_origins (PATCH /v1/app/store)', () => {
  it('stores origins lower-cased, without default ports or duplicates, and allows them', async () => {
    const store = await newStore();
    expect((await store.get('/v1/app/store')).body.allowed_origins).toEqual([]);
    const res = await store.patch('/v1/app/store', { allowed_origins: ['https://Shop.Example.com:443', 'http://localhost:5173', 'https://shop.example.com'] });
    expect(res.status).toBe(200);
    expect(res.body.allowed_origins).toEqual(['https://shop.example.com', 'http://localhost:5173']);
    expect((await store.get('/v1/app/store')).body).toEqual(res.body);
    expect(dynamoDbCalls(res)).toBe(3);
    const allowed = await fromOrigin(store, '/v1/webstore/package', 'http://localhost:5173');
    expect(allowOrigin(allowed)).toBe('http://localhost:5173');
    // the policy comes with the domain lookup: still one read before the answer's own (the page's Query, one BatchGet of the
    // list's counter, the apply-all tag ids and the cart index)
    expect(dynamoDbCalls(allowed)).toBe(3);
    expect(allowOrigin(await fromOrigin(store, '/v1/webstore', 'http://localhost:5174'))).toBeUndefined();
  });

  it.each([
    ['more than 10', Array.from({ length: 11 }, (_, i) => `https://s${i}.example.com`), 'allowed_origins'],
    ['no scheme', ['shop.example.com'], 'allowed_origins.0'],
    ['a path', ['https://shop.example.com/'], 'allowed_origins.0'],
    ['another scheme', ['ftp://shop.example.com'], 'allowed_origins.0'],
    ['a port out of range', ['https://shop.example.com:70000'], 'allowed_origins.0'],
    ['a wildcard', ['*'], 'allowed_origins.0'],
    ['not a string', ['https://ok.example.com', 5], 'allowed_origins.1'],
    ['not an array', 'https://shop.example.com', 'allowed_origins'],
  ])('refuses %s with 422 naming the field, changing nothing', async (_case, value, field) => {
    const store = await newStore();
    await store.patch('/v1/app/store', { allowed_origins: ['https://kept.example.com'] });
    const res = await store.patch('/v1/app/store', { name: 'Renamed', allowed_origins: value });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await store.get('/v1/app/store')).body).toMatchObject({ name: 'Test store', allowed_origins: ['https://kept.example.com'] });
    expect((await preflight('/v1/webstore/package', 'https://kept.example.com')).status).toBe(204);
  });
});

describe('OPTIONS /v1/webstore/... (preflight, no x-store-domain)', () => {
  it("answers 204 with the allow headers for a store's own origin, on every storefront path and on /v1/webstore itself", async () => {
    const store = await newStore();
    const origin = `https://${store.domain}`;
    for (const path of ['/v1/webstore', '/v1/webstore/package/1', '/v1/webstore/customer/me']) {
      const res = await preflight(path, origin);
      expect(res.status).toBe(204);
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': expect.stringContaining('PATCH'),
        'access-control-allow-headers': 'authorization, content-type, x-store-domain, idempotency-key',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
      expect(res.text).toBe('');
      expect(dynamoDbCalls(res)).toBe(1);
    }
    expect((await preflight('/v1/webstore/category', `http://${store.domain}:3000`)).status).toBe(204);
  });

  it('answers 204 for an origin a store allows, and 403 without allow headers once it no longer does', async () => {
    const store = await newStore();
    const origin = `https://front-${store.storeId}.example.com`;
    expect((await preflight('/v1/webstore/package', origin)).status).toBe(403);
    await store.patch('/v1/app/store', { allowed_origins: [origin] });
    const allowed = await preflight('/v1/webstore/package', origin);
    expect(allowed.status).toBe(204);
    expect(allowOrigin(allowed)).toBe(origin);
    expect(dynamoDbCalls(allowed)).toBe(2);
    await store.patch('/v1/app/store', { allowed_origins: [] });
    const refused = await preflight('/v1/webstore/package', origin);
    expect(refused.status).toBe(403);
    expect(allowOrigin(refused)).toBeUndefined();
    expect(firstError(refused).code).toBe('ORIGIN_NOT_ALLOWED');
  });

  it('keeps an origin two stores list allowed until neither lists it', async () => {
    const first = await newStore();
    const second = await newStore();
    const origin = `https://shared-${first.storeId}.example.com`;
    await first.patch('/v1/app/store', { allowed_origins: [origin] });
    await second.patch('/v1/app/store', { allowed_origins: [origin] });
    await first.patch('/v1/app/store', { allowed_origins: [] });
    expect((await preflight('/v1/webstore/package', origin)).status).toBe(204);
    expect(allowOrigin(await fromOrigin(first, '/v1/webstore', origin))).toBeUndefined();
    expect(allowOrigin(await fromOrigin(second, '/v1/webstore', origin))).toBe(origin);
    await second.patch('/v1/app/store', { allowed_origins: [] });
    expect((await preflight('/v1/webstore/package', origin)).status).toBe(403);
  });

  it('follows a domain change, and keeps the allowed origins on the new domain', async () => {
    const store = await newStore();
    const oldDomain = store.domain;
    await store.patch('/v1/app/store', { allowed_origins: ['https://kept-origin.example.com'] });
    const newDomain = `moved-${store.storeId}.test.localhost`;
    expect((await store.patch('/v1/app/store', { domain: newDomain })).body.allowed_origins).toEqual(['https://kept-origin.example.com']);
    expect((await preflight('/v1/webstore/package', `https://${oldDomain}`)).status).toBe(403);
    expect((await preflight('/v1/webstore/package', `https://${newDomain}`)).status).toBe(204);
    const res = await call('GET', '/v1/webstore', { headers: { 'x-store-domain': newDomain, origin: 'https://kept-origin.example.com' } });
    expect(allowOrigin(res)).toBe('https://kept-origin.example.com');
  });

  it('refuses a foreign, malformed or missing Origin with 403 and no allow headers', async () => {
    for (const origin of ['https://evil.example', 'null', 'https://', undefined]) {
      const res = await preflight('/v1/webstore/package', origin);
      expect(res.status).toBe(403);
      expect(allowOrigin(res)).toBeUndefined();
      expect(res.headers.vary).toBe('Origin');
    }
  });
});
