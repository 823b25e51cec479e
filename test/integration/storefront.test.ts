import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { discountKey } from '#lib/db/discount.ts';
import { call, dynamoDbCalls, firstError, newStore, type CallOptions } from '../support/client.ts';

/** The public storefront routes (extensions section 8): x-store-domain, no token. */
type Store = Awaited<ReturnType<typeof newStore>>;

const storefront = (store: Store, path: string, options: CallOptions = {}) => call('GET', path, { ...options, headers: { 'x-store-domain': store.domain, ...options.headers } });

const created = async (response: Promise<{ status: number; body: any; text: string }>) => {
  const res = await response;
  expect(res.status, res.text).toBe(200);
  return res.body;
};

const PAST = '2020-01-01T00:00:00Z';
const FUTURE = '2099-01-01T00:00:00Z';
const promoBody = (fields: Record<string, unknown> = {}) => ({
  name: 'Promo',
  type: 'PROGRESSIVE',
  condition_mode: 'QUANTITY',
  starts_at: PAST,
  targets: [{ type: 'STORE' }],
  tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
  ...fields,
});

describe('GET /v1/webstore', () => {
  it('answers the store of the domain, with active_domain', async () => {
    const store = await newStore('Front');
    const res = await storefront(store, '/v1/webstore');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      store: {
        id: store.storeId,
        name: 'Front',
        domain: store.domain,
        active_domain: store.domain,
        currency: 'BRL',
        theme: { primary_color: '#2563eb', logo: null, banner: null },
        terms_url: null,
      },
    });
    expect(dynamoDbCalls(res)).toBe(2);
  });

  it("shows the store's currency and theme as the operator set them, and nothing of its payment settings", async () => {
    const store = await newStore();
    const theme = { primary_color: '#10b981', logo: 'https://cdn.example.com/logo.png', banner: 'https://cdn.example.com/banner.jpg' };
    expect((await store.patch('/v1/app/store', { currency: 'USD', theme, payments: { chargeback_on: 'DISPUTE_LOST' } })).status).toBe(200);
    const res = await storefront(store, '/v1/webstore');
    expect(res.body.store).toMatchObject({ currency: 'USD', theme });
    expect(res.body.store).not.toHaveProperty('payments');
  });

  it("shows the store's terms_url once set, and null once cleared", async () => {
    const store = await newStore();
    expect((await store.patch('/v1/app/store', { terms_url: 'https://shop.example.com/terms' })).status).toBe(200);
    expect((await storefront(store, '/v1/webstore')).body.store.terms_url).toBe('https://shop.example.com/terms');
    expect((await store.patch('/v1/app/store', { terms_url: null })).status).toBe(200);
    expect((await storefront(store, '/v1/webstore')).body.store.terms_url).toBeNull();
  });

  it("answers the official client's GET (Content-Type: application/json, empty body) as any GET", async () => {
    const store = await newStore();
    const res = await storefront(store, '/v1/webstore', { raw: '', contentType: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body.store.id).toBe(store.storeId);
    const list = await storefront(store, '/v1/webstore/package?page=1&limit=10', { raw: '', contentType: 'application/json' });
    expect(list.status).toBe(200);
  });

  it('answers 404 for an unknown domain and 400 without the header, in the envelope', async () => {
    const unknown = await call('GET', '/v1/webstore/package', { headers: { 'x-store-domain': 'nobody.test.localhost' } });
    expect(unknown.status).toBe(404);
    expect(firstError(unknown).code).toBe('NOT_FOUND');
    const missing = await call('GET', '/v1/webstore/category');
    expect(missing.status).toBe(400);
    expect(firstError(missing).code).toBe('STORE_DOMAIN_REQUIRED');
  });
});

