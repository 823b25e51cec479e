import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { discountKey } from '#lib/db/discount.ts';
import { getOrder, getOrderByInternalId } from '#lib/db/order.ts';
import { encodeCursor } from '#lib/db/order-list.ts';
import { serverKeys } from '#lib/server-secret.ts';
import { buyerLogin } from '../support/buyer.ts';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

type Store = Awaited<ReturnType<typeof newStore>>;
type Command = { command: string; offline_execute?: boolean; delay_seconds?: number };

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAST = '2020-01-01T00:00:00.000Z';
const CLIENT = { client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve Smith' };

async function createPackage(store: Store, body: { name?: string; price?: number; commands?: Command[] } = {}) {
  const res = await store.post('/v1/app/package', { name: 'VIP', price: 10, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body.id as number;
}

async function createDiscount(store: Store, body: Record<string, unknown>) {
  const res = await store.post('/v1/app/discount', { type: 'VALUE', value: 5, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: number; coupon: string; uses: number };
}

async function createVariable(store: Store, body: Record<string, unknown>) {
  const res = await store.post('/v1/app/variable', { type: 'TEXT', description: 'Asked at checkout', ...body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const orderBody = (packageId: number, extra: Record<string, unknown> = {}) => ({ ...CLIENT, packages: [{ package_id: packageId, quantity: 1 }], ...extra });

async function placeOrder(store: Store, body: Record<string, unknown>) {
  const res = await store.post('/v1/app/order', body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const uses = async (store: Store, discountId: number) => (await store.get(`/v1/app/discount/${discountId}`)).body.uses as number;
const orderCount = async (store: Store) => (await store.get('/v1/app/order')).body.meta.total as number;
const queue = async (store: Store, headers: Record<string, string> = {}) => (await store.get('/v1/app/queued_commands', { headers })).body as any[];

describe('POST /v1/app/order', () => {
  it('creates a PENDING order priced from the catalog, with a snapshot of the packages; GET answers the same', async () => {
    const store = await newStore();
    const vip = await createPackage(store, { name: 'VIP', price: 9.99 });
    const kit = await createPackage(store, { name: 'Kit', price: 0.1 });
    // A ref_code must be a code of the store (section 11).
    await (await buyerLogin(store.domain)).post('/v1/webstore/affiliate/join', { ref_code: 'Some_Ref' });
    const res = await store.post('/v1/app/order', {
      ...CLIENT,
      client_social: 'steve#1234',
      packages: [
        { package_id: vip, quantity: 3 },
        { package_id: kit, quantity: 2 },
      ],
      ref_code: 'Some_Ref',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: 1,
      store_id: store.storeId,
      internal_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      status: 'PENDING',
      subtotal: 30.17,
      promo_discount: 0,
      coupon_discount: 0,
      discount: 0,
      total: 30.17,
      ...CLIENT,
      client_social: 'steve#1234',
      packages: [
        {
          package_id: vip,
          name: 'VIP',
          price: 9.99,
          quantity: 3,
          options_price: 0,
          subtotal: 29.97,
          promo_discount: 0,
          promo_id: null,
          coupon_discount: 0,
          total: 29.97,
          variables: [],
          expires_at: null,
        },
        {
          package_id: kit,
          name: 'Kit',
          price: 0.1,
          quantity: 2,
          options_price: 0,
          subtotal: 0.2,
          promo_discount: 0,
          promo_id: null,
          coupon_discount: 0,
          total: 0.2,
          variables: [],
          expires_at: null,
        },
      ],
      variables: [],
      coupon: null,
      ref_code: 'Some_Ref',
      approved_at: null,
      canceled_at: null,
      refunded_at: null,
      chargeback_at: null,
      payment_id: null,
      gateway: null,
      paid_at: null,
      created_at: expect.stringMatching(ISO_Z),
      updated_at: res.body.created_at,
    });
    expect(Object.keys(res.body)).toEqual([
      'id',
      'store_id',
      'internal_id',
      'status',
      'subtotal',
      'promo_discount',
      'coupon_discount',
      'discount',
      'total',
      'client_identifier',
      'client_email',
      'client_name',
      'client_social',
      'packages',
      'variables',
      'coupon',
      'ref_code',
      'approved_at',
      'canceled_at',
      'refunded_at',
      'chargeback_at',
      'payment_id',
      'gateway',
      'paid_at',
      'created_at',
      'updated_at',
    ]);
    const got = await store.get(`/v1/app/order/${res.body.id}`);
    expect(got.body).toEqual(res.body);
    // credential + GetItem
    expect(dynamoDbCalls(got)).toBe(2);

    // The order keeps what was sold: a later price or name change does not reach it.
    await store.patch(`/v1/app/package/${vip}`, { price: 50, name: 'VIP+' });
    expect((await store.get(`/v1/app/order/${res.body.id}`)).body.packages[0]).toMatchObject({ package_id: vip, name: 'VIP', price: 9.99, quantity: 3, subtotal: 29.97 });
  });

  it('costs 4 DynamoDB calls without a coupon and 5 with one', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    await createDiscount(store, { coupon: 'TEN' });
    // credential + BatchGet (packages, cart index: no promo, no variable applies) + order id ADD + TransactWrite.
    // The store's variables are not read: only those the cart and its commands name (none here).
    expect(dynamoDbCalls(await store.post('/v1/app/order', orderBody(p)))).toBe(4);
    // + BatchGet of the coupon and its per-client counters
    expect(dynamoDbCalls(await store.post('/v1/app/order', orderBody(p, { coupon: 'ten' })))).toBe(5);
  });

  it('gives per-store ids and a different unguessable internal_id to every order', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const pa = await createPackage(a);
    const pb = await createPackage(b);
    const orders = await Promise.all(Array.from({ length: 5 }, () => placeOrder(a, orderBody(pa))));
    expect(orders.map((o) => o.id).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(orders.map((o) => o.internal_id)).size).toBe(5);
    expect((await placeOrder(b, orderBody(pb))).id).toBe(1);
  });

  it.each([
    ['client_identifier missing', { client_identifier: undefined }, 'client_identifier'],
    ['client_email not an e-mail', { client_email: 'nope' }, 'client_email'],
    ['client_name empty', { client_name: '  ' }, 'client_name'],
    ['client_social too long', { client_social: 'x'.repeat(256) }, 'client_social'],
    ['packages missing', { packages: undefined }, 'packages'],
    ['packages empty', { packages: [] }, 'packages'],
    ['quantity 0', { packages: [{ package_id: 1, quantity: 0 }] }, 'packages.0.quantity'],
    ['quantity 1001', { packages: [{ package_id: 1, quantity: 1001 }] }, 'packages.0.quantity'],
    ['quantity not whole', { packages: [{ package_id: 1, quantity: 1.5 }] }, 'packages.0.quantity'],
    ['package_id a string', { packages: [{ package_id: '1', quantity: 1 }] }, 'packages.0.package_id'],
    ['package_id negative', { packages: [{ package_id: -1, quantity: 1 }] }, 'packages.0.package_id'],
    [
      'a package twice',
      {
        packages: [
          { package_id: 1, quantity: 1 },
          { package_id: 1, quantity: 2 },
        ],
      },
      'packages.1.package_id',
    ],
    ['too many packages', { packages: Array.from({ length: 51 }, (_, i) => ({ package_id: i + 1, quantity: 1 })) }, 'packages'],
    ['unknown line field', { packages: [{ package_id: 1, quantity: 1, price: 0 }] }, 'packages.0.price'],
    ['variables not an array', { variables: 'x' }, 'variables'],
    [
      'a variable twice, ignoring case',
      {
        variables: [
          { name: 'a', value: '1' },
          { name: 'A', value: '2' },
        ],
      },
      'variables.1.name',
    ],
    ['variable value too long (bounds the regex input)', { variables: [{ name: 'a', value: 'x'.repeat(256) }] }, 'variables.0.value'],
    ['too many variables', { variables: Array.from({ length: 51 }, (_, i) => ({ name: `v${i}`, value: '1' })) }, 'variables'],
    ['ref_code with a space', { ref_code: 'two words' }, 'ref_code'],
    ['coupon not a string', { coupon: 5 }, 'coupon'],
    ['unknown field', { total: 0 }, 'total'],
  ])('refuses %s (422 naming the field) and creates nothing', async (_, patch, field) => {
    const store = await newStore();
    await createPackage(store);
    const body: Record<string, unknown> = { ...orderBody(1), ...patch };
    for (const [name, value] of Object.entries(patch)) if (value === undefined) delete body[name];
    const res = await store.post('/v1/app/order', body);
    expect(res.status, res.text).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect(await orderCount(store)).toBe(0);
  });

  it("refuses packages that do not exist in the store, another store's included, naming each", async () => {
    const store = await newStore();
    const other = await newStore();
    const own = await createPackage(store);
    const foreign = await createPackage(other, { name: 'Foreign' });
    const res = await store.post('/v1/app/order', {
      ...CLIENT,
      packages: [
        { package_id: own, quantity: 1 },
        { package_id: 999, quantity: 1 },
        { package_id: foreign + 1000, quantity: 1 },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['packages.1.package_id', 'packages.2.package_id']);
    expect(firstError(res).message).toBe('Package 999 does not exist in this store');
    const onlyForeign = await other.post('/v1/app/order', orderBody(foreign + 1));
    expect(firstError(onlyForeign).field).toBe('packages.0.package_id');
    expect(await orderCount(store)).toBe(0);
  });

  it('refuses an order whose packages would deliver more than 97 commands', async () => {
    const store = await newStore();
    const commands = Array.from({ length: 50 }, (_, i) => ({ command: `say ${i}` }));
    const a = await createPackage(store, { commands });
    const b = await createPackage(store, { commands });
    const res = await store.post('/v1/app/order', {
      ...CLIENT,
      packages: [
        { package_id: a, quantity: 1 },
        { package_id: b, quantity: 1 },
      ],
    });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'packages', message: expect.stringContaining('at most 97 commands') });
    expect(await orderCount(store)).toBe(0);
  });
});

describe('checkout variables of an order', () => {
  it('keeps the values under the names the store gave them, matched ignoring case', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    await createVariable(store, { name: 'Nick', required: true });
    const order = await placeOrder(store, orderBody(p, { variables: [{ name: 'nick', value: 'Steve_99' }] }));
    expect(order.variables).toEqual([{ name: 'Nick', value: 'Steve_99' }]);
  });

  it('refuses a name that is no variable of the store, and a required variable left out', async () => {
    const store = await newStore();
    const other = await newStore();
    const p = await createPackage(store);
    await createVariable(other, { name: 'server' });
    await createVariable(store, { name: 'nick', required: true });
    const unknown = await store.post(
      '/v1/app/order',
      orderBody(p, {
        variables: [
          { name: 'nick', value: 'a' },
          { name: 'server', value: 'x' },
        ],
      }),
    );
    expect(unknown.status).toBe(422);
    expect(firstError(unknown)).toMatchObject({ field: 'variables.1.name', message: 'Variable server does not exist in this store' });
    const missing = await store.post('/v1/app/order', orderBody(p));
    expect(missing.status).toBe(422);
    expect(firstError(missing)).toMatchObject({ field: 'variables', message: 'Variable nick is required for the packages of this order' });
    expect(await orderCount(store)).toBe(0);
  });

  it('asks a required variable only when it applies to an ordered package', async () => {
    const store = await newStore();
    const a = await createPackage(store, { name: 'A' });
    const b = await createPackage(store, { name: 'B' });
    await createVariable(store, { name: 'server', required: true, applies_to: [b] });
    expect((await store.post('/v1/app/order', orderBody(a))).status).toBe(200);
    const res = await store.post('/v1/app/order', orderBody(b));
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('variables');
  });

  it("checks values: an active option of a SELECT, a NUMBER, and the variable's regex on the whole value", async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const select = await createVariable(store, {
      name: 'server',
      type: 'SELECT',
      options: [
        { name: 'Survival', value: 'survival' },
        { name: 'Creative', value: 'creative' },
        { name: 'Old', value: 'old' },
      ],
    });
    await store.patch(`/v1/app/variable/${select.id}`, {
      options: [
        { name: 'Survival', value: 'survival' },
        { name: 'Creative', value: 'creative' },
      ],
    });
    await createVariable(store, { name: 'amount', type: 'NUMBER' });
    await createVariable(store, { name: 'nick', regex: '[a-z]{3,8}' });
    const attempt = (name: string, value: string) => store.post('/v1/app/order', orderBody(p, { variables: [{ name, value }] }));

    expect((await attempt('server', 'creative')).status).toBe(200);
    expect((await attempt('amount', '-12.5')).status).toBe(200);
    expect((await attempt('nick', 'steve')).status).toBe(200);
    for (const [name, value] of [
      ['server', 'old'],
      ['server', 'Creative'],
      ['amount', '12a'],
      ['nick', 'steve99'],
      ['nick', 'xsteve!'],
    ]) {
      const res = await attempt(name!, value!);
      expect(res.status, `${name}=${value}`).toBe(422);
      expect(firstError(res).field).toBe('variables.0.value');
    }
    expect(await orderCount(store)).toBe(3);
  });

  it('runs a catastrophically backtracking regex in linear time (about 12 s on the backtracking engine for this input)', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    await createVariable(store, { name: 'nick', regex: '(a|aa)+' });
    const started = Date.now();
    const res = await store.post('/v1/app/order', orderBody(p, { variables: [{ name: 'nick', value: `${'a'.repeat(40)}!` }] }));
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('variables.0.value');
    expect(Date.now() - started).toBeLessThan(5_000);
    // Backreferences need the backtracking engine: such a pattern is refused when the variable is written, so buyer input never meets it.
    const refused = await store.post('/v1/app/variable', { type: 'TEXT', description: 'Asked at checkout', name: 'twice', regex: '(ab)\\1' });
    expect(refused.status).toBe(422);
    expect(firstError(refused).field).toBe('regex');
    expect((await store.post('/v1/app/order', orderBody(p, { variables: [{ name: 'twice', value: 'abab' }] }))).status).toBe(422);
  });
});

describe('coupons on an order', () => {
  it('applies a PERCENTAGE coupon to the subtotal, found ignoring case, and counts the use', async () => {
    const store = await newStore();
    const p = await createPackage(store, { price: 19.99 });
    const coupon = await createDiscount(store, { coupon: 'Welcome10', type: 'PERCENTAGE', value: 10 });
    const order = await placeOrder(store, { ...CLIENT, packages: [{ package_id: p, quantity: 3 }], coupon: 'WELCOME10' });
    expect(order).toMatchObject({ subtotal: 59.97, discount: 6, total: 53.97, coupon: 'Welcome10' });
    expect(await uses(store, coupon.id)).toBe(1);
  });

  it('discounts only the packages in applies_to, and a VALUE coupon at most their subtotal', async () => {
    const store = await newStore();
    const cheap = await createPackage(store, { name: 'Cheap', price: 3 });
    const dear = await createPackage(store, { name: 'Dear', price: 100 });
    await createDiscount(store, { coupon: 'HALF', type: 'PERCENTAGE', value: 50, applies_to: [dear] });
    await createDiscount(store, { coupon: 'FIVE', type: 'VALUE', value: 5, applies_to: [cheap] });
    const lines = [
      { package_id: cheap, quantity: 1 },
      { package_id: dear, quantity: 1 },
    ];
    expect(await placeOrder(store, { ...CLIENT, packages: lines, coupon: 'half' })).toMatchObject({ subtotal: 103, discount: 50, total: 53 });
    expect(await placeOrder(store, { ...CLIENT, packages: lines, coupon: 'five' })).toMatchObject({ subtotal: 103, discount: 3, total: 100 });
  });

  it.each([
    ['an unknown code', { coupon: 'OTHER' }, 'NOPE', 'COUPON_NOT_FOUND'],
    ['an expired coupon', { coupon: 'OLD', expires_in: PAST }, 'OLD', 'COUPON_EXPIRED'],
    ['an order below min_price', { coupon: 'BIG', min_price: 50 }, 'BIG', 'COUPON_MIN_PRICE'],
    ['packages the coupon does not cover', { coupon: 'ELSE', applies_to: 'other' }, 'ELSE', 'COUPON_NOT_APPLICABLE'],
    ['a client not in restricted_to (e-mail)', { coupon: 'VIPS', restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['ann@example.com'] }, 'VIPS', 'COUPON_RESTRICTED'],
    ['a client not in restricted_to (identifier)', { coupon: 'IDS', restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['Alex'] }, 'IDS', 'COUPON_RESTRICTED'],
  ])('refuses %s (422, code named) and changes nothing', async (_, discount: Record<string, unknown>, code, errorCode) => {
    const store = await newStore();
    const p = await createPackage(store, { price: 10 });
    const other = await createPackage(store, { name: 'Other' });
    const created = await createDiscount(store, { ...discount, ...(discount.applies_to ? { applies_to: [other] } : {}) });
    const res = await store.post('/v1/app/order', orderBody(p, { coupon: code }));
    expect(res.status, res.text).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'coupon', code: errorCode });
    expect(await orderCount(store)).toBe(0);
    expect(await uses(store, created.id)).toBe(0);
  });

  it('lets a restricted coupon through for a listed client, ignoring case', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    await createDiscount(store, { coupon: 'VIPS', restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['STEVE@Example.com'] });
    await createDiscount(store, { coupon: 'IDS', restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['steve'] });
    expect((await store.post('/v1/app/order', orderBody(p, { coupon: 'vips' }))).status).toBe(200);
    expect((await store.post('/v1/app/order', orderBody(p, { coupon: 'ids' }))).status).toBe(200);
  });

  it('refuses a sold-out coupon', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'ONCE', max_uses: 1 });
    await placeOrder(store, orderBody(p, { coupon: 'ONCE' }));
    const res = await store.post('/v1/app/order', orderBody(p, { coupon: 'ONCE', client_email: 'ann@example.com', client_identifier: 'Ann' }));
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'coupon', code: 'COUPON_SOLD_OUT' });
    expect(await uses(store, coupon.id)).toBe(1);
    expect(await orderCount(store)).toBe(1);
  });

  it('never lets uses exceed max_uses: 20 concurrent orders on a coupon with max_uses 5', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'RUSH', max_uses: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.post('/v1/app/order', orderBody(p, { coupon: 'RUSH', client_identifier: `c${i}`, client_email: `c${i}@example.com` }))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    for (const refused of results.filter((r) => r.status !== 200)) {
      expect(refused.status, refused.text).toBe(422);
      expect(firstError(refused).code).toBe('COUPON_SOLD_OUT');
    }
    expect(await uses(store, coupon.id)).toBe(5);
    expect(await orderCount(store)).toBe(5);
    expect((await store.get(`/v1/app/discount/${coupon.id}`)).body.status).toBe('SOLD_OUT');
  });

  it('limits uses per client by limit_criteria, ignoring case, even when the orders race', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    await createDiscount(store, { coupon: 'PERMAIL', max_uses_per_client: 2, limit_criteria: 'CLIENT_EMAIL' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.post('/v1/app/order', orderBody(p, { coupon: 'PERMAIL', client_identifier: `nick${i}`, client_email: i % 2 ? 'Steve@Example.com' : 'steve@example.com' })),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    for (const refused of results.filter((r) => r.status !== 200)) expect(firstError(refused).code).toBe('COUPON_CLIENT_LIMIT');
    // Another client still may.
    expect((await store.post('/v1/app/order', orderBody(p, { coupon: 'PERMAIL', client_email: 'ann@example.com' }))).status).toBe(200);

    await createDiscount(store, { coupon: 'PERID', max_uses_per_client: 1 });
    expect((await store.post('/v1/app/order', orderBody(p, { coupon: 'PERID' }))).status).toBe(200);
    const again = await store.post('/v1/app/order', orderBody(p, { coupon: 'PERID', client_identifier: 'STEVE', client_email: 'other@example.com' }));
    expect(firstError(again)).toMatchObject({ field: 'coupon', code: 'COUPON_CLIENT_LIMIT' });
  });

  it('counts earlier uses when a per-client limit is set later', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'LATER' });
    await placeOrder(store, orderBody(p, { coupon: 'LATER' }));
    await store.patch(`/v1/app/discount/${coupon.id}`, { max_uses_per_client: 1, limit_criteria: 'CLIENT_EMAIL' });
    const res = await store.post('/v1/app/order', orderBody(p, { coupon: 'LATER', client_identifier: 'someone-else' }));
    expect(firstError(res).code).toBe('COUPON_CLIENT_LIMIT');
  });
});

