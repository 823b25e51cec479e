import { describe, expect, it } from 'vitest';
import { safeParse } from 'valibot';

/** The discount rules that need no table: computed status, cross-field rules, list filters, input schemas. */
process.env.TABLE_NAME ??= 'unit-test-table';
const { discountMatches, discountStatus, discountViolation } = await import('#lib/domain/coupon.ts');
const { discountCreateBody, discountListQuery, discountPatchBody } = await import('#lib/schemas/discount.ts');
type Discount = import('#lib/schemas/discount.ts').Discount;

const NOW = Date.parse('2030-06-01T12:00:00.000Z');

describe('discountStatus', () => {
  it.each([
    ['no limits', { expires_in: null, max_uses: null, uses: 99 }, 'ACTIVE'],
    ['uses below max_uses', { expires_in: null, max_uses: 3, uses: 2 }, 'ACTIVE'],
    ['uses at max_uses', { expires_in: null, max_uses: 3, uses: 3 }, 'SOLD_OUT'],
    ['uses above max_uses (max lowered later)', { expires_in: null, max_uses: 3, uses: 5 }, 'SOLD_OUT'],
    ['expiry in the future', { expires_in: '2030-06-01T12:00:00.001Z', max_uses: null, uses: 0 }, 'ACTIVE'],
    ['expiry at this instant', { expires_in: '2030-06-01T12:00:00.000Z', max_uses: null, uses: 0 }, 'EXPIRED'],
    ['expiry passed', { expires_in: '2030-05-01T00:00:00.000Z', max_uses: null, uses: 0 }, 'EXPIRED'],
    ['expired and sold out: EXPIRED wins', { expires_in: '2030-05-01T00:00:00.000Z', max_uses: 1, uses: 1 }, 'EXPIRED'],
  ] as const)('%s -> %s', (_case, discount, status) => {
    expect(discountStatus(discount, NOW)).toBe(status);
  });
});

describe('discountViolation', () => {
  const base = { type: 'VALUE', value: 10, restricted_to: null, restricted_to_criteria: null } as const;

  it('accepts a VALUE above 100 and a PERCENTAGE of exactly 100', () => {
    expect(discountViolation({ ...base, value: 500 })).toBeUndefined();
    expect(discountViolation({ ...base, type: 'PERCENTAGE', value: 100 })).toBeUndefined();
  });

  it('rejects a PERCENTAGE above 100 on value', () => {
    expect(discountViolation({ ...base, type: 'PERCENTAGE', value: 100.01 })?.field).toBe('value');
  });

  it('requires the criteria of a restriction list, but not a list for a criteria', () => {
    expect(discountViolation({ ...base, restricted_to: ['x'] })?.field).toBe('restricted_to_criteria');
    expect(discountViolation({ ...base, restricted_to_criteria: 'CLIENT_EMAIL' })).toBeUndefined();
  });

  it('requires e-mail addresses for CLIENT_EMAIL, naming the first bad entry', () => {
    expect(discountViolation({ ...base, restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['a@b.co', 'c@d', 'e f@g.hi'] })?.field).toBe('restricted_to.1');
    expect(discountViolation({ ...base, restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['A.B+tag@Example.co.uk'] })).toBeUndefined();
    expect(discountViolation({ ...base, restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['Steve', 'not an email'] })).toBeUndefined();
  });
});

describe('discountMatches', () => {
  const discount = { status: 'SOLD_OUT', restricted_to: ['Ann@Example.com', 'Steve'] } as Discount;

  it('matches everything without filters', () => {
    expect(discountMatches(discount, {})).toBe(true);
  });

  it('filters on the computed status', () => {
    expect(discountMatches(discount, { status: 'SOLD_OUT' })).toBe(true);
    expect(discountMatches(discount, { status: 'ACTIVE' })).toBe(false);
  });

  it('matches a whole restriction value, ignoring case', () => {
    expect(discountMatches(discount, { restricted_to: 'ann@example.COM' })).toBe(true);
    expect(discountMatches(discount, { restricted_to: 'STEVE' })).toBe(true);
    expect(discountMatches(discount, { restricted_to: 'ann' })).toBe(false);
    expect(discountMatches({ ...discount, restricted_to: null }, { restricted_to: 'steve' })).toBe(false);
  });

  it('requires every filter given', () => {
    expect(discountMatches(discount, { status: 'SOLD_OUT', restricted_to: 'steve' })).toBe(true);
    expect(discountMatches(discount, { status: 'ACTIVE', restricted_to: 'steve' })).toBe(false);
  });
});

describe('discount schemas', () => {
  it('trims the code and normalises expires_in to UTC', () => {
    const result = safeParse(discountCreateBody, { coupon: ' Promo ', type: 'VALUE', value: 1, expires_in: '2030-01-01T03:00:00+03:00' });
    expect(result.success && result.output).toMatchObject({ coupon: 'Promo', expires_in: '2030-01-01T00:00:00.000Z' });
  });

  it('accepts [-1] or distinct positive ids in applies_to, nothing else', () => {
    const ok = (applies_to: unknown) => safeParse(discountCreateBody, { coupon: 'A', type: 'VALUE', value: 1, applies_to }).success;
    expect(ok([-1])).toBe(true);
    expect(ok([3, 1, 2])).toBe(true);
    expect(ok([-1, -1])).toBe(false);
    expect(ok([-2])).toBe(false);
    expect(ok([1, 1])).toBe(false);
    expect(ok(Array.from({ length: 50 }, (_, i) => i + 1))).toBe(true);
    expect(ok(Array.from({ length: 51 }, (_, i) => i + 1))).toBe(false);
  });

  it('bounds amounts to what a DynamoDB number holds: 0, or 0.000001 to 1000000000', () => {
    const ok = (fields: Record<string, unknown>) => safeParse(discountCreateBody, { coupon: 'A', type: 'VALUE', value: 1, ...fields }).success;
    expect(ok({ value: 1_000_000_000, min_price: 0 })).toBe(true);
    expect(ok({ value: 0.000001, min_price: 0.000001 })).toBe(true);
    for (const value of [1_000_000_000.5, 1e200, 1e-7, 1e-200, Infinity]) {
      expect(ok({ value })).toBe(false);
      expect(ok({ min_price: value })).toBe(false);
    }
    expect(ok({ max_uses: Number.MAX_SAFE_INTEGER })).toBe(true);
    expect(ok({ max_uses: 1e200 })).toBe(false);
  });

  it('wants at least one field in a patch and no unknown one', () => {
    expect(safeParse(discountPatchBody, {}).success).toBe(false);
    expect(safeParse(discountPatchBody, { uses: 1 }).success).toBe(false);
    expect(safeParse(discountPatchBody, { max_uses: null }).success).toBe(true);
  });

  it('reads the list filters, an unknown status being a rule break rather than malformed', () => {
    const result = safeParse(discountListQuery, { status: 'EXPIRED', coupon: ' Sum ', restricted_to: 'a@b.co' });
    expect(result.success && result.output).toEqual({ page: 1, limit: 20, status: 'EXPIRED', coupon: 'Sum', restricted_to: 'a@b.co' });
    const bad = safeParse(discountListQuery, { status: 'GONE' });
    expect(bad.issues?.[0]?.type).toBe('picklist');
  });
});