describe('GET /v1/webstore/package and /v1/webstore/package/{id}', () => {
  it('shows an enabled package with its tags, stock and applicable fields (active options only), never its commands', async () => {
    const store = await newStore();
    const sale = await created(store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }));
    const all = await created(store.post('/v1/app/tag', { name: 'All', color: 'red', apply_to_all_packages: true }));
    const category = await created(store.post('/v1/app/category', { name: 'Ranks' }));
    const pkg = await created(
      store.post('/v1/app/package', {
        name: 'VIP',
        price: 9.9,
        description: 'Perks',
        category_id: category.id,
        stock: 4,
        tags: [sale.id],
        commands: [{ command: 'secret {nick}' }],
      }),
    );
    const other = await created(store.post('/v1/app/package', { name: 'Other', price: 1 }));
    const everywhere = await created(store.post('/v1/app/variable', { name: 'nick', type: 'TEXT', description: 'Your nick', required: true, regex: '^[a-z]+$' }));
    const color = await created(
      store.post('/v1/app/variable', {
        name: 'color',
        type: 'SELECT',
        description: 'Colour',
        applies_to: [pkg.id],
        options: [
          { name: 'Red', value: 'red', price: 1 },
          { name: 'Blue', value: 'blue' },
          { name: 'Green', value: 'green', price: 2 },
        ],
      }),
    );
    // dropping Blue deactivates it: the storefront offers the active options only
    await created(
      store.patch(`/v1/app/variable/${color.id}`, {
        options: [
          { name: 'Red', value: 'red', price: 1 },
          { name: 'Green', value: 'green', price: 2 },
        ],
      }),
    );
    await created(store.post('/v1/app/variable', { name: 'server', type: 'TEXT', description: 'Server', applies_to: [other.id] }));

    const res = await storefront(store, `/v1/webstore/package/${pkg.id}`);
    expect(res.status).toBe(200);
    const [red, green] = color.options.filter((o: { name: string }) => o.name !== 'Blue');
    expect(res.body).toEqual({
      id: pkg.id,
      name: 'VIP',
      description: 'Perks',
      price: 9.9,
      enabled: true,
      category_id: category.id,
      parent_id: null,
      image: null,
      tags: [
        { id: sale.id, name: 'Sale', color: '#ef4444' },
        { id: all.id, name: 'All', color: 'red' },
      ],
      stock: { quantity: 4, available: true },
      fields: [
        { id: everywhere.id, name: 'nick', description: 'Your nick', type: 'TEXT', required: true, regex: '^[a-z]+$', options: [] },
        { id: color.id, name: 'color', description: 'Colour', type: 'SELECT', required: false, regex: null, options: [red, green] },
      ],
    });
    expect(res.text).not.toContain('secret');
    const list = await storefront(store, '/v1/webstore/package');
    expect(list.body.data).toEqual([res.body, expect.objectContaining({ id: other.id, stock: { quantity: null, available: true } })]);
    expect(list.body.data[1].fields.map((f: { name: string }) => f.name)).toEqual(['nick', 'server']);
  });

  it('shows a sold-out package as unavailable', async () => {
    const store = await newStore();
    const pkg = await created(store.post('/v1/app/package', { name: 'Gone', price: 1, stock: 0 }));
    expect((await storefront(store, `/v1/webstore/package/${pkg.id}`)).body.stock).toEqual({ quantity: 0, available: false });
  });

  it('hides disabled packages (404 alone, absent from lists) and shows them again once enabled', async () => {
    const store = await newStore();
    const category = await created(store.post('/v1/app/category', { name: 'C' }));
    const hidden = await created(store.post('/v1/app/package', { name: 'Hidden', price: 1, enabled: false, category_id: category.id }));
    const shown = await created(store.post('/v1/app/package', { name: 'Shown', price: 1, category_id: category.id }));
    const ids = async (path: string) => (await storefront(store, path)).body.data.map((p: { id: number }) => p.id);
    const one = await storefront(store, `/v1/webstore/package/${hidden.id}`);
    expect(one.status).toBe(404);
    expect(firstError(one).message).toBe('Package not found');
    expect(await ids('/v1/webstore/package')).toEqual([shown.id]);
    expect(await ids(`/v1/webstore/package?category_id=${category.id}`)).toEqual([shown.id]);

    await created(store.patch(`/v1/app/package/${hidden.id}`, { enabled: true }));
    await created(store.patch(`/v1/app/package/${shown.id}`, { enabled: false }));
    expect(await ids('/v1/webstore/package')).toEqual([hidden.id]);
    expect(await ids(`/v1/webstore/package?category_id=${category.id}`)).toEqual([hidden.id]);
    expect((await storefront(store, `/v1/webstore/package/${hidden.id}`)).status).toBe(200);
    expect((await storefront(store, '/v1/webstore/package/999')).status).toBe(404);
  });

  it('filters by category_id, following category changes and deletions', async () => {
    const store = await newStore();
    const first = await created(store.post('/v1/app/category', { name: 'First' }));
    const second = await created(store.post('/v1/app/category', { name: 'Second' }));
    const a = await created(store.post('/v1/app/package', { name: 'A', price: 1, category_id: first.id }));
    const b = await created(store.post('/v1/app/package', { name: 'B', price: 1, category_id: first.id }));
    const none = await created(store.post('/v1/app/package', { name: 'None', price: 1 }));
    const ids = async (path: string) => (await storefront(store, path)).body.data.map((p: { id: number }) => p.id);
    expect(await ids(`/v1/webstore/package?category_id=${first.id}`)).toEqual([a.id, b.id]);
    await created(store.patch(`/v1/app/package/${b.id}`, { category_id: second.id }));
    expect(await ids(`/v1/webstore/package?category_id=${first.id}`)).toEqual([a.id]);
    expect(await ids(`/v1/webstore/package?category_id=${second.id}`)).toEqual([b.id]);
    expect((await store.delete(`/v1/app/package/${a.id}`)).status).toBe(204);
    expect(await ids(`/v1/webstore/package?category_id=${first.id}`)).toEqual([]);
    expect(await ids('/v1/webstore/package')).toEqual([b.id, none.id]);
    expect(await ids('/v1/webstore/package?category_id=999')).toEqual([]);
  });

  it('pages with limits up to 1,000 (default 20) and refuses more with 422', async () => {
    const store = await newStore();
    for (let i = 0; i < 3; i++) await created(store.post('/v1/app/package', { name: `P${i}`, price: 1 }));
    const page = await storefront(store, '/v1/webstore/package?page=2&limit=2&category_id=');
    expect(page.status).toBe(400);
    const second = await storefront(store, '/v1/webstore/package?page=2&limit=2');
    expect(second.body.meta).toMatchObject({ total: 3, per_page: 2, current_page: 2, last_page: 2, previous_page_url: '/v1/webstore/package?page=1&limit=2' });
    expect(second.body.data).toHaveLength(1);
    expect((await storefront(store, '/v1/webstore/package')).body.meta.per_page).toBe(20);
    expect((await storefront(store, '/v1/webstore/package?limit=1000')).status).toBe(200);
    const tooMany = await storefront(store, '/v1/webstore/package?limit=1001');
    expect(tooMany.status).toBe(422);
    expect(firstError(tooMany).field).toBe('limit');
  });

  it("never shows another store's packages through this store's domain", async () => {
    const store = await newStore();
    const other = await newStore();
    const category = await created(other.post('/v1/app/category', { name: 'Theirs' }));
    const theirs = await created(other.post('/v1/app/package', { name: 'Theirs', price: 1, category_id: category.id }));
    expect((await storefront(store, `/v1/webstore/package/${theirs.id}`)).status).toBe(404);
    expect((await storefront(store, '/v1/webstore/package')).body.data).toEqual([]);
    expect((await storefront(store, `/v1/webstore/package?category_id=${category.id}`)).body.data).toEqual([]);
    expect((await storefront(store, '/v1/webstore/category')).body.data).toEqual([]);
    expect((await storefront(other, `/v1/webstore/package/${theirs.id}`)).status).toBe(200);
  });
});

