import { describe, expect, it } from 'vitest';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
type Store = Awaited<ReturnType<typeof newStore>>;

async function packages(store: Store, count: number): Promise<any[]> {
  const ids = [];
  for (let i = 0; i < count; i++) ids.push((await store.post('/v1/app/package', { name: `P${i}`, price: 10 })).body.id);
  return ids;
}

const progressive = (overrides: Record<string, unknown> = {}) => ({
  name: 'Spring sale',
  type: 'PROGRESSIVE',
  condition_mode: 'QUANTITY',
  starts_at: '2030-03-01T00:00:00Z',
  targets: [{ type: 'STORE' }],
  tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
  ...overrides,
});

const buyXPayY = (rewardIds: number[], overrides: Record<string, unknown> = {}) => ({
  name: 'Buy 3 pay 2',
  type: 'BUY_X_PAY_Y',
  condition_mode: 'QUANTITY',
  starts_at: '2030-03-01T00:00:00Z',
  targets: [{ type: 'STORE' }],
  tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1, targets: rewardIds.map((id) => ({ type: 'PRODUCT', id })) }],
  ...overrides,
});

const total = async (store: Store) => (await store.get('/v1/app/promo')).body.meta.total;

describe('POST /v1/app/promo', () => {
  it('creates a PROGRESSIVE promo: defaults, UTC timestamps, tiers smallest minimum first with ids', async () => {
    const store = await newStore();
    const [p1, p2] = await packages(store, 2);
    const category = (await store.post('/v1/app/category', { name: 'Ranks' })).body;
    const res = await store.post(
      '/v1/app/promo',
      progressive({
        starts_at: '2030-03-01T02:00:00+02:00',
        targets: [
          { type: 'PRODUCT', id: p1 },
          { type: 'CATEGORY', id: category.id },
          { type: 'PRODUCT', id: p2 },
        ],
        tiers: [
          { min_amount: 10, reward_type: 'PERCENTAGE', reward_value: 30 },
          { min_amount: 2, reward_type: 'VALUE', reward_value: 5, reward_quantity: null },
          { min_amount: 5, reward_type: 'PERCENTAGE', reward_value: 100, targets: [] },
        ],
      }),
    );
    expect(res.status).toBe(200);
    const promo = res.body;
    const tier = (min: number, type: string, value: number) => ({
      id: expect.any(Number),
      store_id: store.storeId,
      promo_id: promo.id,
      min_amount: min,
      reward_type: type,
      reward_value: value,
      reward_quantity: null,
      created_at: promo.created_at,
      updated_at: promo.created_at,
      targets: [],
    });
    expect(promo).toEqual({
      id: 1,
      store_id: store.storeId,
      name: 'Spring sale',
      type: 'PROGRESSIVE',
      condition_mode: 'QUANTITY',
      enabled: true,
      starts_at: '2030-03-01T00:00:00.000Z',
      ends_at: null,
      created_at: expect.stringMatching(ISO_Z),
      updated_at: promo.created_at,
      targets: [
        { type: 'PRODUCT', id: p1 },
        { type: 'CATEGORY', id: category.id },
        { type: 'PRODUCT', id: p2 },
      ],
      tiers: [tier(2, 'VALUE', 5), tier(5, 'PERCENTAGE', 100), tier(10, 'PERCENTAGE', 30)],
    });
    expect(new Set(promo.tiers.map((t: { id: number }) => t.id)).size).toBe(3);
    expect(Object.keys(promo)).toEqual(['id', 'store_id', 'name', 'type', 'condition_mode', 'enabled', 'starts_at', 'ends_at', 'created_at', 'updated_at', 'targets', 'tiers']);
    expect((await store.get(`/v1/app/promo/${promo.id}`)).body).toEqual(promo);
  });

  it('creates a BUY_X_PAY_Y promo with a FREE tier: reward_value null, reward products kept, enabled as sent', async () => {
    const store = await newStore();
    const [p1, p2] = await packages(store, 2);
    const res = await store.post(
      '/v1/app/promo',
      buyXPayY([p1, p2], {
        enabled: false,
        ends_at: '2030-04-01T00:00:00-03:00',
        condition_mode: 'VALUE',
        tiers: [{ min_amount: 49.9, reward_type: 'FREE', reward_value: null, reward_quantity: 2, targets: [{ type: 'PRODUCT', id: p2 }] }],
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enabled: false, ends_at: '2030-04-01T03:00:00.000Z', condition_mode: 'VALUE', targets: [{ type: 'STORE' }] });
    expect(res.body.targets[0]).not.toHaveProperty('id');
    expect(res.body.tiers).toEqual([
      expect.objectContaining({ min_amount: 49.9, reward_type: 'FREE', reward_value: null, reward_quantity: 2, targets: [{ type: 'PRODUCT', id: p2 }] }),
    ]);
    const percent = await store.post(
      '/v1/app/promo',
      buyXPayY([p1], { tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 50, reward_quantity: 1, targets: [{ type: 'PRODUCT', id: p1 }] }] }),
    );
    expect(percent.status).toBe(200);
    expect(percent.body.tiers[0]).toMatchObject({ reward_type: 'PERCENTAGE', reward_value: 50 });
  });

  it('allocates promo ids per store and tier ids that never repeat within a store, also in parallel', async () => {
    const a = await newStore();
    const b = await newStore();
    const tiers = [
      { min_amount: 1, reward_type: 'VALUE', reward_value: 1 },
      { min_amount: 2, reward_type: 'VALUE', reward_value: 2 },
    ];
    const results = await Promise.all(Array.from({ length: 8 }, () => a.post('/v1/app/promo', progressive({ tiers }))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.map((r) => r.body.id).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const tierIds = results.flatMap((r) => r.body.tiers.map((t: { id: number }) => t.id));
    expect(new Set(tierIds).size).toBe(16);
    expect((await b.post('/v1/app/promo', progressive())).body).toMatchObject({ id: 1, tiers: [{ id: 1 }] });
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ['name missing', progressive({ name: undefined }), 'name'],
    ['name of 36 characters', progressive({ name: 'x'.repeat(36) }), 'name'],
    ['name of 36 emoji', progressive({ name: '🎉'.repeat(36) }), 'name'],
    ['unknown type', progressive({ type: 'BOGO' }), 'type'],
    ['unknown condition_mode', progressive({ condition_mode: 'WEIGHT' }), 'condition_mode'],
    ['enabled not boolean', progressive({ enabled: 'yes' }), 'enabled'],
    ['starts_at missing', progressive({ starts_at: undefined }), 'starts_at'],
    ['starts_at without offset', progressive({ starts_at: '2030-03-01T00:00:00' }), 'starts_at'],
    ['ends_at not a date', progressive({ ends_at: 'soon' }), 'ends_at'],
    ['ends_at before starts_at', progressive({ ends_at: '2030-02-01T00:00:00Z' }), 'ends_at'],
    ['ends_at equal to starts_at', progressive({ ends_at: '2030-03-01T01:00:00+01:00' }), 'ends_at'],
    ['no targets', progressive({ targets: [] }), 'targets'],
    ['11 targets', progressive({ targets: Array.from({ length: 11 }, (_, i) => ({ type: 'PRODUCT', id: i + 1 })) }), 'targets'],
    ['target type unknown', progressive({ targets: [{ type: 'TAG', id: 1 }] }), 'targets.0.type'],
    ['PRODUCT target without id', progressive({ targets: [{ type: 'PRODUCT' }] }), 'targets.0.id'],
    ['CATEGORY target with null id', progressive({ targets: [{ type: 'CATEGORY', id: null }] }), 'targets.0.id'],
    ['STORE target with an id', progressive({ targets: [{ type: 'STORE', id: 1 }] }), 'targets.0.id'],
    ['target id not an integer', progressive({ targets: [{ type: 'PRODUCT', id: 1.5 }] }), 'targets.0.id'],
    ['target id beyond a safe integer', progressive({ targets: [{ type: 'PRODUCT', id: 1e200 }] }), 'targets.0.id'],
    ['STORE combined with a product', progressive({ targets: [{ type: 'STORE' }, { type: 'PRODUCT', id: 1 }] }), 'targets'],
    [
      'target listed twice',
      progressive({
        targets: [
          { type: 'PRODUCT', id: 1 },
          { type: 'PRODUCT', id: 1 },
        ],
      }),
      'targets.1',
    ],
    ['no tiers', progressive({ tiers: [] }), 'tiers'],
    ['11 tiers', progressive({ tiers: Array.from({ length: 11 }, (_, i) => ({ min_amount: i + 1, reward_type: 'VALUE', reward_value: 1 })) }), 'tiers'],
    [
      'repeated min_amount',
      progressive({
        tiers: [
          { min_amount: 2, reward_type: 'VALUE', reward_value: 1 },
          { min_amount: 2, reward_type: 'VALUE', reward_value: 3 },
        ],
      }),
      'tiers.1.min_amount',
    ],
    ['fractional min_amount under QUANTITY', progressive({ tiers: [{ min_amount: 1.5, reward_type: 'VALUE', reward_value: 1 }] }), 'tiers.0.min_amount'],
    ['zero min_amount under VALUE', progressive({ condition_mode: 'VALUE', tiers: [{ min_amount: 0, reward_type: 'VALUE', reward_value: 1 }] }), 'tiers.0.min_amount'],
    ['min_amount beyond the amount range', progressive({ condition_mode: 'VALUE', tiers: [{ min_amount: 1e200, reward_type: 'VALUE', reward_value: 1 }] }), 'tiers.0.min_amount'],
    ['unknown reward_type', progressive({ tiers: [{ min_amount: 1, reward_type: 'CASHBACK', reward_value: 1 }] }), 'tiers.0.reward_type'],
    ['reward_value missing', progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE' }] }), 'tiers.0.reward_value'],
    ['reward_value null for PERCENTAGE', progressive({ tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: null }] }), 'tiers.0.reward_value'],
    ['percentage above 100', progressive({ tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 100.5 }] }), 'tiers.0.reward_value'],
    ['reward_value zero', progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 0 }] }), 'tiers.0.reward_value'],
    ['reward_value too small to store', progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1e-200 }] }), 'tiers.0.reward_value'],
    ['FREE in a PROGRESSIVE promo', progressive({ tiers: [{ min_amount: 1, reward_type: 'FREE' }] }), 'tiers.0.reward_type'],
    ['reward_quantity in a PROGRESSIVE promo', progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, reward_quantity: 1 }] }), 'tiers.0.reward_quantity'],
    [
      'tier targets in a PROGRESSIVE promo',
      progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, targets: [{ type: 'PRODUCT', id: 1 }] }] }),
      'tiers.0.targets',
    ],
    ['unknown tier field', progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, id: 4 }] }), 'tiers.0.id'],
    [
      'BUY_X_PAY_Y with two tiers',
      buyXPayY([1], { tiers: [1, 2].map((min) => ({ min_amount: min, reward_type: 'FREE', reward_quantity: 1, targets: [{ type: 'PRODUCT', id: 1 }] })) }),
      'tiers',
    ],
    ['BUY_X_PAY_Y without reward_quantity', buyXPayY([1], { tiers: [{ min_amount: 3, reward_type: 'FREE', targets: [{ type: 'PRODUCT', id: 1 }] }] }), 'tiers.0.reward_quantity'],
    [
      'BUY_X_PAY_Y reward_quantity beyond a safe integer',
      buyXPayY([1], { tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1e200, targets: [{ type: 'PRODUCT', id: 1 }] }] }),
      'tiers.0.reward_quantity',
    ],
    [
      'BUY_X_PAY_Y reward_quantity zero',
      buyXPayY([1], { tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 0, targets: [{ type: 'PRODUCT', id: 1 }] }] }),
      'tiers.0.reward_quantity',
    ],
    ['BUY_X_PAY_Y without tier targets', buyXPayY([], {}), 'tiers.0.targets'],
    ['BUY_X_PAY_Y with 11 tier targets', buyXPayY(Array.from({ length: 11 }, (_, i) => i + 1)), 'tiers.0.targets'],
    [
      'BUY_X_PAY_Y tier target of type CATEGORY',
      buyXPayY([], { tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1, targets: [{ type: 'CATEGORY', id: 1 }] }] }),
      'tiers.0.targets.0.type',
    ],
    [
      'BUY_X_PAY_Y tier target without id',
      buyXPayY([], { tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1, targets: [{ type: 'PRODUCT' }] }] }),
      'tiers.0.targets.0.id',
    ],
    [
      'FREE with a reward_value',
      buyXPayY([1], { tiers: [{ min_amount: 3, reward_type: 'FREE', reward_value: 5, reward_quantity: 1, targets: [{ type: 'PRODUCT', id: 1 }] }] }),
      'tiers.0.reward_value',
    ],
    ['unknown field', progressive({ store_id: 5 }), 'store_id'],
  ];
  it.each(cases)('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    await packages(store, 1);
    const res = await store.post('/v1/app/promo', JSON.parse(JSON.stringify(body)));
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field?: string }) => e.field)).toContain(field);
    expect(res.body.errors.every((e: { code: string }) => e.code === 'VALIDATION_FAILED')).toBe(true);
    expect(await total(store)).toBe(0);
  });

  it('reports every broken rule at once', async () => {
    const store = await newStore();
    const res = await store.post(
      '/v1/app/promo',
      progressive({
        ends_at: '2020-01-01T00:00:00Z',
        tiers: [
          { min_amount: 1, reward_type: 'FREE' },
          { min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 200 },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['ends_at', 'tiers.0.reward_type', 'tiers.1.reward_value']);
  });

  it('rejects targets that do not exist with 422 naming each input field, creating nothing and holding nothing', async () => {
    const store = await newStore();
    const [p1] = await packages(store, 1);
    const category = (await store.post('/v1/app/category', { name: 'C' })).body;
    const res = await store.post(
      '/v1/app/promo',
      buyXPayY([p1, 77], {
        targets: [
          { type: 'PRODUCT', id: p1 },
          { type: 'CATEGORY', id: 88 },
          { type: 'CATEGORY', id: category.id },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { message: 'Category 88 does not exist in this store', code: 'VALIDATION_FAILED', field: 'targets.1.id' },
        { message: 'Package 77 does not exist in this store', code: 'VALIDATION_FAILED', field: 'tiers.0.targets.1.id' },
      ]),
    );
    expect(res.body.errors).toHaveLength(2);
    expect(await total(store)).toBe(0);
    expect((await store.delete(`/v1/app/package/${p1}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/category/${category.id}`)).status).toBe(204);
  });

  it('rejects a body that is not JSON or not an object with 400 and creates nothing', async () => {
    const store = await newStore();
    expect((await store.post('/v1/app/promo', undefined, { raw: '{"name":', contentType: 'application/json' })).status).toBe(400);
    expect((await store.post('/v1/app/promo', [progressive()])).status).toBe(400);
    expect(await total(store)).toBe(0);
  });

  it('rejects 1e999 (Infinity once parsed), which no DynamoDB number holds, with 422 and creates nothing', async () => {
    const store = await newStore();
    const raw = JSON.stringify(progressive({ condition_mode: 'VALUE', tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 7 }] }));
    for (const [from, to, field] of [
      ['"min_amount":1', '"min_amount":1e999', 'tiers.0.min_amount'],
      ['"reward_value":7', '"reward_value":1e999', 'tiers.0.reward_value'],
    ]) {
      const res = await store.post('/v1/app/promo', undefined, { raw: raw.replace(from!, to!), contentType: 'application/json' });
      expect(res.status).toBe(422);
      expect(firstError(res).field).toBe(field);
    }
    expect(await total(store)).toBe(0);
  });

  it('accepts every limit exactly: 35 characters, 10 targets, 10 tiers, 10 reward products, 100 percent', async () => {
    const store = await newStore();
    const ids = await packages(store, 10);
    const products = ids.map((id) => ({ type: 'PRODUCT', id }));
    const tiers = Array.from({ length: 10 }, (_, i) => ({ min_amount: i + 1, reward_type: 'PERCENTAGE', reward_value: 100 - i }));
    for (const name of ['x'.repeat(35), '🎉'.repeat(35)]) {
      const res = await store.post('/v1/app/promo', progressive({ name, targets: products, tiers }));
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ name, targets: products });
      expect(res.body.tiers.map((t: { min_amount: number }) => t.min_amount)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }
    const reward = await store.post(
      '/v1/app/promo',
      buyXPayY(ids, { tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 100, reward_quantity: 1, targets: products }] }),
    );
    expect(reward.status, reward.text).toBe(200);
    expect(reward.body.tiers[0].targets).toEqual(products);
  });
});

