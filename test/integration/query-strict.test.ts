import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteSpec } from '#lib/http/route.ts';
import { queryParameterNames } from '#lib/http/validate.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { buyerLogin, sessionLogin } from '../support/buyer.ts';
import { call, dynamoDbCalls, newStore, type ApiResponse, type CallOptions } from '../support/client.ts';
import { createServer } from '../support/delivery.ts';

/**
 * Query strings are as strict as bodies, on every route of the table: each request below carries
 * a valid credential of the route's kind (so the refusal is the query's, not the credential's),
 * and a name the route does not take, or a name it takes sent twice, is a 400 naming it before
 * anything is read or written. Driven by the route table: a new route is covered automatically.
 */
const concretePath = (path: string) => path.replace(/\{[^}]+\}/g, '1');

let credentials: (spec: RouteSpec) => CallOptions;
let store: Awaited<ReturnType<typeof newStore>>;

beforeAll(async () => {
  store = await newStore();
  const buyer = await buyerLogin(store.domain);
  const session = await sessionLogin(store.domain);
  const server = await createServer(store);
  const storeDomain = { 'x-store-domain': store.domain };
  const byKind: Record<RouteSpec['credential'], (spec: RouteSpec) => CallOptions> = {
    operator: () => ({ token: store.token }),
    apiKey: (spec) => ({ token: spec.scope === 'delivery' ? server.key : store.identifyKey }),
    buyer: () => ({ token: buyer.token, headers: storeDomain }),
    buyerStore: () => ({ headers: storeDomain }),
    buyerOptional: () => ({ headers: storeDomain }),
    session: () => ({ host: store.domain, cookie: session.cookie }),
    storeHost: () => ({ host: store.domain }),
    public: () => ({}),
  };
  credentials = (spec) => ({
    ...byKind[spec.credential](spec),
    // Past the JSON body parser (a POST without a JSON body is a 415 before the query is looked at).
    ...(spec.body && spec.body !== 'multipart' ? { json: {} } : {}),
  });
});

/** The refusal in the route's error style: the envelope, or `{error}` for the handoff route. */
function refusal(spec: RouteSpec, res: ApiResponse) {
  expect(res.status, res.text).toBe(400);
  if (spec.errorStyle === 'single') {
    expect(res.body).toEqual({ error: 'INVALID_QUERY' });
    return undefined;
  }
  expect(res.body.errors).toHaveLength(1);
  return res.body.errors[0] as { message: string; code: string; field: string };
}

describe('a query parameter a route does not take', () => {
  for (const [name, spec] of routeEntries()) {
    if (spec.method === 'OPTIONS') continue;
    it(`${spec.method} ${spec.path} (${name}) answers 400 naming it, having read nothing but the credential`, async () => {
      const res = await call(spec.method, `${concretePath(spec.path)}?zz_unknown=1`, credentials(spec));
      const error = refusal(spec, res);
      if (error) expect(error).toMatchObject({ code: 'INVALID_QUERY', field: 'zz_unknown', message: expect.any(String) });
      if (error && !spec.query) expect(error.message).toMatch(/takes none|never in the URL/);
      // At most the credential's reads (a session's: domain and session in one BatchGet, then its customer).
      expect(dynamoDbCalls(res)).toBeLessThanOrEqual(2);
    });

    const known = [...queryParameterNames(spec.query)];
    if (known.length === 0) continue;
    it(`${spec.method} ${spec.path} (${name}) answers 400 to ${known[0]} sent twice`, async () => {
      const res = await call(spec.method, `${concretePath(spec.path)}?${known[0]}=1&${known[0]}=2`, credentials(spec));
      const error = refusal(spec, res);
      if (error) expect(error).toMatchObject({ code: 'INVALID_QUERY', field: known[0], message: expect.stringContaining('repeated') });
    });
  }
});

describe('what a refused query changes', () => {
  it('nothing: a create with a valid body and an unknown parameter creates no tag', async () => {
    const res = await store.post('/v1/app/tag?dry_run=1', { name: 'Sale', color: '#ef4444' });
    expect(res.status).toBe(400);
    expect((await store.get('/v1/app/tag')).body.meta.total).toBe(0);
  });

  it('GET /v1/app/order?email=x was every order of the store; now a 400 naming the misspelt filter', async () => {
    const res = await store.get('/v1/app/order?mail=steve@example.com');
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'mail', message: expect.stringContaining('client_identifier') });
  });
});

describe('a browser preflight', () => {
  it('is answered whatever query it carries: it is the query of the request it precedes, judged by that route', async () => {
    const res = await call('OPTIONS', '/v1/webstore/package?limit=100&anything=1', {
      headers: { origin: `https://${store.domain}`, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-store-domain' },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(`https://${store.domain}`);
  });
});
