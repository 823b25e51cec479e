import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { discountKey } from '#lib/db/discount.ts';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

type Store = Awaited<ReturnType<typeof newStore>>;

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAST = '2020-01-01T00:00:00.000Z';
const FUTURE = '2099-01-01T00:00:00.000Z';

/** What an order does when it reserves a coupon use; no endpoint of this area writes `uses`. */
async function recordUses(storeId: number, discountId: number, uses: number) {
  await db.send(new UpdateCommand({ TableName: TABLE, Key: discountKey(storeId, discountId), UpdateExpression: 'ADD uses :n', ExpressionAttributeValues: { ':n': uses } }));
}

async function createDiscount(store: Store, body: Record<string, unknown>) {
  const res = await store.post('/v1/app/discount', { type: 'VALUE', value: 5, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const total = async (store: Store) => (await store.get('/v1/app/discount?limit=100')).body.meta.total as number;
const coupons = (res: { body: { data: { coupon: string }[] } }) => res.body.data.map((d) => d.coupon);

async function createPackage(store: Store, name = 'Package') {
  const res = await store.post('/v1/app/package', { name, price: 10 });
  expect(res.status, res.text).toBe(200);
  return res.body.id as number;
}

describe('POST /v1/app/discount', () => {
  it('creates a coupon with defaults for every optional field, status ACTIVE and uses 0', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/discount', { coupon: 'Welcome10', type: 'PERCENTAGE', value: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 1,
      store_id: store.storeId,
      coupon: 'Welcome10',
      type: 'PERCENTAGE',
      value: 10,
      applies_to: [-1],
      uses: 0,
      max_uses: null,
      max_uses_per_client: null,
      expires_in: null,
      min_price: null,
      limit_criteria: 'CLIENT_IDENTIFIER',
      restricted_to_criteria: null,
      restricted_to: null,
      created_at: expect.stringMatching(ISO_Z),
      updated_at: res.body.created_at,
      status: 'ACTIVE',
    });
    expect(Object.keys(res.body)).toEqual([
      'id',
      'store_id',
      'coupon',
      'type',
      'value',
      'applies_to',
      'uses',
      'max_uses',
      'max_uses_per_client',
      'expires_in',
      'min_price',
      'limit_criteria',
      'restricted_to_criteria',
      'restricted_to',
      'created_at',
      'updated_at',
      'status',
    ]);
    expect((await store.get(`/v1/app/discount/${res.body.id}`)).body).toEqual(res.body);
  });

  it('stores every field sent, with expires_in normalised to UTC', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/discount', {
      coupon: 'VIP',
      type: 'VALUE',
      value: 150,
      max_uses: 10,
      max_uses_per_client: 1,
      expires_in: '2099-06-01T12:00:00+02:00',
      min_price: 0,
      limit_criteria: 'CLIENT_EMAIL',
      restricted_to_criteria: 'CLIENT_EMAIL',
      restricted_to: ['Ann@Example.com', 'bob@example.com'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      coupon: 'VIP',
      type: 'VALUE',
      value: 150,
      max_uses: 10,
      max_uses_per_client: 1,
      expires_in: '2099-06-01T10:00:00.000Z',
      min_price: 0,
      limit_criteria: 'CLIENT_EMAIL',
      restricted_to_criteria: 'CLIENT_EMAIL',
      restricted_to: ['Ann@Example.com', 'bob@example.com'],
      status: 'ACTIVE',
    });
    expect((await store.get(`/v1/app/discount/${res.body.id}`)).body).toEqual(res.body);
  });

  it('accepts 100 as a percentage and client identifiers as restriction values', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/discount', {
      coupon: 'FREE',
      type: 'PERCENTAGE',
      value: 100,
      restricted_to_criteria: 'CLIENT_IDENTIFIER',
      restricted_to: ['Steve'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ value: 100, restricted_to: ['Steve'] });
  });

  it.each([
    ['coupon missing', { type: 'VALUE', value: 5 }, 'coupon'],
    ['coupon empty', { coupon: '  ', type: 'VALUE', value: 5 }, 'coupon'],
    ['coupon with a space', { coupon: 'TWO WORDS', type: 'VALUE', value: 5 }, 'coupon'],
    ['coupon too long', { coupon: 'X'.repeat(51), type: 'VALUE', value: 5 }, 'coupon'],
    ['type missing', { coupon: 'A', value: 5 }, 'type'],
    ['type unknown', { coupon: 'A', type: 'FREE', value: 5 }, 'type'],
    ['value missing', { coupon: 'A', type: 'VALUE' }, 'value'],
    ['value zero', { coupon: 'A', type: 'VALUE', value: 0 }, 'value'],
    ['value negative', { coupon: 'A', type: 'PERCENTAGE', value: -5 }, 'value'],
    ['value a string', { coupon: 'A', type: 'VALUE', value: '5' }, 'value'],
    ['percentage over 100', { coupon: 'A', type: 'PERCENTAGE', value: 100.5 }, 'value'],
    ['value beyond the amount range', { coupon: 'A', type: 'VALUE', value: 1e200 }, 'value'],
    ['value too small to store', { coupon: 'A', type: 'VALUE', value: 1e-200 }, 'value'],
    ['applies_to empty', { coupon: 'A', type: 'VALUE', value: 5, applies_to: [] }, 'applies_to'],
    ['applies_to mixing -1 and ids', { coupon: 'A', type: 'VALUE', value: 5, applies_to: [-1, 3] }, 'applies_to'],
    ['applies_to with 0', { coupon: 'A', type: 'VALUE', value: 5, applies_to: [0] }, 'applies_to'],
    ['applies_to with a fraction', { coupon: 'A', type: 'VALUE', value: 5, applies_to: [1.5] }, 'applies_to'],
    ['applies_to repeating an id', { coupon: 'A', type: 'VALUE', value: 5, applies_to: [2, 2] }, 'applies_to'],
    ['applies_to too long', { coupon: 'A', type: 'VALUE', value: 5, applies_to: Array.from({ length: 51 }, (_, i) => i + 1) }, 'applies_to'],
    ['applies_to not an array', { coupon: 'A', type: 'VALUE', value: 5, applies_to: -1 }, 'applies_to'],
    ['max_uses zero', { coupon: 'A', type: 'VALUE', value: 5, max_uses: 0 }, 'max_uses'],
    ['max_uses a fraction', { coupon: 'A', type: 'VALUE', value: 5, max_uses: 1.5 }, 'max_uses'],
    ['max_uses beyond a safe integer', { coupon: 'A', type: 'VALUE', value: 5, max_uses: 1e200 }, 'max_uses'],
    ['max_uses_per_client zero', { coupon: 'A', type: 'VALUE', value: 5, max_uses_per_client: 0 }, 'max_uses_per_client'],
    ['expires_in not a timestamp', { coupon: 'A', type: 'VALUE', value: 5, expires_in: 'tomorrow' }, 'expires_in'],
    ['expires_in without offset', { coupon: 'A', type: 'VALUE', value: 5, expires_in: '2099-01-01T00:00:00' }, 'expires_in'],
    ['min_price negative', { coupon: 'A', type: 'VALUE', value: 5, min_price: -1 }, 'min_price'],
    ['min_price beyond the amount range', { coupon: 'A', type: 'VALUE', value: 5, min_price: 1e200 }, 'min_price'],
    ['limit_criteria unknown', { coupon: 'A', type: 'VALUE', value: 5, limit_criteria: 'CLIENT_IP' }, 'limit_criteria'],
    ['restricted_to_criteria unknown', { coupon: 'A', type: 'VALUE', value: 5, restricted_to_criteria: 'IP' }, 'restricted_to_criteria'],
    ['restricted_to empty', { coupon: 'A', type: 'VALUE', value: 5, restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: [] }, 'restricted_to'],
    [
      'restricted_to too long',
      { coupon: 'A', type: 'VALUE', value: 5, restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: Array.from({ length: 101 }, (_, i) => `p${i}`) },
      'restricted_to',
    ],
    ['restricted_to without its criteria', { coupon: 'A', type: 'VALUE', value: 5, restricted_to: ['a@b.co'] }, 'restricted_to_criteria'],
    [
      'restricted_to not e-mails for CLIENT_EMAIL',
      { coupon: 'A', type: 'VALUE', value: 5, restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['a@b.co', 'Steve'] },
      'restricted_to.1',
    ],
    ['uses sent (not writable)', { coupon: 'A', type: 'VALUE', value: 5, uses: 3 }, 'uses'],
    ['status sent (computed)', { coupon: 'A', type: 'VALUE', value: 5, status: 'ACTIVE' }, 'status'],
  ])('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/discount', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(await total(store)).toBe(0);
    // A rejected creation reserves no code.
    if ((body as { coupon?: unknown }).coupon === 'A') await createDiscount(store, { coupon: 'A' });
  });

  it('rejects a body that is not JSON or not an object with 400, and 1e999 (Infinity once parsed) with 422, creating nothing', async () => {
    const store = await newStore();
    expect((await store.post('/v1/app/discount', undefined, { raw: '{"coupon":', contentType: 'application/json' })).status).toBe(400);
    expect((await store.post('/v1/app/discount', [{ coupon: 'A', type: 'VALUE', value: 5 }])).status).toBe(400);
    for (const [field, raw] of [
      ['value', '{"coupon":"A","type":"VALUE","value":1e999}'],
      ['min_price', '{"coupon":"A","type":"VALUE","value":5,"min_price":1e999}'],
    ]) {
      const res = await store.post('/v1/app/discount', undefined, { raw, contentType: 'application/json' });
      expect(res.status).toBe(422);
      expect(firstError(res).field).toBe(field);
    }
    expect(await total(store)).toBe(0);
    await createDiscount(store, { coupon: 'A' });
  });

  it('answers 409 for a code already used in the store, ignoring case, and changes nothing', async () => {
    const store = await newStore();
    const first = await createDiscount(store, { coupon: 'Summer' });
    for (const coupon of ['Summer', 'SUMMER', 'summer']) {
      const res = await store.post('/v1/app/discount', { coupon, type: 'PERCENTAGE', value: 50 });
      expect(res.status).toBe(409);
      expect(firstError(res)).toMatchObject({ code: 'CONFLICT', field: 'coupon' });
    }
    const list = await store.get('/v1/app/discount');
    expect(list.body.data).toEqual([first]);
  });

  it('lets exactly one of 6 concurrent creations of SUMMER / summer win', async () => {
    const store = await newStore();
    const results = await Promise.all(
      ['SUMMER', 'summer', 'Summer', 'SUMMER', 'sUmMeR', 'summer'].map((coupon) => store.post('/v1/app/discount', { coupon, type: 'VALUE', value: 1 })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const list = await store.get('/v1/app/discount');
    expect(list.body.meta.total).toBe(1);
    expect(list.body.data[0]).toEqual(results.find((r) => r.status === 200)!.body);
  });

  it('gives the same code to two stores without conflict', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    await createDiscount(a, { coupon: 'SAME' });
    expect((await b.post('/v1/app/discount', { coupon: 'same', type: 'VALUE', value: 1 })).status).toBe(200);
  });
});

