import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { call, newStore } from '../support/client.ts';

/** Walks every route of the table: the same table the CDK stack deploys. */
const concretePath = (path: string) => path.replace(/\{[^}]+\}/g, '1');

describe('every route of the table', () => {
  for (const [name, spec] of routeEntries()) {
    describe(`${spec.method} ${spec.path} (${name})`, () => {
      it('is served by the local stack and refuses a request without its credential', async () => {
        const host = spec.api === 'store' ? 'unknown-store.localhost' : undefined;
        const res = await call(spec.method, concretePath(spec.path), { host });
        expect(res.body?.errors?.[0]?.code ?? res.body?.error).not.toBe('ROUTE_NOT_FOUND');
        const expected: Record<string, number[]> = {
          operator: [401],
          apiKey: [401],
          buyer: [401],
          buyerStore: [400],
          buyerOptional: [400],
          session: [404],
          storeHost: [404],
          // A public route names a resource in its path (a notify key, a TEST charge): `1` is none, 404.
          public: spec.path.includes('{') ? [404] : [200],
        };
        // A preflight without an Origin is no store's: refused, like any origin that is not one.
        expect(spec.method === 'OPTIONS' ? [403] : expected[spec.credential]).toContain(res.status);
      });

      if (spec.credential === 'apiKey') {
        it('answers 403 to an operator token', async () => {
          const store = await newStore();
          expect((await call(spec.method, concretePath(spec.path), { token: store.token, json: {} })).status).toBe(403);
        });
      }
    });
  }

  it('answers 404 in the envelope for a path that is no route', async () => {
    const res = await call('GET', '/v1/app/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('the local server, as API Gateway (payload 2.0) would', () => {
  it('answers a malformed escape in a path parameter like any id that names nothing, and keeps serving', async () => {
    const store = await newStore();
    const res = await store.get('/v1/app/tag/%E0');
    expect(res.status).toBe(404);
    expect((await store.get('/v1/app/tag')).status).toBe(200);
  });

  it('joins a repeated header with commas, so two Authorization headers are no credential', async () => {
    const store = await newStore();
    const res = await call('GET', '/v1/app/tag', { headers: { authorization: [`Bearer ${store.token}`, `Bearer ${store.token}`] } });
    expect(res.status).toBe(401);
  });
});
