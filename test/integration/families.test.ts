import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { createCategory, createDiscount, createPackage, createPromo, createTag, createVariable, type Store } from '../support/builders.ts';
import { call, firstError, newStore } from '../support/client.ts';

/**
 * The shared families of tests: what every page-mode list and every JSON body must do, as one
 * table each, so a new list or a new route with a body is covered by adding a row (page mode)
 * or nothing at all (bodies: read from the route table).
 */

interface PageModeList {
  path: string;
  /** Creates the n-th item (0-based) of the list in this store. */
  seed: (store: Store, index: number) => Promise<unknown>;
}

const PAGE_MODE_LISTS: PageModeList[] = [
  { path: '/v1/app/tag', seed: (store, i) => createTag(store, { name: `tag ${i}` }) },
  { path: '/v1/app/category', seed: (store, i) => createCategory(store, { name: `category ${i}` }) },
  { path: '/v1/app/package', seed: (store, i) => createPackage(store, { name: `package ${i}` }) },
  { path: '/v1/app/promo', seed: (store, i) => createPromo(store, { name: `promo ${i}` }) },
  { path: '/v1/app/variable', seed: (store, i) => createVariable(store, { name: `variable_${i}` }) },
  { path: '/v1/app/discount', seed: (store, i) => createDiscount(store, { coupon: `CODE${i}` }) },
];

describe.each(PAGE_MODE_LISTS)('page mode of GET $path', ({ path, seed }) => {
  it('answers the requested page with the full meta, and an empty page past the last', async () => {
    const store = await newStore();
    for (let i = 0; i < 5; i++) await seed(store, i);
    const res = await store.get(`${path}?page=2&limit=2`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.meta).toEqual({
      total: 5,
      per_page: 2,
      current_page: 2,
      last_page: 3,
      first_page: 1,
      first_page_url: `${path}?page=1&limit=2`,
      last_page_url: `${path}?page=3&limit=2`,
      next_page_url: `${path}?page=3&limit=2`,
      previous_page_url: `${path}?page=1&limit=2`,
    });
    // Past the last page: no data, and the previous page is the last one that has data.
    const past = await store.get(`${path}?page=9&limit=2`);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toMatchObject({ total: 5, current_page: 9, last_page: 3, next_page_url: null, previous_page_url: `${path}?page=3&limit=2` });
  });

  it('defaults to page 1 and limit 20', async () => {
    const store = await newStore();
    const res = await store.get(path);
    expect(res.body.meta).toMatchObject({ total: 0, per_page: 20, current_page: 1, last_page: 1, next_page_url: null, previous_page_url: null });
  });

  it.each([
    ['page=abc', 400, 'page'],
    ['limit=abc', 400, 'limit'],
    ['page=0', 422, 'page'],
    ['limit=0', 422, 'limit'],
    ['limit=101', 422, 'limit'],
  ])('refuses ?%s with %i naming the parameter', async (query, status, field) => {
    const store = await newStore();
    const res = await store.get(`${path}?${query}`);
    expect(res.status).toBe(status);
    expect(firstError(res).field).toBe(field);
  });
});

/** Every operator route with a JSON body, from the route table: a new one is covered by being in it. */
const JSON_BODY_ROUTES = routeEntries().filter(([, spec]) => spec.credential === 'operator' && spec.body !== undefined && spec.body !== 'multipart');
// Ids are numbers; a provider is a name the route knows (any other is a 404 before the body is read).
const concretePath = (path: string) => path.replace('{provider}', 'mercadopago').replace(/\{[^}]+\}/g, '1');

describe.each(JSON_BODY_ROUTES)('the JSON body of %s', (_name, spec) => {
  const send = (store: Store, raw: string, contentType = 'application/json') => call(spec.method, concretePath(spec.path), { token: store.token, raw, contentType });

  it.each([
    ['text that is not JSON', '{"unterminated', 400, 'INVALID_JSON'],
    ['a JSON array', '[1, 2]', 400, undefined],
    ['a JSON string', '"text"', 400, undefined],
  ])('answers %s with %i in the envelope', async (_what, raw, status, code) => {
    const store = await newStore();
    const res = await send(store, raw);
    expect(res.status).toBe(status);
    const error = firstError(res);
    if (code) expect(error.code).toBe(code);
  });

  it('answers a body that is not JSON-typed with 415', async () => {
    const store = await newStore();
    const res = await send(store, '{}', 'text/plain');
    expect(res.status).toBe(415);
    expect(firstError(res).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});