describe('applies_to', () => {
  it('accepts package ids of the store and answers 422 naming applies_to.N for a missing one', async () => {
    const store = await newStore();
    const p1 = await createPackage(store, 'One');
    const p2 = await createPackage(store, 'Two');
    const ok = await store.post('/v1/app/discount', { coupon: 'PKG', type: 'VALUE', value: 1, applies_to: [p2, p1] });
    expect(ok.status).toBe(200);
    expect(ok.body.applies_to).toEqual([p2, p1]);

    const bad = await store.post('/v1/app/discount', { coupon: 'BAD', type: 'VALUE', value: 1, applies_to: [p1, 999] });
    expect(bad.status).toBe(422);
    expect(firstError(bad)).toMatchObject({ field: 'applies_to.1', code: 'VALIDATION_FAILED' });
    expect(await total(store)).toBe(1);
    // The transaction reserved nothing: the code is still free.
    await createDiscount(store, { coupon: 'BAD' });
  });

  it("answers 422 when applies_to names another store's package, on create and on update", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const foreign = await createPackage(a);
    const res = await b.post('/v1/app/discount', { coupon: 'X', type: 'VALUE', value: 1, applies_to: [foreign] });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('applies_to.0');
    const own = await createDiscount(b, { coupon: 'Y' });
    const patch = await b.patch(`/v1/app/discount/${own.id}`, { applies_to: [foreign], coupon: 'Z' });
    expect(patch.status).toBe(422);
    expect(firstError(patch).field).toBe('applies_to.0');
    expect((await b.get(`/v1/app/discount/${own.id}`)).body).toEqual(own);
    // The rename in the failed patch did not take the code Z.
    await createDiscount(b, { coupon: 'Z' });
  });

  it('lets a patch switch between [-1] and package ids', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const discount = await createDiscount(store, { coupon: 'SWITCH' });
    expect((await store.patch(`/v1/app/discount/${discount.id}`, { applies_to: [p] })).body.applies_to).toEqual([p]);
    expect((await store.patch(`/v1/app/discount/${discount.id}`, { applies_to: [-1] })).body.applies_to).toEqual([-1]);
    expect((await store.get(`/v1/app/discount/${discount.id}`)).body.applies_to).toEqual([-1]);
  });
});