describe('POST /v1/app/order/{orderId}/cancel', () => {
  it('cancels a PENDING order and gives its coupon use and per-client use back; a repeat changes nothing', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'ONE', max_uses: 1, max_uses_per_client: 1 });
    const order = await placeOrder(store, orderBody(p, { coupon: 'ONE' }));
    expect(await uses(store, coupon.id)).toBe(1);

    const res = await store.post(`/v1/app/order/${order.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...order, status: 'CANCELED', canceled_at: expect.stringMatching(ISO_Z), updated_at: res.body.canceled_at });
    // credential + GetItem + TransactWrite, which finds the coupon at max_uses (1): the release that makes it usable
    // again, so the round is read and written again with the discount status snapshot's bump (lib/db/coupon-use.ts)
    expect(dynamoDbCalls(res)).toBe(5);
    expect(await uses(store, coupon.id)).toBe(0);
    expect((await store.get(`/v1/app/order/${order.id}`)).body).toEqual(res.body);

    const again = await store.post(`/v1/app/order/${order.id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(dynamoDbCalls(again)).toBe(2);
    expect(await uses(store, coupon.id)).toBe(0);

    // The same client may use it again: both counts were given back.
    expect((await store.post('/v1/app/order', orderBody(p, { coupon: 'ONE' }))).status).toBe(200);
    expect(await uses(store, coupon.id)).toBe(1);
  });

  it('releases once when 10 cancels race', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'RACE' });
    await placeOrder(store, orderBody(p, { coupon: 'RACE' }));
    const order = await placeOrder(store, orderBody(p, { coupon: 'RACE' }));
    const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/order/${order.id}/cancel`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await uses(store, coupon.id)).toBe(1);
  });

  it('cancels an order whose coupon was deleted, without bringing the coupon back', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const coupon = await createDiscount(store, { coupon: 'GONE' });
    const order = await placeOrder(store, orderBody(p, { coupon: 'GONE' }));
    expect((await store.delete(`/v1/app/discount/${coupon.id}`)).status).toBe(204);
    const res = await store.post(`/v1/app/order/${order.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('CANCELED');
    expect((await db.send(new GetCommand({ TableName: TABLE, Key: discountKey(store.storeId, coupon.id) }))).Item).toBeUndefined();
    expect((await store.get(`/v1/app/discount/${coupon.id}`)).status).toBe(404);
  });

  it('refuses to cancel an APPROVED order (409), and to approve a CANCELED one', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'deliver {order_id}' }] });
    const approved = await placeOrder(store, orderBody(p));
    await store.post(`/v1/app/order/${approved.id}/approve`);
    const cancel = await store.post(`/v1/app/order/${approved.id}/cancel`);
    expect(cancel.status).toBe(409);
    expect((await store.get(`/v1/app/order/${approved.id}`)).body.status).toBe('APPROVED');

    const canceled = await placeOrder(store, orderBody(p));
    await store.post(`/v1/app/order/${canceled.id}/cancel`);
    const approve = await store.post(`/v1/app/order/${canceled.id}/approve`);
    expect(approve.status).toBe(409);
    expect((await store.get(`/v1/app/order/${canceled.id}`)).body.status).toBe('CANCELED');
    expect(await queue(store)).toHaveLength(1);
  });
});