describe('GET /v1/webstore/category', () => {
  it('lists the categories holding enabled packages, counting them (variations included)', async () => {
    const store = await newStore();
    const ranks = await created(store.post('/v1/app/category', { name: 'Ranks' }));
    const empty = await created(store.post('/v1/app/category', { name: 'Empty' }));
    const off = await created(store.post('/v1/app/category', { name: 'Only disabled' }));
    const coins = await created(store.post('/v1/app/category', { name: 'Coins' }));
    await created(store.post('/v1/app/package', { name: 'VIP', price: 1, category_id: ranks.id }));
    const parent = await created(store.post('/v1/app/package', { name: 'Coins', price: 1, category_id: coins.id }));
    await created(store.post('/v1/app/package', { name: '100 coins', price: 1, category_id: coins.id, parent_id: parent.id }));
    await created(store.post('/v1/app/package', { name: 'Off', price: 1, category_id: off.id, enabled: false }));
    expect(empty.id).toBeDefined();

    const res = await storefront(store, '/v1/webstore/category?include_sub_categories=true');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { id: ranks.id, name: 'Ranks', parent_id: null, packages_count: 1, sub_categories: [] },
      { id: coins.id, name: 'Coins', parent_id: null, packages_count: 2, sub_categories: [] },
    ]);
    expect(res.body.meta).toMatchObject({ total: 2, per_page: 20, first_page_url: '/v1/webstore/category?page=1&limit=20&include_sub_categories=true' });
    // From the snapshot now: a page of one reads that one category.
    const second = await storefront(store, '/v1/webstore/category?page=2&limit=1');
    expect(second.body).toMatchObject({ data: [{ id: coins.id, packages_count: 2 }], meta: { total: 2 } });
  });

  it('follows enabling, disabling, moving and deleting packages', async () => {
    const store = await newStore();
    const first = await created(store.post('/v1/app/category', { name: 'First' }));
    const second = await created(store.post('/v1/app/category', { name: 'Second' }));
    const pkg = await created(store.post('/v1/app/package', { name: 'P', price: 1, category_id: first.id, enabled: false }));
    const counts = async () => (await storefront(store, '/v1/webstore/category')).body.data.map((c: { id: number; packages_count: number }) => [c.id, c.packages_count]);
    expect(await counts()).toEqual([]);
    await created(store.patch(`/v1/app/package/${pkg.id}`, { enabled: true }));
    expect(await counts()).toEqual([[first.id, 1]]);
    // sending the same value again moves nothing
    await created(store.patch(`/v1/app/package/${pkg.id}`, { enabled: true }));
    expect(await counts()).toEqual([[first.id, 1]]);
    await created(store.patch(`/v1/app/package/${pkg.id}`, { category_id: second.id }));
    expect(await counts()).toEqual([[second.id, 1]]);
    await created(store.patch(`/v1/app/package/${pkg.id}`, { category_id: first.id, enabled: false }));
    expect(await counts()).toEqual([]);
    await created(store.patch(`/v1/app/package/${pkg.id}`, { enabled: true }));
    expect((await store.delete(`/v1/app/package/${pkg.id}`)).status).toBe(204);
    expect(await counts()).toEqual([]);
    // the counts were given back exactly: the category can be deleted
    expect((await store.delete(`/v1/app/category/${first.id}`)).status).toBe(204);
  });

  it('refuses a limit above 1,000 with 422 and a malformed page with 400', async () => {
    const store = await newStore();
    expect((await storefront(store, '/v1/webstore/category?limit=1000')).status).toBe(200);
    const tooMany = await storefront(store, '/v1/webstore/category?limit=1001');
    expect(tooMany.status).toBe(422);
    expect(firstError(tooMany).field).toBe('limit');
    expect((await storefront(store, '/v1/webstore/category?page=abc')).status).toBe(400);
  });
});