describe('referential integrity', () => {
  it('refuses (409) to delete a package a promo targets, in its targets or its tiers, until the promo lets go', async () => {
    const store = await newStore();
    const [target, reward] = await packages(store, 2);
    const promo = (await store.post('/v1/app/promo', buyXPayY([reward], { targets: [{ type: 'PRODUCT', id: target }] }))).body;
    for (const id of [target, reward]) {
      const res = await store.delete(`/v1/app/package/${id}`);
      expect(res.status).toBe(409);
      expect(firstError(res)).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('1 reference from promos or variables') });
      expect((await store.get(`/v1/app/package/${id}`)).status).toBe(200);
    }
    expect((await store.delete(`/v1/app/promo/${promo.id}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${target}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${reward}`)).status).toBe(204);
  });

  it('never leaves a promo targeting a deleted package when the deletion races the promo creation', async () => {
    const store = await newStore();
    for (let round = 0; round < 12; round++) {
      const [pkg] = await packages(store, 1);
      const [created, deleted] = await Promise.all([store.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: pkg }] })), store.delete(`/v1/app/package/${pkg}`)]);
      const packageNow = await store.get(`/v1/app/package/${pkg}`);
      if (created.status === 200) {
        expect(deleted.status).toBe(409);
        expect(packageNow.status).toBe(200);
        expect((await store.get(`/v1/app/promo/${created.body.id}`)).body.targets).toEqual([{ type: 'PRODUCT', id: pkg }]);
      } else {
        expect(created.status).toBe(422);
        expect(firstError(created).field).toBe('targets.0.id');
        expect(deleted.status).toBe(204);
        expect(packageNow.status).toBe(404);
      }
    }
    const promos = (await store.get('/v1/app/promo?limit=100')).body.data;
    for (const promo of promos) expect((await store.get(`/v1/app/package/${promo.targets[0].id}`)).status).toBe(200);
  });
});