describe('status', () => {
  it('is EXPIRED once expires_in has passed, SOLD_OUT when uses reach max_uses, and EXPIRED wins', async () => {
    const store = await newStore();
    const expired = await createDiscount(store, { coupon: 'OLD', expires_in: PAST });
    expect(expired.status).toBe('EXPIRED');
    const future = await createDiscount(store, { coupon: 'NEW', expires_in: FUTURE, max_uses: 2 });
    expect(future.status).toBe('ACTIVE');

    await recordUses(store.storeId, future.id, 1);
    expect((await store.get(`/v1/app/discount/${future.id}`)).body).toMatchObject({ uses: 1, status: 'ACTIVE' });
    await recordUses(store.storeId, future.id, 1);
    expect((await store.get(`/v1/app/discount/${future.id}`)).body).toMatchObject({ uses: 2, status: 'SOLD_OUT' });

    const both = await store.patch(`/v1/app/discount/${future.id}`, { expires_in: PAST });
    expect(both.body).toMatchObject({ uses: 2, max_uses: 2, status: 'EXPIRED' });
    const reopened = await store.patch(`/v1/app/discount/${future.id}`, { expires_in: null, max_uses: 3 });
    expect(reopened.body).toMatchObject({ expires_in: null, uses: 2, max_uses: 3, status: 'ACTIVE' });
    expect((await store.patch(`/v1/app/discount/${future.id}`, { max_uses: null })).body.status).toBe('ACTIVE');
  });

  it('turns EXPIRED by the clock alone', async () => {
    const store = await newStore();
    const soon = new Date(Date.now() + 1500).toISOString();
    const discount = await createDiscount(store, { coupon: 'SOON', expires_in: soon });
    expect(discount.status).toBe('ACTIVE');
    // 1.6 s later on the local stack's pinned clock: nothing was written, the status follows the time.
    expect((await store.get(`/v1/app/discount/${discount.id}`, { headers: atTime(discount.created_at, 1600) })).body.status).toBe('EXPIRED');
  });
});

