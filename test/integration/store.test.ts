import { describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { createStore, storeKey } from '#lib/db/store.ts';
import { firstError, newStore } from '../support/client.ts';

describe('GET /v1/app/store', () => {
  it("answers the token's store with the default affiliate settings", async () => {
    const store = await newStore('Shop one');
    const res = await store.get('/v1/app/store');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: store.storeId,
      store_id: store.storeId,
      name: 'Shop one',
      domain: store.domain,
      affiliate: { self_registration: true, percent_commission: 10, min_withdraw: 0 },
      allowed_origins: [],
      currency: 'BRL',
      theme: { primary_color: '#2563eb', logo: null, banner: null },
      payments: { chargeback_on: 'DISPUTE_OPENED' },
      terms_url: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });
});

describe('PATCH /v1/app/store', () => {
  it('changes name and single affiliate settings, keeping the others', async () => {
    const store = await newStore();
    const res = await store.patch('/v1/app/store', { name: 'Renamed', affiliate: { percent_commission: 15 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', affiliate: { self_registration: true, percent_commission: 15, min_withdraw: 0 } });
    const again = await store.patch('/v1/app/store', { affiliate: { self_registration: false, min_withdraw: 25 } });
    expect(again.body.affiliate).toEqual({ self_registration: false, percent_commission: 15, min_withdraw: 25 });
    expect((await store.get('/v1/app/store')).body).toEqual(again.body);
  });

  it('moves the domain: the old one becomes free, the new one is taken', async () => {
    const store = await newStore();
    const oldDomain = store.domain;
    const newDomain = `moved-${store.storeId}.test.localhost`;
    const res = await store.patch('/v1/app/store', { domain: newDomain.toUpperCase() });
    expect(res.status).toBe(200);
    expect(res.body.domain).toBe(newDomain);
    await expect(createStore({ name: 'taker', domain: oldDomain })).resolves.toMatchObject({ domain: oldDomain });
    await expect(createStore({ name: 'late', domain: newDomain })).rejects.toMatchObject({ status: 409 });
  });

  it('gives a contested domain to exactly one of two racing stores', async () => {
    const [a, b] = [await newStore(), await newStore()];
    const contested = `contested-${a.storeId}.test.localhost`;
    const results = await Promise.all([a.patch('/v1/app/store', { domain: contested }), b.patch('/v1/app/store', { domain: contested })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const domains = [(await a.get('/v1/app/store')).body.domain, (await b.get('/v1/app/store')).body.domain];
    expect(domains.filter((d) => d === contested)).toHaveLength(1);
  });

  it('keeps one domain sentinel per store when two domain changes race', async () => {
    const store = await newStore();
    const [first, second] = [`race1-${store.storeId}.test.localhost`, `race2-${store.storeId}.test.localhost`];
    const results = await Promise.all([store.patch('/v1/app/store', { domain: first }), store.patch('/v1/app/store', { domain: second })]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    const kept = (await store.get('/v1/app/store')).body.domain;
    expect([first, second]).toContain(kept);
    const released = kept === first ? second : first;
    await expect(createStore({ name: 'taker', domain: released })).resolves.toMatchObject({ domain: released });
    await expect(createStore({ name: 'late', domain: kept })).rejects.toMatchObject({ status: 409 });
    await expect(createStore({ name: 'original', domain: store.domain })).resolves.toMatchObject({ domain: store.domain });
  });

  it("answers 409 for another store's domain and changes nothing", async () => {
    const a = await newStore();
    const b = await newStore();
    const before = (await b.get('/v1/app/store')).body;
    const res = await b.patch('/v1/app/store', { domain: a.domain, name: 'Should not stick' });
    expect(res.status).toBe(409);
    expect(firstError(res)).toMatchObject({ code: 'CONFLICT', field: 'domain' });
    expect((await b.get('/v1/app/store')).body).toEqual(before);
  });

  it.each([
    ['an empty body', {}, undefined],
    ['an empty affiliate object', { affiliate: {} }, 'affiliate'],
    ['a domain with spaces', { domain: 'not a domain' }, 'domain'],
    ['a single-label domain', { domain: 'localhost' }, 'domain'],
    ['a commission above 100', { affiliate: { percent_commission: 101 } }, 'affiliate.percent_commission'],
    ['a negative minimum withdrawal', { affiliate: { min_withdraw: -1 } }, 'affiliate.min_withdraw'],
    ['a minimum withdrawal too large to store', { affiliate: { min_withdraw: 1e200 } }, 'affiliate.min_withdraw'],
    ['a non-boolean self_registration', { affiliate: { self_registration: 'yes' } }, 'affiliate.self_registration'],
    ['an unknown field', { id: 7 }, 'id'],
    ['a currency that is not a code', { currency: 'Real' }, 'currency'],
    ['an unknown currency code', { currency: 'XYZ' }, 'currency'],
    ['a currency without two decimals', { currency: 'JPY' }, 'currency'],
    ['a currency that is not a string', { currency: 986 }, 'currency'],
    ['an empty theme', { theme: {} }, 'theme'],
    ['a named color', { theme: { primary_color: 'red' } }, 'theme.primary_color'],
    ['a short hex color', { theme: { primary_color: '#25e' } }, 'theme.primary_color'],
    ['an http logo', { theme: { logo: 'http://cdn.example.com/logo.png' } }, 'theme.logo'],
    ['a javascript: banner', { theme: { banner: 'javascript:alert(1)' } }, 'theme.banner'],
    ['a logo that is not a URL', { theme: { logo: 'logo.png' } }, 'theme.logo'],
    ['a logo over 2048 characters', { theme: { logo: `https://cdn.example.com/${'a'.repeat(2030)}` } }, 'theme.logo'],
    ['an unknown theme field', { theme: { font: 'serif' } }, 'theme.font'],
    ['an empty payments object', { payments: {} }, 'payments'],
    ['an unknown chargeback_on', { payments: { chargeback_on: 'NEVER' } }, 'payments.chargeback_on'],
    ['payments settings that are not an object', { payments: 'DISPUTE_LOST' }, 'payments'],
    ['an http terms_url', { terms_url: 'http://shop.example.com/terms' }, 'terms_url'],
    ['a terms_url that is not a URL', { terms_url: 'terms.html' }, 'terms_url'],
    ['a terms_url that is not a string', { terms_url: true }, 'terms_url'],
    ['a terms_url over 2048 characters', { terms_url: `https://shop.example.com/${'a'.repeat(2030)}` }, 'terms_url'],
  ])('rejects %s with 422 and changes nothing', async (_case, body, field) => {
    const store = await newStore();
    const before = (await store.get('/v1/app/store')).body;
    const res = await store.patch('/v1/app/store', body);
    expect(res.status).toBe(422);
    const error = firstError(res);
    if (field) expect(error.field).toBe(field);
    expect((await store.get('/v1/app/store')).body).toEqual(before);
  });
});

describe('the currency, theme and payment settings (extensions sections 8 and 13)', () => {
  it('sets each on its own and keeps the rest; a logo or banner is cleared with null', async () => {
    const store = await newStore();
    const currency = await store.patch('/v1/app/store', { currency: 'usd' });
    expect(currency.status).toBe(200);
    expect(currency.body).toMatchObject({ currency: 'USD', theme: { primary_color: '#2563eb', logo: null, banner: null } });
    const themed = await store.patch('/v1/app/store', { theme: { primary_color: '#10B981', logo: 'https://cdn.example.com/logo.png' } });
    expect(themed.body.theme).toEqual({ primary_color: '#10b981', logo: 'https://cdn.example.com/logo.png', banner: null });
    const banner = await store.patch('/v1/app/store', { theme: { banner: 'https://cdn.example.com/b.jpg', logo: null } });
    expect(banner.body.theme).toEqual({ primary_color: '#10b981', logo: null, banner: 'https://cdn.example.com/b.jpg' });
    const payments = await store.patch('/v1/app/store', { payments: { chargeback_on: 'DISPUTE_LOST' } });
    expect(payments.body).toMatchObject({ currency: 'USD', payments: { chargeback_on: 'DISPUTE_LOST' } });
    expect((await store.get('/v1/app/store')).body).toEqual(payments.body);
  });

  it('sets terms_url (https) and clears it with null, alone or with the domain', async () => {
    const store = await newStore();
    const set = await store.patch('/v1/app/store', { terms_url: 'https://shop.example.com/terms' });
    expect(set.status, set.text).toBe(200);
    expect(set.body.terms_url).toBe('https://shop.example.com/terms');
    expect((await store.get('/v1/app/store')).body).toEqual(set.body);
    const moved = await store.patch('/v1/app/store', { domain: `terms-${store.storeId}.test.localhost`, terms_url: 'https://shop.example.com/terms-v2' });
    expect(moved.body.terms_url).toBe('https://shop.example.com/terms-v2');
    expect((await store.get('/v1/app/store')).body).toEqual(moved.body);
    const cleared = await store.patch('/v1/app/store', { terms_url: null });
    expect(cleared.body.terms_url).toBeNull();
    expect((await store.get('/v1/app/store')).body.terms_url).toBeNull();
  });

  it('changes them together with the domain and the allowed origins, in the same write', async () => {
    const store = await newStore();
    const domain = `themed-${store.storeId}.test.localhost`;
    const res = await store.patch('/v1/app/store', {
      domain,
      allowed_origins: ['https://play.example.com'],
      currency: 'EUR',
      theme: { primary_color: '#000000' },
      payments: { chargeback_on: 'DISPUTE_LOST' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ domain, currency: 'EUR', theme: { primary_color: '#000000', logo: null }, payments: { chargeback_on: 'DISPUTE_LOST' } });
    expect((await store.get('/v1/app/store')).body).toEqual(res.body);
  });

  it('a store made before the settings existed reads the defaults and takes a theme change in one write', async () => {
    const store = await newStore();
    await db.send(
      new UpdateCommand({ TableName: TABLE, Key: storeKey(store.storeId), UpdateExpression: 'REMOVE currency, theme_primary_color, theme_logo, theme_banner, chargeback_on' }),
    );
    expect((await store.get('/v1/app/store')).body).toMatchObject({
      currency: 'BRL',
      theme: { primary_color: '#2563eb', logo: null, banner: null },
      payments: { chargeback_on: 'DISPUTE_OPENED' },
    });
    const res = await store.patch('/v1/app/store', { theme: { logo: 'https://cdn.example.com/l.png' } });
    expect(res.status).toBe(200);
    expect(res.body.theme).toEqual({ primary_color: '#2563eb', logo: 'https://cdn.example.com/l.png', banner: null });
  });
});