describe('POST /v1/app/order/{orderId}/approve', () => {
  it('approves once and queues every command of every package with its placeholders rendered', async () => {
    const store = await newStore();
    await createVariable(store, { name: 'Server' });
    await createVariable(store, { name: 'unused' });
    const vip = await createPackage(store, {
      name: 'VIP',
      commands: [
        { command: 'lp user {client_identifier} parent add vip {server} x{quantity}' },
        { command: 'mail {client_email} "{client_name}" {client_social} #{order_id} {internal_id} [{unused}] {unknown}', offline_execute: false },
      ],
    });
    const kit = await createPackage(store, { name: 'Kit', commands: [{ command: 'give {CLIENT_IDENTIFIER} kit {quantity}' }] });
    const order = await placeOrder(store, {
      ...CLIENT,
      client_social: 'steve#1',
      packages: [
        { package_id: vip, quantity: 2 },
        { package_id: kit, quantity: 5 },
      ],
      variables: [{ name: 'server', value: 'survival {client_name}' }],
    });

    const res = await store.post(`/v1/app/order/${order.id}/approve`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...order, status: 'APPROVED', approved_at: expect.stringMatching(ISO_Z), updated_at: res.body.approved_at });
    // credential + GetItem + command ids ADD + TransactWrite (order + commands)
    expect(dynamoDbCalls(res)).toBe(4);

    const queued = await store.get('/v1/app/queued_commands');
    expect(queued.status).toBe(200);
    expect(dynamoDbCalls(queued)).toBe(2);
    const snapshot = {
      ...CLIENT,
      client_social: 'steve#1',
      internal_id: order.internal_id,
      variables: [{ name: 'Server', value: 'survival {client_name}' }],
    };
    expect(queued.body).toEqual([
      {
        id: 1,
        store_id: store.storeId,
        command: 'lp user Steve parent add vip survival {client_name} x2',
        offline_execute: true,
        execute_at: res.body.approved_at,
        order: snapshot,
      },
      {
        id: 2,
        store_id: store.storeId,
        command: `mail steve@example.com "Steve Smith" steve#1 #${order.id} ${order.internal_id} [] {unknown}`,
        offline_execute: false,
        execute_at: res.body.approved_at,
        order: snapshot,
      },
      // Built-ins are lower case: {CLIENT_IDENTIFIER} is no placeholder.
      { id: 3, store_id: store.storeId, command: 'give {CLIENT_IDENTIFIER} kit 5', offline_execute: true, execute_at: res.body.approved_at, order: snapshot },
    ]);
    expect(Object.keys(queued.body[0])).toEqual(['id', 'store_id', 'command', 'offline_execute', 'execute_at', 'order']);

    const again = await store.post(`/v1/app/order/${order.id}/approve`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(dynamoDbCalls(again)).toBe(2);
    expect(await queue(store)).toHaveLength(3);
  });

  it('renders an empty client_social as nothing', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'x[{client_social}]' }] });
    const order = await placeOrder(store, orderBody(p));
    await store.post(`/v1/app/order/${order.id}/approve`);
    expect((await queue(store)).map((c) => c.command)).toEqual(['x[]']);
  });

  it('sets execute_at to approval + delay_seconds: a delayed command stays off the queue until due', async () => {
    const store = await newStore();
    const p = await createPackage(store, {
      commands: [{ command: 'now' }, { command: 'in two seconds', delay_seconds: 2 }, { command: 'in an hour', delay_seconds: 3600 }],
    });
    const order = await placeOrder(store, orderBody(p));
    const approved = (await store.post(`/v1/app/order/${order.id}/approve`)).body;
    const approvedAt = Date.parse(approved.approved_at);
    expect((await queue(store)).map((c) => c.command)).toEqual(['now']);

    // Two seconds later (the local stack's pinned clock): the delayed command has come due, the hour-long one not.
    const due = await queue(store, atTime(approved.approved_at, 2000));
    expect(due.map((c) => [c.command, c.execute_at])).toEqual([
      ['now', approved.approved_at],
      ['in two seconds', new Date(approvedAt + 2000).toISOString()],
    ]);
  });

  it('lists the queue oldest first across orders', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'first {order_id}' }] });
    const q = await createPackage(store, { name: 'Q', commands: [{ command: 'second {order_id}' }] });
    const a = await placeOrder(store, orderBody(p));
    const b = await placeOrder(store, orderBody(q));
    const first = (await store.post(`/v1/app/order/${b.id}/approve`)).body;
    await store.post(`/v1/app/order/${a.id}/approve`, undefined, { headers: atTime(first.approved_at, 1000) });
    expect((await queue(store, atTime(first.approved_at, 1000))).map((c) => c.command)).toEqual([`second ${b.id}`, `first ${a.id}`]);
  });

  it('approves once when 10 approvals race: one set of commands and one commission', async () => {
    const store = await newStore();
    await store.patch('/v1/app/store', { affiliate: { percent_commission: 10 } });
    const buyer = await buyerLogin(store.domain);
    expect((await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'Ana_Games' })).status).toBe(200);
    const p = await createPackage(store, { price: 25, commands: [{ command: 'a' }, { command: 'b' }] });
    const order = await placeOrder(store, { ...orderBody(p), packages: [{ package_id: p, quantity: 2 }], ref_code: 'ana_games' });

    const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/order/${order.id}/approve`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.body.approved_at)).size).toBe(1);
    expect((await queue(store)).map((c) => c.command)).toEqual(['a', 'b']);

    const panel = (await buyer.get('/v1/webstore/affiliate/me')).body;
    expect(panel).toMatchObject({ balance: 5, stats: { total_sales: 1, total_amount: 50 } });
    const statement = (await buyer.get('/v1/webstore/affiliate/transactions')).body.data;
    expect(statement).toHaveLength(1);
    expect(statement[0]).toMatchObject({ operation: 'COMMISSION', amount: 5, order_id: order.id, order_packages: [{ package_id: p, name: 'VIP', quantity: 2 }] });

    // Later approvals find nothing owed: no commission call.
    expect(dynamoDbCalls(await store.post(`/v1/app/order/${order.id}/approve`))).toBe(2);

    const next = await placeOrder(store, { ...orderBody(p), ref_code: 'Ana_Games' });
    const approved = await store.post(`/v1/app/order/${next.id}/approve`);
    // credential + GetItem + ids ADD + TransactWrite + creditCommission (ref, affiliate, id ADD, TransactWrite) + flag cleared
    expect(dynamoDbCalls(approved)).toBe(9);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.balance).toBe(7.5);
  });

  it('approves an order whose ref_code no affiliate holds any more (its link deleted since), crediting nothing', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const buyer = await buyerLogin(store.domain);
    await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'Ana_Main' });
    const link = (await buyer.post('/v1/webstore/affiliate/link', { name: 'Video', ref_code: 'nobody' })).body;
    const order = await placeOrder(store, orderBody(p, { ref_code: 'nobody' }));
    expect((await buyer.delete(`/v1/webstore/affiliate/link/${link.id}`)).status).toBe(204);
    const res = await store.post(`/v1/app/order/${order.id}/approve`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'APPROVED', ref_code: 'nobody' });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toMatchObject({ balance: 0, stats: { total_sales: 0 } });
    // credential + GetItem + TransactWrite (no commands: no ids) + ref sentinel GetItem + flag cleared
    expect(dynamoDbCalls(res)).toBe(5);
    expect(dynamoDbCalls(await store.post(`/v1/app/order/${order.id}/approve`))).toBe(2);
  });

  it('answers 404 for a missing order or a path id that is no id', async () => {
    const store = await newStore();
    expect(firstError(await store.post('/v1/app/order/999/approve'))).toMatchObject({ message: 'Order not found' });
    expect((await store.post('/v1/app/order/abc/approve')).status).toBe(404);
    expect((await store.post('/v1/app/order/999/cancel')).status).toBe(404);
    expect((await store.get('/v1/app/order/0')).status).toBe(404);
  });
});

describe('PATCH /v1/app/command/{commandId}', () => {
  async function approvedWithCommands(store: Store, commands: Command[]) {
    const p = await createPackage(store, { commands });
    const order = await placeOrder(store, orderBody(p));
    await store.post(`/v1/app/order/${order.id}/approve`);
    return order;
  }

  it('takes a command off the queue with DONE and puts it back with PENDING; answers the command', async () => {
    const store = await newStore();
    const order = await approvedWithCommands(store, [{ command: 'one' }, { command: 'two' }]);
    const done = await store.patch('/v1/app/command/1', { status: 'DONE', response: 'ok' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      id: 1,
      store_id: store.storeId,
      order_id: order.id,
      package_id: order.packages[0].package_id,
      command: 'one',
      offline_execute: true,
      execute_at: expect.stringMatching(ISO_Z),
      status: 'DONE',
      tries: 0,
      response: 'ok',
      server_id: null,
      stage: 'APPROVED',
      attempt: 0,
      created_at: expect.stringMatching(ISO_Z),
      updated_at: expect.stringMatching(ISO_Z),
    });
    // credential + GetItem + (command 2 waited for it) chain GetItem + BatchGet of command 2 + TransactWrite
    expect(dynamoDbCalls(done)).toBe(5);
    expect((await queue(store)).map((c) => c.id)).toEqual([2]);

    const repeated = await store.patch('/v1/app/command/1', { status: 'DONE' });
    expect(repeated.body).toMatchObject({ status: 'DONE', response: 'ok', tries: 0 });
    expect((await queue(store)).map((c) => c.id)).toEqual([2]);

    expect((await store.patch('/v1/app/command/1', { status: 'PENDING' })).body.status).toBe('PENDING');
    expect((await queue(store)).map((c) => c.id)).toEqual([1, 2]);
    expect((await store.patch('/v1/app/command/2', { status: 'CANCELED' })).body.status).toBe('CANCELED');
    expect((await queue(store)).map((c) => c.id)).toEqual([1]);
  });

  it('counts a try per FAILED report, not per repetition of the same report', async () => {
    const store = await newStore();
    await approvedWithCommands(store, [{ command: 'one' }]);
    const failed = await store.patch('/v1/app/command/1', { status: 'FAILED', response: 'player offline' });
    expect(failed.body).toMatchObject({ status: 'FAILED', tries: 1, response: 'player offline' });
    // credential + GetItem + PutItem conditioned on the revision read
    expect(dynamoDbCalls(failed)).toBe(3);
    expect(await queue(store)).toEqual([]);
    const repeated = await store.patch('/v1/app/command/1', { status: 'FAILED', response: 'still offline' });
    expect(repeated.body).toMatchObject({ status: 'FAILED', tries: 1, response: 'still offline' });
    expect(dynamoDbCalls(repeated)).toBe(3);
    await store.patch('/v1/app/command/1', { status: 'PENDING' });
    expect((await store.patch('/v1/app/command/1', { status: 'FAILED' })).body).toMatchObject({ tries: 2, response: 'still offline' });
    const raced = await Promise.all([1, 2, 3].map(() => store.patch('/v1/app/command/1', { status: 'FAILED' })));
    expect(raced.map((r) => r.body.tries)).toEqual([2, 2, 2]);
  });

  it.each([
    ['an unknown status', { status: 'RUNNING' }, 'status'],
    ['no status', { response: 'x' }, 'status'],
    ['a response too long', { status: 'DONE', response: 'x'.repeat(4001) }, 'response'],
    ['an unknown field', { status: 'DONE', tries: 0 }, 'tries'],
  ])('refuses %s (422) and changes nothing', async (_, body, field) => {
    const store = await newStore();
    await approvedWithCommands(store, [{ command: 'one' }]);
    const res = await store.patch('/v1/app/command/1', body);
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect((await queue(store)).map((c) => c.id)).toEqual([1]);
  });

  it('answers 404 for an unknown command', async () => {
    const store = await newStore();
    const res = await store.patch('/v1/app/command/5', { status: 'DONE' });
    expect(res.status).toBe(404);
    expect(firstError(res).message).toBe('Command not found');
    expect((await store.patch('/v1/app/command/5', { status: 'FAILED' })).status).toBe(404);
  });
});

describe('POST /v1/app/order/{orderId}/command/resend', () => {
  it('puts every command of the order back on the queue', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'one' }, { command: 'two' }] });
    const other = await createPackage(store, { name: 'Other', commands: [{ command: 'three' }] });
    const order = await placeOrder(store, orderBody(p));
    const second = await placeOrder(store, orderBody(other));
    await store.post(`/v1/app/order/${order.id}/approve`);
    await store.post(`/v1/app/order/${second.id}/approve`);
    await store.patch('/v1/app/command/1', { status: 'DONE' });
    await store.patch('/v1/app/command/2', { status: 'FAILED' });
    await store.patch('/v1/app/command/3', { status: 'DONE' });
    expect(await queue(store)).toEqual([]);

    const res = await store.post(`/v1/app/order/${order.id}/command/resend`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ order_id: order.id, resent: 2 });
    // credential + order GetItem + one BatchGet (the commands and their chain) + TransactWrite (commands + chain restarted)
    expect(dynamoDbCalls(res)).toBe(4);
    // Both PENDING again (the chain restarted in the same write).
    expect((await queue(store)).map((c) => c.command)).toEqual(['one', 'two']);
    expect((await store.patch('/v1/app/command/2', { status: 'DONE' })).body.tries).toBe(1);
    // An order of one command has no chain: the same calls, the chain's key simply found empty.
    const single = await store.post(`/v1/app/order/${second.id}/command/resend`);
    expect(single.body).toEqual({ order_id: second.id, resent: 1 });
    expect(dynamoDbCalls(single)).toBe(4);
  });

  it('refuses an order that is not APPROVED (409) and answers 404 for a missing one', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'one' }] });
    const order = await placeOrder(store, orderBody(p));
    expect((await store.post(`/v1/app/order/${order.id}/command/resend`)).status).toBe(409);
    expect((await store.post('/v1/app/order/77/command/resend')).status).toBe(404);
  });
});

describe('GET /v1/app/order', () => {
  /** Seven orders: ids 1..7, 1/3/5/7 with package A, even ones with B; 2 and 3 approved, 4 canceled. */
  async function seed() {
    const store = await newStore();
    const a = await createPackage(store, { name: 'A' });
    const b = await createPackage(store, { name: 'B' });
    const orders = [];
    for (let i = 1; i <= 7; i++) {
      orders.push(await placeOrder(store, orderBody(i % 2 ? a : b)));
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await store.post('/v1/app/order/2/approve');
    await store.post('/v1/app/order/3/approve');
    await store.post('/v1/app/order/4/cancel');
    return { store, a, b, orders };
  }

  const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((o) => o.id);

  async function walk(store: Store, query: string, pageSize: number) {
    const seen: number[] = [];
    let cursor = '';
    for (let round = 0; round < 20; round++) {
      const res = await store.get(`/v1/app/order?page_cursor=${encodeURIComponent(cursor)}&page_size=${pageSize}${query}`);
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body)).toEqual(['data', 'next_cursor']);
      seen.push(...ids(res));
      if (res.body.next_cursor === null) return seen;
      cursor = res.body.next_cursor;
    }
    throw new Error('cursor never ended');
  }

  it('pages newest first with the full meta, keeping filters in the URLs', async () => {
    const { store, a } = await seed();
    const first = await store.get('/v1/app/order?limit=3');
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual([7, 6, 5]);
    expect(first.body.meta).toEqual({
      total: 7,
      per_page: 3,
      current_page: 1,
      last_page: 3,
      first_page: 1,
      first_page_url: '/v1/app/order?page=1&limit=3',
      last_page_url: '/v1/app/order?page=3&limit=3',
      next_page_url: '/v1/app/order?page=2&limit=3',
      previous_page_url: null,
    });
    // The credential, the list's count and one Query of `limit` orders.
    expect(dynamoDbCalls(first)).toBe(3);
    expect(ids(await store.get('/v1/app/order?limit=3&page=3'))).toEqual([1]);
    expect(ids(await store.get('/v1/app/order?limit=3&page=4'))).toEqual([]);
    const filtered = await store.get(`/v1/app/order?package=${a}&status=PENDING`);
    expect(ids(filtered)).toEqual([7, 5, 1]);
    expect(filtered.body.meta.first_page_url).toBe(`/v1/app/order?page=1&limit=20&package=${a}&status=PENDING`);
    expect(ids(await store.get('/v1/app/order?status=APPROVED'))).toEqual([3, 2]);
    expect(ids(await store.get('/v1/app/order?status=CANCELED'))).toEqual([4]);
  });

  it('filters by created_at with from and to (inclusive, any offset)', async () => {
    const { store, orders } = await seed();
    const from = orders[2].created_at;
    const to = orders[4].created_at;
    expect(ids(await store.get(`/v1/app/order?from=${from}&to=${to}`))).toEqual([5, 4, 3]);
    expect(ids(await store.get(`/v1/app/order?from=${from}`))).toEqual([7, 6, 5, 4, 3]);
    expect(ids(await store.get(`/v1/app/order?to=${to}`))).toEqual([5, 4, 3, 2, 1]);
    const shifted = new Date(Date.parse(to) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(ids(await store.get(`/v1/app/order?to=${encodeURIComponent(shifted)}&status=PENDING`))).toEqual([5, 1]);
    expect(await walk(store, `&from=${from}&to=${to}`, 2)).toEqual([5, 4, 3]);
  });

  it('walks every order newest first in cursor mode, without duplicates, with and without filters', async () => {
    const { store, a, b } = await seed();
    expect(await walk(store, '', 3)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await walk(store, '', 7)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await walk(store, '', 1)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await walk(store, `&package=${a}`, 2)).toEqual([7, 5, 3, 1]);
    expect(await walk(store, '&status=PENDING', 2)).toEqual([7, 6, 5, 1]);
    expect(await walk(store, `&status=APPROVED&package=${b}`, 1)).toEqual([2]);
    expect(await walk(store, '&status=CANCELED&package=999', 5)).toEqual([]);
  });

  it('answers the first cursor page in 2 calls, with a null cursor on the last page', async () => {
    const { store } = await seed();
    const first = await store.get('/v1/app/order?page_cursor=&page_size=4');
    expect(ids(first)).toEqual([7, 6, 5, 4]);
    expect(typeof first.body.next_cursor).toBe('string');
    expect(dynamoDbCalls(first)).toBe(2);
    const last = await store.get(`/v1/app/order?page_cursor=${first.body.next_cursor}&page_size=3`);
    expect(ids(last)).toEqual([3, 2, 1]);
    expect(last.body.next_cursor).toBeNull();
    // Default page size 50.
    expect(ids(await store.get('/v1/app/order?page_cursor='))).toHaveLength(7);
  });

  it('refuses a tampered, foreign or mismatched cursor with 400', async () => {
    const { store, a } = await seed();
    const other = await newStore();
    const cursor = (await store.get('/v1/app/order?page_cursor=&page_size=2')).body.next_cursor as string;
    const [body, check] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const reencoded = Buffer.from(JSON.stringify({ ...payload, i: 1 })).toString('base64url');
    // What anyone could compute before the check was keyed: an edited position with a recomputed SHA-256.
    const unkeyed = (text: string) => createHash('sha256').update(`order-cursor:v1:${text}`).digest('base64url').slice(0, 22);
    const cases = [
      `${reencoded}.${check}`,
      `${reencoded}.${unkeyed(reencoded)}`,
      `${body}.${check!.slice(0, -1)}${check!.endsWith('A') ? 'B' : 'A'}`,
      'not-a-cursor',
      `${body}`,
      `${cursor}.x`,
    ];
    for (const bad of cases) {
      const res = await store.get(`/v1/app/order?page_cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(firstError(res)).toMatchObject({ code: 'INVALID_CURSOR', field: 'page_cursor' });
    }
    const foreign = await other.get(`/v1/app/order?page_cursor=${cursor}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.data).toBeUndefined();
    expect((await store.get(`/v1/app/order?page_cursor=${cursor}&package=${a}`)).status).toBe(400);
    expect((await store.get(`/v1/app/order?page_cursor=${cursor}&status=PENDING`)).status).toBe(400);
    // The same filters and another page size are fine.
    expect((await store.get(`/v1/app/order?page_cursor=${cursor}&page_size=10`)).status).toBe(200);
  });

  it('refuses a well-formed cursor whose position lies outside from/to with 400 (DynamoDB would refuse the start key)', async () => {
    const { store, orders } = await seed();
    const filters = { from: orders[1].created_at, to: orders[4].created_at };
    const query = `&from=${filters.from}&to=${filters.to}`;
    for (const created_at of [orders[0].created_at, orders[6].created_at]) {
      const forged = encodeCursor(store.storeId, filters, { created_at, id: 1 }, await serverKeys());
      const res = await store.get(`/v1/app/order?page_cursor=${forged}${query}`);
      expect(res.status, res.text).toBe(400);
      expect(firstError(res)).toMatchObject({ code: 'INVALID_CURSOR', field: 'page_cursor' });
    }
    // A position on a bound is inside: the page resumes after it.
    const onBound = encodeCursor(store.storeId, filters, { created_at: orders[4].created_at, id: 5 }, await serverKeys());
    expect(ids(await store.get(`/v1/app/order?page_cursor=${onBound}${query}`))).toEqual([4, 3, 2]);
  });

  it.each([
    ['limit=101', 422],
    ['page=abc', 400],
    ['page_cursor=&page_size=201', 422],
    ['page_cursor=&page_size=0', 422],
    ['status=DONE', 422],
    ['from=yesterday', 400],
    ['package=abc', 400],
    [`page_cursor=${'a'.repeat(600)}`, 400],
    ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 422],
  ])('refuses %s', async (query, status) => {
    const store = await newStore();
    expect((await store.get(`/v1/app/order?${query}`)).status).toBe(status);
  });
});

describe('an approval racing a cancel', () => {
  it('lets exactly one of them happen, and the loser answers 409', async () => {
    const store = await newStore();
    const p = await createPackage(store, { commands: [{ command: 'deliver' }] });
    const coupon = await createDiscount(store, { coupon: 'RACE' });
    for (let round = 0; round < 5; round++) {
      const order = await placeOrder(store, orderBody(p, { coupon: 'RACE' }));
      const [approve, cancel] = await Promise.all([store.post(`/v1/app/order/${order.id}/approve`), store.post(`/v1/app/order/${order.id}/cancel`)]);
      expect([approve.status, cancel.status].sort()).toEqual([200, 409]);
      const final = (await store.get(`/v1/app/order/${order.id}`)).body.status;
      expect(final).toBe(approve.status === 200 ? 'APPROVED' : 'CANCELED');
    }
    const approvedCount = (await store.get('/v1/app/order?status=APPROVED')).body.meta.total;
    expect(await queue(store)).toHaveLength(approvedCount);
    expect(await uses(store, coupon.id)).toBe(approvedCount);
  });
});

describe('getOrder and getOrderByInternalId (for other modules)', () => {
  it("find an order by id or internal_id in its own store only, else 404 'Order not found'", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const order = await placeOrder(a, orderBody(await createPackage(a)));
    expect(await getOrder(a.storeId, order.id)).toEqual(order);
    expect(await getOrderByInternalId(a.storeId, order.internal_id)).toEqual(order);
    for (const lookup of [
      () => getOrder(b.storeId, order.id),
      () => getOrder(a.storeId, order.id + 1),
      () => getOrderByInternalId(b.storeId, order.internal_id),
      () => getOrderByInternalId(a.storeId, 'A'.repeat(22)),
      () => getOrderByInternalId(a.storeId, '../ORDER#1'),
    ]) {
      await expect(lookup()).rejects.toMatchObject({ status: 404, message: 'Order not found' });
    }
  });
});

describe('tenancy', () => {
  it("answers 404 to another store for an order and a command, and keeps each store's queue and list its own", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const p = await createPackage(a, { commands: [{ command: 'a-only' }] });
    const order = await placeOrder(a, orderBody(p));
    await a.post(`/v1/app/order/${order.id}/approve`);

    expect((await b.get(`/v1/app/order/${order.id}`)).status).toBe(404);
    expect((await b.post(`/v1/app/order/${order.id}/approve`)).status).toBe(404);
    expect((await b.post(`/v1/app/order/${order.id}/cancel`)).status).toBe(404);
    expect((await b.post(`/v1/app/order/${order.id}/command/resend`)).status).toBe(404);
    expect((await b.patch('/v1/app/command/1', { status: 'DONE' })).status).toBe(404);
    expect(await queue(b)).toEqual([]);
    expect((await b.get('/v1/app/order')).body.data).toEqual([]);
    expect((await b.get('/v1/app/order?page_cursor=')).body).toEqual({ data: [], next_cursor: null });
    expect((await queue(a)).map((c) => c.command)).toEqual(['a-only']);
  });
});
