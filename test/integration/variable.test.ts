import { describe, expect, it } from 'vitest';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { createPackage as buildPackage, createVariable as buildVariable, ISO_Z, type Store } from '../support/builders.ts';

type Option = { id: number; name: string; value: string; price: number | null };

const COLOURS = [
  { name: 'red', value: 'RED', price: 1 },
  { name: 'green', value: 'GREEN', price: null },
  { name: 'blue', value: 'BLUE' },
];

const createVariable = async (store: Store, body: Record<string, unknown>) => (await buildVariable(store, { description: 'Shown at checkout', ...body })) as any;
const createPackage = async (store: Store, name = 'Package') => (await buildPackage(store, { name })).id;

const total = async (store: Store) => (await store.get('/v1/app/variable?limit=100')).body.meta.total as number;
const names = (options: Option[]) => options.map((o) => o.name);

describe('POST /v1/app/variable', () => {
  it('creates a TEXT variable with defaults, the bracket and display forms, and no options field', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/variable', { name: 'nick_name-2', type: 'TEXT', description: 'Your in-game nick' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: 1,
      store_id: store.storeId,
      name: 'nick_name-2',
      description: 'Your in-game nick',
      type: 'TEXT',
      required: false,
      regex: null,
      applies_to: null,
      bracket_display: '{nick_name-2}',
      display: 'nick_name-2',
      created_at: expect.stringMatching(ISO_Z),
      updated_at: res.body.created_at,
    });
    expect(Object.keys(res.body)).toEqual([
      'id',
      'store_id',
      'name',
      'description',
      'type',
      'required',
      'regex',
      'applies_to',
      'bracket_display',
      'display',
      'created_at',
      'updated_at',
    ]);
    expect((await store.get(`/v1/app/variable/${res.body.id}`)).body).toEqual(res.body);
  });

  it('creates a SELECT variable whose options get ids, price defaulting to null', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const res = await store.post('/v1/app/variable', {
      name: 'colour',
      type: 'SELECT',
      description: 'Pick one',
      required: true,
      regex: '^[a-z]+$',
      applies_to: [p],
      options: COLOURS,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'SELECT', required: true, regex: '^[a-z]+$', applies_to: [p] });
    expect(res.body.options).toEqual([
      { id: 1, name: 'red', value: 'RED', price: 1 },
      { id: 2, name: 'green', value: 'GREEN', price: null },
      { id: 3, name: 'blue', value: 'BLUE', price: null },
    ]);
    expect((await store.get(`/v1/app/variable/${res.body.id}`)).body).toEqual(res.body);
  });

  it('accepts every type and 48 packages in applies_to', async () => {
    const store = await newStore();
    for (const type of ['NUMBER', 'TEXT', 'GAME']) await createVariable(store, { name: `v_${type}`, type });
    const packages = [];
    for (let i = 0; i < 48; i++) packages.push(await createPackage(store, `P${i}`));
    const res = await store.post('/v1/app/variable', { name: 'wide', type: 'TEXT', description: 'd', applies_to: packages });
    expect(res.status, res.text).toBe(200);
    expect(res.body.applies_to).toEqual(packages);
  });

  it.each([
    ['name missing', { type: 'TEXT', description: 'd' }, 'name'],
    ['name empty', { name: ' ', type: 'TEXT', description: 'd' }, 'name'],
    ['name with a space', { name: 'my var', type: 'TEXT', description: 'd' }, 'name'],
    ['name with braces', { name: '{nick}', type: 'TEXT', description: 'd' }, 'name'],
    ['name with an accent', { name: 'café', type: 'TEXT', description: 'd' }, 'name'],
    ['name too long', { name: 'n'.repeat(51), type: 'TEXT', description: 'd' }, 'name'],
    ['type missing', { name: 'A', description: 'd' }, 'type'],
    ['type unknown', { name: 'A', type: 'DATE', description: 'd' }, 'type'],
    ['description missing', { name: 'A', type: 'TEXT' }, 'description'],
    ['description empty', { name: 'A', type: 'TEXT', description: '' }, 'description'],
    ['description too long', { name: 'A', type: 'TEXT', description: 'd'.repeat(501) }, 'description'],
    ['required not a boolean', { name: 'A', type: 'TEXT', description: 'd', required: 'yes' }, 'required'],
    ['regex that does not compile', { name: 'A', type: 'TEXT', description: 'd', regex: '([a-z]' }, 'regex'],
    ['regex too long', { name: 'A', type: 'TEXT', description: 'd', regex: 'a'.repeat(501) }, 'regex'],
    ['regex empty', { name: 'A', type: 'TEXT', description: 'd', regex: '' }, 'regex'],
    ['applies_to not an array', { name: 'A', type: 'TEXT', description: 'd', applies_to: 5 }, 'applies_to'],
    ['applies_to with 0', { name: 'A', type: 'TEXT', description: 'd', applies_to: [0] }, 'applies_to.0'],
    ['applies_to id beyond a safe integer', { name: 'A', type: 'TEXT', description: 'd', applies_to: [1e200] }, 'applies_to.0'],
    ['applies_to repeating an id', { name: 'A', type: 'TEXT', description: 'd', applies_to: [1, 1] }, 'applies_to'],
    ['applies_to over 48 ids', { name: 'A', type: 'TEXT', description: 'd', applies_to: Array.from({ length: 49 }, (_, i) => i + 1) }, 'applies_to'],
    ['SELECT without options', { name: 'A', type: 'SELECT', description: 'd' }, 'options'],
    ['SELECT with one option', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0]] }, 'options'],
    ['options on a TEXT variable', { name: 'A', type: 'TEXT', description: 'd', options: COLOURS }, 'options'],
    ['option names repeated', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0], COLOURS[1], { name: 'red', value: 'x' }] }, 'options.2.name'],
    ['option without value', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0], { name: 'x' }] }, 'options.1.value'],
    ['option price negative', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0], { name: 'x', value: 'x', price: -1 }] }, 'options.1.price'],
    ['option price beyond the amount range', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0], { name: 'x', value: 'x', price: 1e200 }] }, 'options.1.price'],
    ['option with an id', { name: 'A', type: 'SELECT', description: 'd', options: [COLOURS[0], { id: 9, name: 'x', value: 'x' }] }, 'options.1.id'],
    ['too many options', { name: 'A', type: 'SELECT', description: 'd', options: Array.from({ length: 101 }, (_, i) => ({ name: `o${i}`, value: 'v' })) }, 'options'],
    ['unknown field', { name: 'A', type: 'TEXT', description: 'd', bracket_display: '{A}' }, 'bracket_display'],
  ])('rejects %s with 422 naming the field, and creates nothing', async (_case, body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/variable', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect(await total(store)).toBe(0);
    // A rejected creation reserves no name.
    if ((body as { name?: unknown }).name === 'A') await createVariable(store, { name: 'A' });
  });

  it('rejects a body that is not JSON or not an object with 400, and 1e999 (Infinity once parsed) with 422, creating nothing', async () => {
    const store = await newStore();
    expect((await store.post('/v1/app/variable', undefined, { raw: '{"name":', contentType: 'application/json' })).status).toBe(400);
    expect((await store.post('/v1/app/variable', [{ name: 'v', type: 'TEXT', description: 'd' }])).status).toBe(400);
    const raw = '{"name":"v","type":"SELECT","description":"d","options":[{"name":"a","value":"a"},{"name":"b","value":"b","price":1e999}]}';
    const infinite = await store.post('/v1/app/variable', undefined, { raw, contentType: 'application/json' });
    expect(infinite.status).toBe(422);
    expect(firstError(infinite).field).toBe('options.1.price');
    expect(await total(store)).toBe(0);
    await createVariable(store, { name: 'v' });
  });

  it('answers 422 naming applies_to.N for a package that does not exist, and creates nothing', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const res = await store.post('/v1/app/variable', { name: 'v', type: 'TEXT', description: 'd', applies_to: [p, 777] });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'applies_to.1', code: 'VALIDATION_FAILED' });
    expect(await total(store)).toBe(0);
    // Nothing was counted on the package that does exist: it can be deleted.
    expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(204);
    await createVariable(store, { name: 'v' });
  });

  it('answers 409 for a name already used in the store, ignoring case, and changes nothing', async () => {
    const store = await newStore();
    const first = await createVariable(store, { name: 'Nick' });
    for (const name of ['Nick', 'nick', 'NICK']) {
      const res = await store.post('/v1/app/variable', { name, type: 'NUMBER', description: 'other' });
      expect(res.status).toBe(409);
      expect(firstError(res)).toMatchObject({ code: 'CONFLICT', field: 'name' });
    }
    expect((await store.get('/v1/app/variable')).body.data).toEqual([first]);
  });

  it('lets exactly one of 6 concurrent creations of one name win', async () => {
    const store = await newStore();
    const results = await Promise.all(
      ['server', 'SERVER', 'Server', 'server', 'sErVeR', 'SERVER'].map((name) => store.post('/v1/app/variable', { name, type: 'TEXT', description: 'd' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const list = await store.get('/v1/app/variable');
    expect(list.body.data).toEqual([results.find((r) => r.status === 200)!.body]);
  });
});

describe('PATCH /v1/app/variable/{variable-id}', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'age', type: 'NUMBER', regex: '^\\d+$' });
    const res = await store.patch(`/v1/app/variable/${created.id}`, { description: 'How old are you?', required: true }, { headers: atTime(created.updated_at, 1000) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, description: 'How old are you?', required: true, updated_at: res.body.updated_at });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    const cleared = await store.patch(`/v1/app/variable/${created.id}`, { regex: null });
    expect(cleared.body.regex).toBeNull();
    expect((await store.get(`/v1/app/variable/${created.id}`)).body).toEqual(cleared.body);
  });

  it('matches options by name: ids kept, new names added, missing ones deactivated, resubmitted ones reactivated', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'colour', type: 'SELECT', options: COLOURS });
    const url = `/v1/app/variable/${created.id}`;

    const second = await store.patch(url, {
      options: [
        { name: 'green', value: 'LIME', price: 2.5 },
        { name: 'blue', value: 'BLUE' },
        { name: 'yellow', value: 'YELLOW', price: 0 },
      ],
    });
    expect(second.status).toBe(200);
    expect(second.body.options).toEqual([
      { id: 2, name: 'green', value: 'LIME', price: 2.5 },
      { id: 3, name: 'blue', value: 'BLUE', price: null },
      { id: 4, name: 'yellow', value: 'YELLOW', price: 0 },
    ]);
    expect((await store.get(url)).body.options).toEqual(second.body.options);

    const third = await store.patch(url, {
      options: [
        { name: 'red', value: 'CRIMSON' },
        { name: 'yellow', value: 'YELLOW' },
      ],
    });
    expect(third.body.options).toEqual([
      { id: 1, name: 'red', value: 'CRIMSON', price: null },
      { id: 4, name: 'yellow', value: 'YELLOW', price: null },
    ]);

    const fourth = await store.patch(url, {
      options: [
        { name: 'purple', value: 'P' },
        { name: 'green', value: 'G' },
        { name: 'red', value: 'R' },
      ],
    });
    expect(fourth.body.options).toEqual([
      { id: 5, name: 'purple', value: 'P', price: null },
      { id: 2, name: 'green', value: 'G', price: null },
      { id: 1, name: 'red', value: 'R', price: null },
    ]);
    const listed = (await store.get('/v1/app/variable')).body.data[0];
    expect(listed.options).toEqual(fourth.body.options);
  });

  it('keeps the options when a patch does not send them', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'size', type: 'SELECT', options: COLOURS });
    const res = await store.patch(`/v1/app/variable/${created.id}`, { description: 'Size', type: 'SELECT' });
    expect(res.body.options).toEqual(created.options);
  });

  it('changes type: away from SELECT hides the options, back to SELECT needs them and reactivates old names', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'kind', type: 'SELECT', options: COLOURS });
    const url = `/v1/app/variable/${created.id}`;
    const text = await store.patch(url, { type: 'TEXT' });
    expect(text.status).toBe(200);
    expect(text.body.type).toBe('TEXT');
    expect('options' in text.body).toBe(false);

    const bare = await store.patch(url, { type: 'SELECT' });
    expect(bare.status).toBe(422);
    expect(firstError(bare).field).toBe('options');
    expect((await store.get(url)).body).toEqual(text.body);

    const back = await store.patch(url, {
      type: 'SELECT',
      options: [
        { name: 'blue', value: 'B' },
        { name: 'new', value: 'N' },
      ],
    });
    expect(back.status).toBe(200);
    expect(back.body.options).toEqual([
      { id: 3, name: 'blue', value: 'B', price: null },
      { id: 4, name: 'new', value: 'N', price: null },
    ]);
  });

  it('rejects options on a variable that is not SELECT, and SELECT with fewer than 2 options, changing nothing', async () => {
    const store = await newStore();
    const text = await createVariable(store, { name: 'plain', type: 'TEXT' });
    const onText = await store.patch(`/v1/app/variable/${text.id}`, { options: COLOURS });
    expect(onText.status).toBe(422);
    expect(firstError(onText).field).toBe('options');
    const toGame = await store.patch(`/v1/app/variable/${text.id}`, { type: 'GAME', options: COLOURS });
    expect(toGame.status).toBe(422);
    expect(firstError(toGame).field).toBe('options');
    const one = await store.patch(`/v1/app/variable/${text.id}`, { type: 'SELECT', options: [COLOURS[0]] });
    expect(one.status).toBe(422);
    expect(firstError(one).field).toBe('options');
    expect((await store.get(`/v1/app/variable/${text.id}`)).body).toEqual(text);

    const select = await createVariable(store, { name: 'pick', type: 'SELECT', options: COLOURS });
    const dup = await store.patch(`/v1/app/variable/${select.id}`, {
      options: [
        { name: 'a', value: '1' },
        { name: 'a', value: '2' },
      ],
    });
    expect(dup.status).toBe(422);
    expect(firstError(dup).field).toBe('options.1.name');
    const single = await store.patch(`/v1/app/variable/${select.id}`, { options: [{ name: 'a', value: '1' }] });
    expect(single.status).toBe(422);
    expect(firstError(single).field).toBe('options');
    expect((await store.get(`/v1/app/variable/${select.id}`)).body).toEqual(select);
  });

  it('rejects an empty patch and invalid or read-only fields with 422, changing nothing', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'steady', type: 'TEXT' });
    for (const body of [
      {},
      { name: 'bad name' },
      { regex: '*' },
      { regex: 'x'.repeat(501) },
      { type: 'LIST' },
      { description: '' },
      { display: 'x' },
      { id: 2 },
      { applies_to: [-1] },
    ]) {
      const res = await store.patch(`/v1/app/variable/${created.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      firstError(res);
    }
    expect((await store.get(`/v1/app/variable/${created.id}`)).body).toEqual(created);
  });

  it('renames: bracket_display follows, the old name becomes free, a change of case alone is fine', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'nick' });
    const url = `/v1/app/variable/${created.id}`;
    expect((await store.patch(url, { name: 'Nick' })).body).toMatchObject({ name: 'Nick', bracket_display: '{Nick}', display: 'Nick' });
    const renamed = await store.patch(url, { name: 'player' });
    expect(renamed.body).toMatchObject({ name: 'player', bracket_display: '{player}' });
    expect((await store.post('/v1/app/variable', { name: 'PLAYER', type: 'TEXT', description: 'd' })).status).toBe(409);
    expect((await store.post('/v1/app/variable', { name: 'nick', type: 'TEXT', description: 'd' })).status).toBe(200);
  });

  it('answers 409 to a rename onto an existing name, ignoring case, and changes nothing', async () => {
    const store = await newStore();
    const taken = await createVariable(store, { name: 'taken' });
    const other = await createVariable(store, { name: 'other' });
    const res = await store.patch(`/v1/app/variable/${other.id}`, { name: 'TAKEN', description: 'changed' });
    expect(res.status).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect((await store.get('/v1/app/variable')).body.data).toEqual([taken, other]);
    expect((await store.post('/v1/app/variable', { name: 'other', type: 'TEXT', description: 'd' })).status).toBe(409);
  });

  it('lets exactly one of concurrent renames and creations claim a name', async () => {
    const store = await newStore();
    const variables = await Promise.all(['v1', 'v2', 'v3'].map((name) => createVariable(store, { name })));
    const results = await Promise.all([
      ...variables.map((v) => store.patch(`/v1/app/variable/${v.id}`, { name: 'prize' })),
      store.post('/v1/app/variable', { name: 'PRIZE', type: 'TEXT', description: 'd' }),
      store.post('/v1/app/variable', { name: 'Prize', type: 'TEXT', description: 'd' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const listed = (await store.get('/v1/app/variable')).body.data.map((v: { name: string }) => v.name.toLowerCase());
    expect(listed.filter((name: string) => name === 'prize')).toHaveLength(1);
  });

  it('serialises concurrent option updates: no option is lost or duplicated', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'race', type: 'SELECT', options: COLOURS });
    const url = `/v1/app/variable/${created.id}`;
    const results = await Promise.all([
      store.patch(url, { options: [...COLOURS, { name: 'a', value: 'a' }] }),
      store.patch(url, { options: [...COLOURS, { name: 'b', value: 'b' }] }),
      store.patch(url, { description: 'new text' }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const final = (await store.get(url)).body;
    expect(final.description).toBe('new text');
    // Serialised, the first option write gave its new option id 4 and the second (the survivor) id 5.
    expect(names(final.options).slice(0, 3)).toEqual(['red', 'green', 'blue']);
    expect(final.options.map((o: Option) => o.id)).toEqual([1, 2, 3, 5]);
    const loser = final.options[3].name === 'a' ? 'b' : 'a';
    const reactivated = await store.patch(url, {
      options: [
        { name: loser, value: loser },
        { name: 'c', value: 'c' },
      ],
    });
    expect(reactivated.body.options).toEqual([
      { id: 4, name: loser, value: loser, price: null },
      { id: 6, name: 'c', value: 'c', price: null },
    ]);
  });

  it('refuses a regex the linear-time engine cannot run (backreference, lookaround) with 422 on regex, on create and on update, changing nothing', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'nick', regex: '[a-z]+' });
    for (const regex of ['(?=a)(a|a)+', '(ab)\\1', '(?<=a)b', '(?<n>x)\\k<n>']) {
      const posted = await store.post('/v1/app/variable', { name: 'other', type: 'TEXT', description: 'x', regex });
      expect(posted.status, regex).toBe(422);
      expect(posted.body.errors).toEqual([expect.objectContaining({ field: 'regex', code: 'VALIDATION_FAILED' })]);
      const patched = await store.patch(`/v1/app/variable/${created.id}`, { regex, description: 'changed' });
      expect(patched.status, regex).toBe(422);
      expect(firstError(patched).field).toBe('regex');
    }
    expect(await total(store)).toBe(1);
    expect((await store.get(`/v1/app/variable/${created.id}`)).body).toEqual(created);
    // The name was never claimed by the refused creations.
    await createVariable(store, { name: 'other', regex: 'a+b' });
  });

  it('answers 404 for a missing variable and a non-numeric id', async () => {
    const store = await newStore();
    expect((await store.patch('/v1/app/variable/999', { description: 'x' })).status).toBe(404);
    expect(firstError(await store.patch('/v1/app/variable/x1', { description: 'x' })).code).toBe('NOT_FOUND');
    expect((await store.get('/v1/app/variable/999')).status).toBe(404);
  });
});

describe('applies_to references', () => {
  it('counts references: a package named by a variable cannot be deleted until the variable lets it go', async () => {
    const store = await newStore();
    const [p1, p2] = [await createPackage(store, 'one'), await createPackage(store, 'two')];
    const variable = await createVariable(store, { name: 'v', applies_to: [p1] });
    expect((await store.delete(`/v1/app/package/${p1}`)).status).toBe(409);

    const moved = await store.patch(`/v1/app/variable/${variable.id}`, { applies_to: [p2] });
    expect(moved.body.applies_to).toEqual([p2]);
    expect((await store.delete(`/v1/app/package/${p2}`)).status).toBe(409);
    expect((await store.delete(`/v1/app/package/${p1}`)).status).toBe(204);

    expect((await store.patch(`/v1/app/variable/${variable.id}`, { applies_to: null })).body.applies_to).toBeNull();
    expect((await store.delete(`/v1/app/package/${p2}`)).status).toBe(204);
  });

  it('renames and swaps 48 packages for 48 others in one write (the largest transaction: 99 items)', async () => {
    const store = await newStore();
    const ids = await Promise.all(Array.from({ length: 96 }, (_, i) => createPackage(store, `p${i}`)));
    const [before, after] = [ids.slice(0, 48), ids.slice(48)];
    const variable = await createVariable(store, { name: 'big', applies_to: before });
    const res = await store.patch(`/v1/app/variable/${variable.id}`, { name: 'bigger', applies_to: after });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'bigger', applies_to: after });
    expect((await store.delete(`/v1/app/package/${before[0]}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${after[47]}`)).status).toBe(409);
  });

  it('releases the references of a deleted variable', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const variable = await createVariable(store, { name: 'v', applies_to: [p] });
    await store.patch(`/v1/app/variable/${variable.id}`, { name: 'renamed' });
    expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(409);
    expect((await store.delete(`/v1/app/variable/${variable.id}`)).status).toBe(204);
    expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(204);
  });

  it('answers 422 naming applies_to.N on a patch with a missing package, changing nothing', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const variable = await createVariable(store, { name: 'v', applies_to: [p] });
    const res = await store.patch(`/v1/app/variable/${variable.id}`, { applies_to: [p, 404], name: 'w' });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('applies_to.1');
    expect((await store.get(`/v1/app/variable/${variable.id}`)).body).toEqual(variable);
    expect((await store.post('/v1/app/variable', { name: 'w', type: 'TEXT', description: 'd' })).status).toBe(200);
    // The package keeps exactly one reference: dropping it makes the package deletable.
    await store.patch(`/v1/app/variable/${variable.id}`, { applies_to: [] });
    expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(204);
  });

  it('counts every one of 8 concurrent references to one package', async () => {
    const store = await newStore();
    const p = await createPackage(store);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.post('/v1/app/variable', { name: `v${i}`, type: 'TEXT', description: 'd', applies_to: [p] })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    for (const [index, res] of results.entries()) {
      expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(409);
      await store.delete(`/v1/app/variable/${res.body.id}`);
      if (index === results.length - 1) expect((await store.delete(`/v1/app/package/${p}`)).status).toBe(204);
    }
  });

  it('never leaves a reference to a deleted package when a delete races a creation', async () => {
    const store = await newStore();
    for (let round = 0; round < 4; round++) {
      const p = await createPackage(store, `p${round}`);
      const [deleted, created] = await Promise.all([
        store.delete(`/v1/app/package/${p}`),
        store.post('/v1/app/variable', { name: `r${round}`, type: 'TEXT', description: 'd', applies_to: [p] }),
      ]);
      if (created.status === 200) {
        expect(deleted.status).toBe(409);
        expect((await store.get(`/v1/app/package/${p}`)).status).toBe(200);
      } else {
        expect([created.status, deleted.status]).toEqual([422, 204]);
        expect(firstError(created).field).toBe('applies_to.0');
      }
    }
  });
});

describe('GET and DELETE /v1/app/variable', () => {
  it("lists in id order (the page meta is the page-mode family's, test/integration/families.test.ts)", async () => {
    const store = await newStore();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await createVariable(store, { name });
    const res = await store.get('/v1/app/variable?page=2&limit=2');
    expect(res.status).toBe(200);
    expect(res.body.data.map((v: { name: string }) => v.name)).toEqual(['c', 'd']);
    expect((await store.get('/v1/app/variable')).body.meta).toMatchObject({ per_page: 20, total: 5 });
    expect((await store.get('/v1/app/variable?limit=101')).status).toBe(422);
    expect((await store.get('/v1/app/variable?page=one')).status).toBe(400);
  });

  it('deletes (204), after which it is 404 and its name is free again', async () => {
    const store = await newStore();
    const created = await createVariable(store, { name: 'Gone', type: 'SELECT', options: COLOURS });
    const res = await store.delete(`/v1/app/variable/${created.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await store.get(`/v1/app/variable/${created.id}`)).status).toBe(404);
    expect((await store.delete(`/v1/app/variable/${created.id}`)).status).toBe(404);
    expect(await total(store)).toBe(0);
    expect((await store.post('/v1/app/variable', { name: 'gone', type: 'TEXT', description: 'd' })).status).toBe(200);
  });
});