describe('PATCH /v1/app/discount/{discount-id}', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'KEEP', max_uses: 5, min_price: 20 });
    const res = await store.patch(`/v1/app/discount/${created.id}`, { value: 7.5, min_price: null }, { headers: atTime(created.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, value: 7.5, min_price: null, updated_at: res.body.updated_at });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    expect((await store.get(`/v1/app/discount/${created.id}`)).body).toEqual(res.body);
  });

  it('holds the merged coupon to the cross-field rules, changing nothing on failure', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'BIG', value: 150 });
    const toPercent = await store.patch(`/v1/app/discount/${created.id}`, { type: 'PERCENTAGE' });
    expect(toPercent.status).toBe(422);
    expect(firstError(toPercent)).toMatchObject({ field: 'value' });
    const list = await store.patch(`/v1/app/discount/${created.id}`, { restricted_to: ['a@b.co'] });
    expect(list.status).toBe(422);
    expect(firstError(list)).toMatchObject({ field: 'restricted_to_criteria' });
    const withCriteria = await store.patch(`/v1/app/discount/${created.id}`, { restricted_to_criteria: 'CLIENT_EMAIL' });
    expect(withCriteria.status).toBe(200);
    const notEmail = await store.patch(`/v1/app/discount/${created.id}`, { restricted_to: ['nick'] });
    expect(notEmail.status).toBe(422);
    expect(firstError(notEmail)).toMatchObject({ field: 'restricted_to.0' });
    expect((await store.get(`/v1/app/discount/${created.id}`)).body).toEqual(withCriteria.body);
    expect((await store.patch(`/v1/app/discount/${created.id}`, { type: 'PERCENTAGE', value: 15 })).body).toMatchObject({ type: 'PERCENTAGE', value: 15 });
  });

  it('rejects an empty patch, unknown or read-only fields and bad values with 422, changing nothing', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'SAFE' });
    for (const body of [{}, { uses: 0 }, { status: 'EXPIRED' }, { id: 3 }, { coupon: '' }, { value: 0 }, { max_uses: 0 }, { applies_to: [] }]) {
      const res = await store.patch(`/v1/app/discount/${created.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      firstError(res);
    }
    expect((await store.get(`/v1/app/discount/${created.id}`)).body).toEqual(created);
  });

  it('renames: the old code becomes free, the new one taken; a change of case alone keeps the code', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'spring' });
    const cased = await store.patch(`/v1/app/discount/${created.id}`, { coupon: 'SPRING' });
    expect(cased.status).toBe(200);
    expect(cased.body.coupon).toBe('SPRING');
    const renamed = await store.patch(`/v1/app/discount/${created.id}`, { coupon: 'Autumn' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.id, coupon: 'Autumn' });
    expect((await store.post('/v1/app/discount', { coupon: 'AUTUMN', type: 'VALUE', value: 1 })).status).toBe(409);
    expect((await store.post('/v1/app/discount', { coupon: 'spring', type: 'VALUE', value: 1 })).status).toBe(200);
  });

  it('answers 409 to a rename onto an existing code, ignoring case, and changes nothing', async () => {
    const store = await newStore();
    const taken = await createDiscount(store, { coupon: 'TAKEN' });
    const other = await createDiscount(store, { coupon: 'OTHER' });
    const res = await store.patch(`/v1/app/discount/${other.id}`, { coupon: 'taken', value: 9 });
    expect(res.status).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT', field: 'coupon' });
    expect((await store.get('/v1/app/discount')).body.data).toEqual([taken, other]);
    // OTHER still owns its code.
    expect((await store.post('/v1/app/discount', { coupon: 'other', type: 'VALUE', value: 1 })).status).toBe(409);
  });

  it('lets exactly one of concurrent renames and creations claim a code', async () => {
    const store = await newStore();
    const discounts = await Promise.all(['R1', 'R2', 'R3'].map((coupon) => createDiscount(store, { coupon })));
    const results = await Promise.all([
      ...discounts.map((d, i) => store.patch(`/v1/app/discount/${d.id}`, { coupon: i % 2 ? 'prize' : 'PRIZE' })),
      store.post('/v1/app/discount', { coupon: 'Prize', type: 'VALUE', value: 1 }),
      store.post('/v1/app/discount', { coupon: 'prize', type: 'VALUE', value: 1 }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const list = await store.get('/v1/app/discount?coupon=prize');
    expect(list.body.meta.total).toBe(1);
  });

  it('serialises concurrent patches: a type change and a value change cannot combine into an invalid coupon', async () => {
    const store = await newStore();
    for (let round = 0; round < 5; round++) {
      const created = await createDiscount(store, { coupon: `RACE${round}`, type: 'VALUE', value: 50 });
      const [toPercent, toBig] = await Promise.all([
        store.patch(`/v1/app/discount/${created.id}`, { type: 'PERCENTAGE' }),
        store.patch(`/v1/app/discount/${created.id}`, { value: 500 }),
      ]);
      expect([toPercent.status, toBig.status].sort()).toEqual([200, 422]);
      const final = (await store.get(`/v1/app/discount/${created.id}`)).body;
      expect(final.type === 'PERCENTAGE' ? final.value <= 100 : true).toBe(true);
    }
  });

  it('returns the current uses after a rename', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'USED', max_uses: 10 });
    await recordUses(store.storeId, created.id, 4);
    const res = await store.patch(`/v1/app/discount/${created.id}`, { coupon: 'USED2' });
    expect(res.body).toMatchObject({ coupon: 'USED2', uses: 4 });
    expect((await store.get(`/v1/app/discount/${created.id}`)).body).toEqual(res.body);
  });

  it('answers 404 for a missing discount and a non-numeric id', async () => {
    const store = await newStore();
    expect((await store.patch('/v1/app/discount/999', { value: 1 })).status).toBe(404);
    expect(firstError(await store.patch('/v1/app/discount/abc', { value: 1 })).code).toBe('NOT_FOUND');
    expect((await store.get('/v1/app/discount/0')).status).toBe(404);
  });
});

describe('DELETE /v1/app/discount/{discount-id}', () => {
  it('deletes (204), after which it is 404 and its code is free again', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'GONE' });
    const res = await store.delete(`/v1/app/discount/${created.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await store.get(`/v1/app/discount/${created.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/discount/${created.id}`)).status).toBe(404);
    expect(await total(store)).toBe(0);
    expect((await store.post('/v1/app/discount', { coupon: 'gone', type: 'VALUE', value: 1 })).status).toBe(200);
  });

  it('frees the current code of a renamed coupon', async () => {
    const store = await newStore();
    const created = await createDiscount(store, { coupon: 'FIRST' });
    await store.patch(`/v1/app/discount/${created.id}`, { coupon: 'SECOND' });
    expect((await store.delete(`/v1/app/discount/${created.id}`)).status).toBe(204);
    expect((await store.post('/v1/app/discount', { coupon: 'SECOND', type: 'VALUE', value: 1 })).status).toBe(200);
    expect((await store.post('/v1/app/discount', { coupon: 'FIRST', type: 'VALUE', value: 1 })).status).toBe(200);
  });
});