describe('GET /v1/webstore/discount/{code}', () => {
  const couponFields = ['applies_to', 'coupon', 'expires_in', 'min_price', 'type', 'value'];

  it('shows a usable coupon, any case, without its restriction list or counters', async () => {
    const store = await newStore();
    await created(
      store.post('/v1/app/discount', {
        coupon: 'Welcome10',
        type: 'PERCENTAGE',
        value: 10,
        min_price: 5,
        expires_in: FUTURE,
        max_uses: 3,
        restricted_to_criteria: 'CLIENT_EMAIL',
        restricted_to: ['vip@example.com'],
      }),
    );
    const res = await storefront(store, '/v1/webstore/discount/WELCOME10');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ coupon: 'Welcome10', type: 'PERCENTAGE', value: 10, applies_to: [-1], min_price: 5, expires_in: '2099-01-01T00:00:00.000Z' });
    expect(Object.keys(res.body).sort()).toEqual(couponFields);
    expect(res.text).not.toContain('vip@example.com');
    expect((await storefront(store, '/v1/webstore/discount/welcome10')).status).toBe(200);
    expect(dynamoDbCalls(res)).toBe(2);
  });

  it('answers unknown, expired, sold-out, malformed and foreign codes with the same 404', async () => {
    const store = await newStore();
    const other = await newStore();
    await created(store.post('/v1/app/discount', { coupon: 'OLD', type: 'VALUE', value: 1, expires_in: PAST }));
    const soldOut = await created(store.post('/v1/app/discount', { coupon: 'GONE', type: 'VALUE', value: 1, max_uses: 1 }));
    await db.send(
      new UpdateCommand({ TableName: TABLE, Key: discountKey(store.storeId, soldOut.id), UpdateExpression: 'SET uses = :one', ExpressionAttributeValues: { ':one': 1 } }),
    );
    await created(other.post('/v1/app/discount', { coupon: 'THEIRS', type: 'VALUE', value: 1 }));
    await created(store.post('/v1/app/discount', { coupon: 'WELCOME10', type: 'VALUE', value: 1 }));
    const answers = await Promise.all(['NOPE', 'OLD', 'GONE', 'THEIRS', 'WELCOME', 'bad%20code'].map((code) => storefront(store, `/v1/webstore/discount/${code}`)));
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(answers[0]!.body);
    }
    expect((await storefront(other, '/v1/webstore/discount/THEIRS')).status).toBe(200);
  });
});