describe('tenancy', () => {
  it("answers 404 to store B for store A's variable and changes nothing", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const variable = await createVariable(a, { name: 'mine', type: 'SELECT', options: COLOURS });
    const get = await b.get(`/v1/app/variable/${variable.id}`);
    expect(get.status).toBe(404);
    expect(firstError(get).code).toBe('NOT_FOUND');
    expect((await b.patch(`/v1/app/variable/${variable.id}`, { description: 'stolen' })).status).toBe(404);
    expect((await b.delete(`/v1/app/variable/${variable.id}`)).status).toBe(404);
    expect((await b.get('/v1/app/variable')).body.data).toEqual([]);
    expect((await a.get(`/v1/app/variable/${variable.id}`)).body).toEqual(variable);
    // Names are unique per store only.
    expect((await b.post('/v1/app/variable', { name: 'mine', type: 'TEXT', description: 'd' })).status).toBe(200);
  });

  it("answers 422 when applies_to names another store's package, on create and on update", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const foreign = await createPackage(a);
    const create = await b.post('/v1/app/variable', { name: 'x', type: 'TEXT', description: 'd', applies_to: [foreign] });
    expect(create.status).toBe(422);
    expect(firstError(create).field).toBe('applies_to.0');
    expect(await total(b)).toBe(0);
    const own = await createVariable(b, { name: 'y' });
    const patch = await b.patch(`/v1/app/variable/${own.id}`, { applies_to: [foreign] });
    expect(patch.status).toBe(422);
    expect(firstError(patch).field).toBe('applies_to.0');
    expect((await b.get(`/v1/app/variable/${own.id}`)).body).toEqual(own);
    // A's package holds no reference from B.
    expect((await a.delete(`/v1/app/package/${foreign}`)).status).toBe(204);
  });

  it('requires the operator token', async () => {
    const store = await newStore();
    expect((await store.as('nope').post('/v1/app/variable', { name: 'x', type: 'TEXT', description: 'd' })).status).toBe(401);
    expect((await store.as(store.identifyKey).get('/v1/app/variable')).status).toBe(403);
    expect(await total(store)).toBe(0);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('variable endpoints', async () => {
    const store = await newStore();
    const calls = dynamoDbCalls;
    // sequence ADD + one TransactWrite (the variable and its name sentinel)
    const created = await store.post('/v1/app/variable', { name: 'v', type: 'TEXT', description: 'd' });
    expect(calls(created)).toBe(3);
    const path = `/v1/app/variable/${created.body.id}`;
    expect(calls(await store.get(path))).toBe(2);
    // the list's counter (GetItem) and its page (Query with Limit), in parallel; the create and delete move the counter in their own write
    expect(calls(await store.get('/v1/app/variable'))).toBe(3);
    // GetItem + a Put conditioned on the revision read; a rename moves the sentinel in a TransactWrite instead
    expect(calls(await store.patch(path, { description: 'e' }))).toBe(3);
    expect(calls(await store.patch(path, { name: 'w' }))).toBe(3);
    expect(calls(await store.delete(path))).toBe(3);
    expect(calls(await store.post('/v1/app/variable', { name: 'bad name', type: 'TEXT', description: 'd' }))).toBe(1);
  });
});