describe('GET /v1/app/discount', () => {
  async function catalogue() {
    const store = await newStore();
    const made = {
      summer10: await createDiscount(store, { coupon: 'SUMMER10' }),
      summer20: await createDiscount(store, { coupon: 'summer20', expires_in: PAST }),
      summit: await createDiscount(store, { coupon: 'Summit', max_uses: 1, restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['Ann@Example.com'] }),
      winter: await createDiscount(store, { coupon: 'WINTER', restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['bob@example.com', 'ann@example.com'] }),
      nick: await createDiscount(store, { coupon: 'NICK', restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['Steve'] }),
    };
    await recordUses(store.storeId, made.summit.id, 1);
    return { store, made };
  }

  it('lists every coupon in id order with its computed status', async () => {
    const { store } = await catalogue();
    const res = await store.get('/v1/app/discount');
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: { coupon: string; status: string }) => [d.coupon, d.status])).toEqual([
      ['SUMMER10', 'ACTIVE'],
      ['summer20', 'EXPIRED'],
      ['Summit', 'SOLD_OUT'],
      ['WINTER', 'ACTIVE'],
      ['NICK', 'ACTIVE'],
    ]);
  });

  it('filters by status', async () => {
    const { store } = await catalogue();
    expect(coupons(await store.get('/v1/app/discount?status=ACTIVE'))).toEqual(['SUMMER10', 'WINTER', 'NICK']);
    expect(coupons(await store.get('/v1/app/discount?status=SOLD_OUT'))).toEqual(['Summit']);
    expect(coupons(await store.get('/v1/app/discount?status=EXPIRED'))).toEqual(['summer20']);
  });

  it('filters by a case-insensitive prefix of the code, in id order', async () => {
    const { store } = await catalogue();
    expect(coupons(await store.get('/v1/app/discount?coupon=sum'))).toEqual(['SUMMER10', 'summer20', 'Summit']);
    expect(coupons(await store.get('/v1/app/discount?coupon=SUMME'))).toEqual(['SUMMER10', 'summer20']);
    expect(coupons(await store.get('/v1/app/discount?coupon=summer10'))).toEqual(['SUMMER10']);
    expect(coupons(await store.get('/v1/app/discount?coupon=ummer'))).toEqual([]);
    expect(coupons(await store.get('/v1/app/discount?coupon=summer100'))).toEqual([]);
    expect((await store.get('/v1/app/discount?coupon=')).body.meta.total).toBe(5);
  });

  it('filters by a value of the restriction list, ignoring case', async () => {
    const { store } = await catalogue();
    expect(coupons(await store.get('/v1/app/discount?restricted_to=ann@example.com'))).toEqual(['Summit', 'WINTER']);
    expect(coupons(await store.get('/v1/app/discount?restricted_to=BOB@EXAMPLE.COM'))).toEqual(['WINTER']);
    expect(coupons(await store.get('/v1/app/discount?restricted_to=steve'))).toEqual(['NICK']);
    expect(coupons(await store.get('/v1/app/discount?restricted_to=example.com'))).toEqual([]);
  });

  it('combines filters', async () => {
    const { store } = await catalogue();
    expect(coupons(await store.get('/v1/app/discount?coupon=su&status=ACTIVE'))).toEqual(['SUMMER10']);
    expect(coupons(await store.get('/v1/app/discount?coupon=su&restricted_to=ANN@example.com'))).toEqual(['Summit']);
    expect(coupons(await store.get('/v1/app/discount?status=ACTIVE&restricted_to=ann@example.com'))).toEqual(['WINTER']);
    expect(coupons(await store.get('/v1/app/discount?coupon=w&status=SOLD_OUT&restricted_to=ann@example.com'))).toEqual([]);
  });

  it('finds a renamed coupon under its new code only', async () => {
    const { store, made } = await catalogue();
    await store.patch(`/v1/app/discount/${made.winter.id}`, { coupon: 'Sunny' });
    expect(coupons(await store.get('/v1/app/discount?coupon=sun'))).toEqual(['Sunny']);
    expect(coupons(await store.get('/v1/app/discount?coupon=win'))).toEqual([]);
  });

  it('pages a filtered list with the full meta, every URL keeping the filters', async () => {
    const store = await newStore();
    for (let i = 1; i <= 25; i++) await createDiscount(store, { coupon: `ACT${String(i).padStart(2, '0')}` });
    for (let i = 1; i <= 3; i++) await createDiscount(store, { coupon: `EXP${i}`, expires_in: PAST });
    const res = await store.get('/v1/app/discount?page=2&limit=20&status=ACTIVE');
    expect(res.status).toBe(200);
    expect(coupons(res)).toEqual(['ACT21', 'ACT22', 'ACT23', 'ACT24', 'ACT25']);
    expect(res.body.meta).toEqual({
      total: 25,
      per_page: 20,
      current_page: 2,
      last_page: 2,
      first_page: 1,
      first_page_url: '/v1/app/discount?page=1&limit=20&status=ACTIVE',
      last_page_url: '/v1/app/discount?page=2&limit=20&status=ACTIVE',
      next_page_url: null,
      previous_page_url: '/v1/app/discount?page=1&limit=20&status=ACTIVE',
    });
    const first = await store.get('/v1/app/discount?coupon=act&restricted_to=x&limit=2');
    expect(first.body.meta).toMatchObject({ total: 0, last_page: 1 });
    const prefixed = await store.get('/v1/app/discount?coupon=act&status=ACTIVE&limit=10');
    expect(prefixed.body.meta).toMatchObject({
      total: 25,
      last_page: 3,
      next_page_url: '/v1/app/discount?page=2&limit=10&coupon=act&status=ACTIVE',
      last_page_url: '/v1/app/discount?page=3&limit=10&coupon=act&status=ACTIVE',
    });
    const past = await store.get('/v1/app/discount?page=9&status=EXPIRED');
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toMatchObject({ total: 3, current_page: 9, last_page: 1, next_page_url: null });
  });

  it('defaults to limit 20, caps it at 100 and rejects bad query values', async () => {
    const store = await newStore();
    expect((await store.get('/v1/app/discount')).body.meta).toMatchObject({ per_page: 20, current_page: 1, total: 0 });
    expect((await store.get('/v1/app/discount?limit=100')).status).toBe(200);
    expect((await store.get('/v1/app/discount?limit=101')).status).toBe(422);
    expect((await store.get('/v1/app/discount?page=x')).status).toBe(400);
    const status = await store.get('/v1/app/discount?status=active');
    expect(status.status).toBe(422);
    expect(firstError(status).field).toBe('status');
    expect((await store.get(`/v1/app/discount?coupon=${'x'.repeat(51)}`)).status).toBe(422);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's discount and changes nothing", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const discount = await createDiscount(a, { coupon: 'MINE' });
    const get = await b.get(`/v1/app/discount/${discount.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/discount/${discount.id}`, { value: 99 })).status).toBe(404);
    expect((await b.delete(`/v1/app/discount/${discount.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/discount')).body.data).toEqual([]);
    expect((await b.get('/v1/app/discount?coupon=mi')).body.data).toEqual([]);
    expect((await a.get(`/v1/app/discount/${discount.id}`)).body).toEqual(discount);
  });

  it('requires the operator token', async () => {
    const store = await newStore();
    expect((await store.as('nope').get('/v1/app/discount')).status).toBe(401);
    expect((await store.as(store.identifyKey).post('/v1/app/discount', { coupon: 'K', type: 'VALUE', value: 1 })).status).toBe(403);
    expect(await total(store)).toBe(0);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('discount endpoints', async () => {
    const store = await newStore();
    const calls = dynamoDbCalls;
    // sequence ADD + one TransactWrite (the coupon and its code sentinel)
    const created = await store.post('/v1/app/discount', { coupon: 'C1', type: 'VALUE', value: 1 });
    expect(calls(created)).toBe(3);
    const path = `/v1/app/discount/${created.body.id}`;
    expect(calls(await store.get(path))).toBe(2);
    // unfiltered: the list's counter and its page, in parallel
    expect(calls(await store.get('/v1/app/discount'))).toBe(3);
    // by status alone, after the writes above: the snapshot's GetItem, the Query of every coupon, the snapshot's write
    expect(calls(await store.get('/v1/app/discount?status=ACTIVE'))).toBe(4);
    // then the snapshot's GetItem and a BatchGet of the page
    expect(calls(await store.get('/v1/app/discount?status=ACTIVE'))).toBe(3);
    // other filters (a list, a code prefix): one Query, on the table or (prefix filter) on gsi1, whatever the other filters
    expect(calls(await store.get('/v1/app/discount?status=ACTIVE&restricted_to=x'))).toBe(2);
    expect(calls(await store.get('/v1/app/discount?coupon=c'))).toBe(2);
    // GetItem + a TransactWrite: the update conditioned on the revision read (a rename moves the sentinel too) and the status snapshot's bump
    expect(calls(await store.patch(path, { value: 2 }))).toBe(3);
    expect(calls(await store.patch(path, { coupon: 'C2' }))).toBe(3);
    expect(calls(await store.delete(path))).toBe(3);
    expect(calls(await store.post('/v1/app/discount', { coupon: 'C3', type: 'VALUE', value: 0 }))).toBe(1);
  });
});

describe('GET /v1/app/discount?status=: a snapshot the writes that move a status keep, and the clock', () => {
  const T0 = '2026-06-01T12:00:00.000Z';
  const T1 = '2026-06-01T13:00:00.000Z';
  const T2 = '2026-06-01T14:00:00.000Z';
  const listed = async (store: Store, status: string, at = T0) => {
    const res = await store.get(`/v1/app/discount?status=${status}&limit=100`, { headers: atTime(at) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta.total).toBe(res.body.data.length);
    expect(res.body.data.every((discount: { status: string }) => discount.status === status)).toBe(true);
    return coupons(res);
  };
  const byStatus = async (store: Store, at = T0) => ({
    ACTIVE: await listed(store, 'ACTIVE', at),
    SOLD_OUT: await listed(store, 'SOLD_OUT', at),
    EXPIRED: await listed(store, 'EXPIRED', at),
  });
  const orderWith = async (store: Store, packageId: number, coupon: string, at = T0) =>
    store.post(
      '/v1/app/order',
      { client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve', packages: [{ package_id: packageId, quantity: 1 }], coupon },
      { headers: atTime(at) },
    );

  it('follows the clock (an expiry passing), the last use, a release from max_uses, a PATCH and a delete; page 1 costs the same however many coupons', async () => {
    const store = await newStore();
    const packageId = await createPackage(store);
    await createDiscount(store, { coupon: 'SOON', expires_in: T1 });
    await createDiscount(store, { coupon: 'TWICE', max_uses: 2 });
    await createDiscount(store, { coupon: 'OLD', expires_in: PAST });
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON', 'TWICE'], SOLD_OUT: [], EXPIRED: ['OLD'] });
    // The clock alone: SOON expires at T1, no write in between.
    expect(await byStatus(store, T2)).toEqual({ ACTIVE: ['TWICE'], SOLD_OUT: [], EXPIRED: ['SOON', 'OLD'] });
    // A use short of the last leaves the statuses (and the snapshot) as they are; the last one moves TWICE to SOLD_OUT.
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON', 'TWICE'], SOLD_OUT: [], EXPIRED: ['OLD'] });
    const first = await orderWith(store, packageId, 'TWICE');
    expect(first.status, first.text).toBe(200);
    const warm = await store.get('/v1/app/discount?status=ACTIVE', { headers: atTime(T0) });
    // the snapshot's GetItem and the page's BatchGet: the use did not touch the snapshot
    expect(dynamoDbCalls(warm)).toBe(3);
    const last = await orderWith(store, packageId, 'TWICE');
    expect(last.status, last.text).toBe(200);
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON'], SOLD_OUT: ['TWICE'], EXPIRED: ['OLD'] });
    // A cancel gives a use back from max_uses: usable again.
    expect((await store.post(`/v1/app/order/${last.body.id}/cancel`)).status).toBe(200);
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON', 'TWICE'], SOLD_OUT: [], EXPIRED: ['OLD'] });
    // A PATCH moving the expiry into the past, then a delete.
    const old = (await store.get('/v1/app/discount?coupon=old')).body.data[0];
    expect((await store.patch(`/v1/app/discount/${old.id}`, { expires_in: null })).status).toBe(200);
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON', 'TWICE', 'OLD'], SOLD_OUT: [], EXPIRED: [] });
    expect((await store.delete(`/v1/app/discount/${old.id}`)).status).toBe(204);
    expect(await byStatus(store)).toEqual({ ACTIVE: ['SOON', 'TWICE'], SOLD_OUT: [], EXPIRED: [] });

    // Page 1 of a warm snapshot: the credential, the snapshot, the page's BatchGet, with 3 coupons or 60.
    await store.get('/v1/app/discount?status=ACTIVE', { headers: atTime(T0) });
    const small = await store.get('/v1/app/discount?status=ACTIVE&limit=2', { headers: atTime(T0) });
    await Promise.all(Array.from({ length: 57 }, (_, i) => createDiscount(store, { coupon: `MANY${i}` })));
    await store.get('/v1/app/discount?status=ACTIVE', { headers: atTime(T0) });
    const large = await store.get('/v1/app/discount?status=ACTIVE&limit=2', { headers: atTime(T0) });
    expect(large.body.meta.total).toBe(59);
    expect([dynamoDbCalls(small), dynamoDbCalls(large)]).toEqual([3, 3]);
  });

  it('20 orders racing for the last 3 uses of a coupon: 3 placed, and the list shows it SOLD_OUT', async () => {
    const store = await newStore();
    const packageId = await createPackage(store);
    await createDiscount(store, { coupon: 'THREE', max_uses: 3 });
    expect(await listed(store, 'ACTIVE')).toEqual(['THREE']);
    const placed = await Promise.all(Array.from({ length: 20 }, () => orderWith(store, packageId, 'three')));
    expect(placed.filter((res) => res.status === 200)).toHaveLength(3);
    expect(placed.every((res) => res.status === 200 || res.status === 422 || res.status === 503)).toBe(true);
    expect(await byStatus(store)).toEqual({ ACTIVE: [], SOLD_OUT: ['THREE'], EXPIRED: [] });
    expect((await store.get('/v1/app/discount?coupon=three')).body.data[0].uses).toBe(3);
  });
});
