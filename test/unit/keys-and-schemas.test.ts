import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { entitySk, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { setExpression } from '#lib/db/update.ts';
import { idParams, pageQuery, timestampInput } from '#lib/schemas/common.ts';
import { domain, storePatchBody } from '#lib/schemas/store.ts';
import { tagCreateBody, tagPatchBody } from '#lib/schemas/tag.ts';

describe('key builders', () => {
  it('pad ids so that string order is numeric order', () => {
    expect(padId(42)).toBe('000000000042');
    expect(entitySk('TAG', 9) < entitySk('TAG', 10)).toBe(true);
    expect(storePk(7)).toBe('STORE#7');
  });

  it('strip the table attributes from an item', () => {
    expect(stripKeys({ pk: 'a', sk: 'b', gsi1pk: 'c', gsi1sk: 'd', expires_epoch: 1, entity: 'TAG', id: 1, name: 'x' })).toEqual({ id: 1, name: 'x' });
  });

  it('build SET expressions only from allowed names, nested fields one by one', () => {
    const parts = setExpression({ name: 'n', store_id: 99, affiliate: { percent_commission: 5 } }, ['name', 'affiliate'], ['affiliate']);
    expect(parts.sets).toEqual(['#name = :name', '#affiliate.#affiliate_percent_commission = :affiliate_percent_commission']);
    expect(JSON.stringify(parts)).not.toContain('store_id');
  });
});

describe('common schemas', () => {
  it('path ids are positive integers only', () => {
    const params = idParams('tagId');
    expect(v.parse(params, { tagId: '12' })).toEqual({ tagId: 12 });
    for (const bad of ['0', '-1', '1.5', 'abc', '01', '9999999999999999']) expect(v.safeParse(params, { tagId: bad }).success).toBe(false);
  });

  it('page query defaults to page 1, limit 20, and bounds limit at 100', () => {
    expect(v.parse(pageQuery, {})).toEqual({ page: 1, limit: 20 });
    expect(v.parse(pageQuery, { page: '3', limit: '100' })).toEqual({ page: 3, limit: 100 });
    expect(v.safeParse(pageQuery, { limit: '101' }).success).toBe(false);
    expect(v.safeParse(pageQuery, { page: '0' }).success).toBe(false);
  });

  it('timestamps need an offset and come out in UTC with Z', () => {
    expect(v.parse(timestampInput, '2026-11-21T12:00:00+02:00')).toBe('2026-11-21T10:00:00.000Z');
    expect(v.parse(timestampInput, '2026-11-21T12:00:00Z')).toBe('2026-11-21T12:00:00.000Z');
    for (const bad of [
      '2026-11-21T12:00:00',
      '2026-11-21',
      'yesterday',
      '2026-13-45T99:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-11-21T24:00:00Z',
      '9999-12-31T23:00:00-05:00',
      '0000-01-01T00:00:00Z',
    ]) {
      expect(v.safeParse(timestampInput, bad).success, bad).toBe(false);
    }
    expect(v.parse(timestampInput, '2028-02-29T23:59:59.999+00:00')).toBe('2028-02-29T23:59:59.999Z');
    expect(v.parse(timestampInput, '9999-12-31T23:00:00+05:00')).toBe('9999-12-31T18:00:00.000Z');
  });
});

describe('text', () => {
  it('refuses lone surrogates and keeps pairs (emoji)', () => {
    expect(v.safeParse(tagCreateBody, { name: 'a\ud800b', color: '#fff' }).success).toBe(false);
    expect(v.safeParse(tagCreateBody, { name: '\udc00', color: '#fff' }).success).toBe(false);
    expect(v.parse(tagCreateBody, { name: 'VIP 🎮', color: '#fff' }).name).toBe('VIP 🎮');
  });
});

describe('tag and store schemas', () => {
  it('accept hex colours and colour names, trim names', () => {
    expect(v.parse(tagCreateBody, { name: '  VIP ', color: '#FFAA00' })).toEqual({ name: 'VIP', color: '#FFAA00' });
    for (const color of ['#fff', '#ffff', '#ffffff', '#ffffff80', 'red', 'rebeccapurple']) expect(v.safeParse(tagCreateBody, { name: 'x', color }).success).toBe(true);
    for (const color of ['#ff', '#fffff', 'rgb(0,0,0)', '', 'red;']) expect(v.safeParse(tagCreateBody, { name: 'x', color }).success).toBe(false);
  });

  it('refuse an empty patch', () => {
    expect(v.safeParse(tagPatchBody, {}).success).toBe(false);
    expect(v.safeParse(storePatchBody, {}).success).toBe(false);
    expect(v.safeParse(storePatchBody, { affiliate: {} }).success).toBe(false);
  });

  it('lower-case domains and refuse single labels', () => {
    expect(v.parse(domain, 'Shop.Example.COM')).toBe('shop.example.com');
    for (const bad of ['localhost', 'a b.com', '-x.com', 'x..com']) expect(v.safeParse(domain, bad).success).toBe(false);
  });
});