describe('GET /v1/webstore/promo', () => {
  it("lists the promos in force now, as the Promo resource; not disabled, future or ended ones, nor another store's", async () => {
    const store = await newStore();
    const other = await newStore();
    const open = await created(store.post('/v1/app/promo', promoBody({ name: 'Open' })));
    const bounded = await created(store.post('/v1/app/promo', promoBody({ name: 'Bounded', ends_at: FUTURE })));
    await created(store.post('/v1/app/promo', promoBody({ name: 'Disabled', enabled: false })));
    await created(store.post('/v1/app/promo', promoBody({ name: 'Future', starts_at: FUTURE })));
    await created(store.post('/v1/app/promo', promoBody({ name: 'Ended', ends_at: '2021-01-01T00:00:00Z' })));
    await created(other.post('/v1/app/promo', promoBody({ name: 'Theirs' })));
    const res = await storefront(store, '/v1/webstore/promo');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([open, bounded]);
    expect(res.body.meta).toMatchObject({ total: 2, per_page: 20 });
    // domain + the in-force snapshot, old after the promo writes: Query of the promos + the snapshot's write
    expect(dynamoDbCalls(res)).toBe(4);
    // Then the snapshot answers: domain + its GetItem + BatchGet of the page's promos.
    const again = await storefront(store, '/v1/webstore/promo?limit=1&page=2');
    expect(again.body).toMatchObject({ data: [bounded], meta: { total: 2 } });
    expect(dynamoDbCalls(again)).toBe(3);
    // A promo write makes it old again.
    const added = await created(store.post('/v1/app/promo', promoBody({ name: 'Added' })));
    expect((await storefront(store, '/v1/webstore/promo')).body.data).toEqual([open, bounded, added]);
    // So does the clock: a promo that ends passes its end without any write.
    const soon = new Date(Date.now() + 1500).toISOString();
    await created(store.post('/v1/app/promo', promoBody({ name: 'Ending', ends_at: soon })));
    expect((await storefront(store, '/v1/webstore/promo')).body.meta.total).toBe(4);
    expect((await storefront(store, '/v1/webstore/promo')).body.meta.total).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 50));
    expect((await storefront(store, '/v1/webstore/promo')).body.data).toEqual([open, bounded, added]);
  });
});

describe('DynamoDB calls per storefront request (the domain GetItem included)', () => {
  it('follow the answer, not the store', async () => {
    const store = await newStore();
    const category = await created(store.post('/v1/app/category', { name: 'C' }));
    const pkg = await created(store.post('/v1/app/package', { name: 'P', price: 1, category_id: category.id }));
    // disabled packages are never read: they are not in the storefront index
    for (let i = 0; i < 3; i++) await created(store.post('/v1/app/package', { name: `Off${i}`, price: 1, enabled: false }));
    const calls = async (path: string) => dynamoDbCalls(await storefront(store, path));
    expect(await calls('/v1/webstore')).toBe(2);
    // the categories' snapshot, old after the package writes: the categories filtered on their enabled count, the snapshot's write
    expect(await calls('/v1/webstore/category')).toBe(4);
    // then the snapshot and a BatchGet of the page
    expect(await calls('/v1/webstore/category')).toBe(3);
    // the storefront index (Query with Limit) and, in parallel, one BatchGet of the list's counter, the
    // apply-all tag ids and the cart index; no package here holds a tag and none applies to all, no
    // variable names one: no further BatchGet
    expect(await calls('/v1/webstore/package')).toBe(3);
    expect(await calls(`/v1/webstore/package?category_id=${category.id}`)).toBe(3);
    // one BatchGet of the package, the apply-all tag ids and the cart index
    expect(await calls(`/v1/webstore/package/${pkg.id}`)).toBe(2);
    expect(await calls('/v1/webstore/discount/NOPE')).toBe(2);
    // the in-force snapshot's GetItem (a new store's was never computed: it is, from its promos, once)
    expect(await calls('/v1/webstore/promo')).toBe(4);
    expect(await calls('/v1/webstore/promo')).toBe(2);
    // refused before any read: no header, a limit over 1,000; an unknown domain costs its GetItem
    expect(dynamoDbCalls(await call('GET', '/v1/webstore/category'))).toBe(0);
    expect(await calls('/v1/webstore/package?limit=1001')).toBe(1);
    expect(dynamoDbCalls(await call('GET', '/v1/webstore', { headers: { 'x-store-domain': 'nobody.test.localhost' } }))).toBe(1);
  });
});