describe('PATCH /v1/app/promo/{promoId}', () => {
  it('changes only the fields sent (enabled included) and moves updated_at', async () => {
    const store = await newStore();
    const promo = (await store.post('/v1/app/promo', progressive({ ends_at: '2030-05-01T00:00:00Z' }))).body;
    const res = await store.patch(`/v1/app/promo/${promo.id}`, { enabled: false }, { headers: atTime(promo.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...promo, enabled: false, updated_at: expect.stringMatching(ISO_Z) });
    expect(res.body.updated_at > promo.updated_at).toBe(true);
    const renamed = await store.patch(`/v1/app/promo/${promo.id}`, { name: 'Renamed', ends_at: null, starts_at: '2031-01-01T00:00:00+05:00' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', enabled: false, ends_at: null, starts_at: '2030-12-31T19:00:00.000Z', tiers: promo.tiers });
    expect((await store.get(`/v1/app/promo/${promo.id}`)).body).toEqual(renamed.body);
  });

  it('replaces tiers, keeping the id of a tier whose min_amount stays', async () => {
    const store = await newStore();
    const promo = (
      await store.post(
        '/v1/app/promo',
        progressive({
          tiers: [
            { min_amount: 2, reward_type: 'VALUE', reward_value: 1 },
            { min_amount: 4, reward_type: 'VALUE', reward_value: 2 },
          ],
        }),
      )
    ).body;
    const [two, four] = promo.tiers;
    const res = await store.patch(
      `/v1/app/promo/${promo.id}`,
      {
        tiers: [
          { min_amount: 8, reward_type: 'PERCENTAGE', reward_value: 20 },
          { min_amount: 2, reward_type: 'VALUE', reward_value: 1 },
          { min_amount: 4, reward_type: 'VALUE', reward_value: 3 },
        ],
      },
      { headers: atTime(promo.updated_at, 1000) },
    );
    expect(res.status).toBe(200);
    const [newTwo, newFour, eight] = res.body.tiers;
    expect(newTwo).toEqual(two);
    expect(newFour).toEqual({ ...four, reward_value: 3, updated_at: res.body.updated_at });
    expect(eight).toMatchObject({ min_amount: 8, promo_id: promo.id, created_at: res.body.updated_at });
    expect([two.id, four.id]).not.toContain(eight.id);
  });

  it('moves target references: the old target becomes deletable, the new one is held', async () => {
    const store = await newStore();
    const [oldId, newId] = await packages(store, 2);
    const promo = (await store.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: oldId }] }))).body;
    const res = await store.patch(`/v1/app/promo/${promo.id}`, { targets: [{ type: 'PRODUCT', id: newId }] });
    expect(res.status).toBe(200);
    expect(res.body.targets).toEqual([{ type: 'PRODUCT', id: newId }]);
    expect((await store.delete(`/v1/app/package/${newId}`)).status).toBe(409);
    expect((await store.delete(`/v1/app/package/${oldId}`)).status).toBe(204);
  });

  it('judges the merged promo by every creation rule, changing nothing when it breaks one', async () => {
    const store = await newStore();
    const [p1] = await packages(store, 1);
    const promo = (await store.post('/v1/app/promo', progressive({ ends_at: '2030-06-01T00:00:00Z' }))).body;
    const attempts: [Record<string, unknown>, string][] = [
      [{ type: 'BUY_X_PAY_Y' }, 'tiers.0.reward_quantity'],
      [{ starts_at: '2030-07-01T00:00:00Z' }, 'ends_at'],
      [{ ends_at: '2030-01-01T00:00:00Z' }, 'ends_at'],
      [{ tiers: [{ min_amount: 1, reward_type: 'FREE' }] }, 'tiers.0.reward_type'],
      [{ tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 101 }] }, 'tiers.0.reward_value'],
      [{ condition_mode: 'VALUE', tiers: [{ min_amount: 0, reward_type: 'VALUE', reward_value: 1 }] }, 'tiers.0.min_amount'],
      [{ targets: [{ type: 'PRODUCT', id: 999 }] }, 'targets.0.id'],
      [{ targets: [] }, 'targets'],
      [{ name: 'x'.repeat(36) }, 'name'],
      [{ enabled: null }, 'enabled'],
      [{ id: 2 }, 'id'],
      [{}, ''],
    ];
    for (const [body, field] of attempts) {
      const res = await store.patch(`/v1/app/promo/${promo.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      if (field) expect(res.body.errors.map((e: { field?: string }) => e.field)).toContain(field);
      else firstError(res);
    }
    expect((await store.get(`/v1/app/promo/${promo.id}`)).body).toEqual(promo);

    const converted = await store.patch(`/v1/app/promo/${promo.id}`, {
      type: 'BUY_X_PAY_Y',
      tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1, targets: [{ type: 'PRODUCT', id: p1 }] }],
    });
    expect(converted.status).toBe(200);
    expect(converted.body).toMatchObject({ type: 'BUY_X_PAY_Y', tiers: [{ reward_type: 'FREE', reward_value: null, reward_quantity: 1 }] });
    expect((await store.delete(`/v1/app/package/${p1}`)).status).toBe(409);
  });

  it('moves no reference when a PATCH is refused for a missing target', async () => {
    const store = await newStore();
    const [held, offered] = await packages(store, 2);
    const promo = (await store.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: held }] }))).body;
    const res = await store.patch(`/v1/app/promo/${promo.id}`, {
      targets: [
        { type: 'PRODUCT', id: offered },
        { type: 'CATEGORY', id: 999 },
      ],
    });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('targets.1.id');
    expect((await store.get(`/v1/app/promo/${promo.id}`)).body).toEqual(promo);
    expect((await store.delete(`/v1/app/package/${offered}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${held}`)).status).toBe(409);
  });

  it('keeps reference counts exact under concurrent PATCHes of one promo', async () => {
    const store = await newStore();
    const ids = await packages(store, 4);
    const promo = (await store.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: ids[0] }] }))).body;
    const results = await Promise.all(ids.slice(1).map((id) => store.patch(`/v1/app/promo/${promo.id}`, { targets: [{ type: 'PRODUCT', id }] })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const held = (await store.get(`/v1/app/promo/${promo.id}`)).body.targets[0].id;
    for (const id of ids) expect((await store.delete(`/v1/app/package/${id}`)).status).toBe(id === held ? 409 : 204);
  });

  it('answers 404 for a missing promo', async () => {
    const store = await newStore();
    const res = await store.patch('/v1/app/promo/42', { enabled: false });
    expect(res.status).toBe(404);
    expect(firstError(res).code).toBe('NOT_FOUND');
  });
});

describe('GET and DELETE /v1/app/promo', () => {
  it('lists in id order in page mode', async () => {
    const store = await newStore();
    for (const name of ['a', 'b', 'c']) await store.post('/v1/app/promo', progressive({ name }));
    const res = await store.get('/v1/app/promo?page=1&limit=2');
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['a', 'b']);
    expect(res.body.data[0].tiers).toHaveLength(1);
    expect(res.body.meta).toMatchObject({ total: 3, per_page: 2, current_page: 1, last_page: 2, next_page_url: '/v1/app/promo?page=2&limit=2', previous_page_url: null });
    expect((await store.get('/v1/app/promo')).body.meta.per_page).toBe(20);
    expect((await store.get('/v1/app/promo?limit=0')).status).toBe(422);
  });

  it('deletes a promo (204), releasing its targets, after which it is 404', async () => {
    const store = await newStore();
    const [p1] = await packages(store, 1);
    const promo = (await store.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: p1 }] }))).body;
    const res = await store.delete(`/v1/app/promo/${promo.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await store.get(`/v1/app/promo/${promo.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/promo/${promo.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/package/${p1}`)).status).toBe(204);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's promo and refuses A's package or category as B's target", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const [pkg] = await packages(a, 1);
    const category = (await a.post('/v1/app/category', { name: 'C' })).body;
    const promo = (await a.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: pkg }] }))).body;

    const get = await b.get(`/v1/app/promo/${promo.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/promo/${promo.id}`, { enabled: false })).status).toBe(404);
    expect((await b.delete(`/v1/app/promo/${promo.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/promo')).body.data).toEqual([]);

    const product = await b.post('/v1/app/promo', progressive({ targets: [{ type: 'PRODUCT', id: pkg }] }));
    expect(product.status).toBe(422);
    expect(firstError(product).field).toBe('targets.0.id');
    const reward = await b.post('/v1/app/promo', buyXPayY([pkg]));
    expect(reward.status).toBe(422);
    expect(firstError(reward).field).toBe('tiers.0.targets.0.id');
    const byCategory = await b.post('/v1/app/promo', progressive({ targets: [{ type: 'CATEGORY', id: category.id }] }));
    expect(byCategory.status).toBe(422);
    expect(firstError(byCategory).field).toBe('targets.0.id');
    expect(await total(b)).toBe(0);

    expect((await a.get(`/v1/app/promo/${promo.id}`)).body).toEqual(promo);
    // A's category is not held by B's failed attempt.
    expect((await a.delete(`/v1/app/category/${category.id}`)).status).toBe(204);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('promo endpoints', async () => {
    const store = await newStore();
    const calls = dynamoDbCalls;
    const [p1] = await packages(store, 1);
    // one ADD for the promo id and all tier ids + one TransactWrite (promo and target counts)
    const created = await store.post(
      '/v1/app/promo',
      progressive({ targets: [{ type: 'PRODUCT', id: p1 }], tiers: [1, 2, 3].map((min) => ({ min_amount: min, reward_type: 'VALUE', reward_value: min })) }),
    );
    expect(calls(created)).toBe(3);
    const path = `/v1/app/promo/${created.body.id}`;
    expect(calls(await store.get(path))).toBe(2);
    // the list's counter (GetItem) and its page (Query with Limit), in parallel; the create and delete move the counter in their own write
    expect(calls(await store.get('/v1/app/promo'))).toBe(3);
    // GetItem + TransactWrite; a new tier needs one more ADD for its id
    expect(calls(await store.patch(path, { enabled: false }))).toBe(3);
    expect(calls(await store.patch(path, { tiers: [{ min_amount: 9, reward_type: 'VALUE', reward_value: 1 }] }))).toBe(4);
    expect(calls(await store.delete(path))).toBe(3);
    // a broken rule is refused before any id is allocated
    expect(calls(await store.post('/v1/app/promo', progressive({ name: 'x'.repeat(36) })))).toBe(1);
    expect(calls(await store.post('/v1/app/promo', progressive({ ends_at: '2000-01-01T00:00:00Z' })))).toBe(1);
  });
});
