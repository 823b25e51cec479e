import { describe, expect, it } from 'vitest';
import { assertCouponUsable, discountAmount, type CouponRecord } from '#lib/domain/coupon.ts';
import { subtotalOf } from '#lib/domain/money.ts';
import { orderLines, renderCommand, renderDeliveries, type RenderContext } from '#lib/domain/order.ts';
import { assertLinearRegex, resolveVariables } from '#lib/domain/variable.ts';
import { HttpError } from '#lib/errors.ts';
import { CATALOG_DEFAULTS, type Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

const NOW = Date.parse('2026-06-01T00:00:00Z');

const pkg = (id: number, price: number, commands: Package['commands'] = []): Package => ({
  id, store_id: 1, name: `P${id}`, price, category_id: null, parent_id: null, image: null, commands, created_at: '', updated_at: '',
  ...CATALOG_DEFAULTS, tags: [],
});

const coupon = (fields: Partial<CouponRecord> = {}): CouponRecord => ({
  id: 1, store_id: 1, coupon: 'CODE', type: 'PERCENTAGE', value: 10, applies_to: [-1], uses: 0, max_uses: null, max_uses_per_client: null,
  expires_in: null, min_price: null, limit_criteria: 'CLIENT_IDENTIFIER', restricted_to_criteria: null, restricted_to: null,
  created_at: '', updated_at: '', revision: 0, ...fields,
});

const variable = (fields: Partial<Variable>): Variable => ({
  id: 1, store_id: 1, name: 'v', description: 'd', type: 'TEXT', required: false, regex: null, applies_to: null,
  bracket_display: '{v}', display: 'v', created_at: '', updated_at: '', ...fields,
});

const lines = [
  { package_id: 1, name: 'P1', price: 9.99, quantity: 3 },
  { package_id: 2, name: 'P2', price: 0.1, quantity: 2 },
];
const use = { client_identifier: 'Steve', client_email: 'steve@example.com', clientUses: 0, now: NOW };

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as HttpError).details[0]?.code;
  }
  return undefined;
};

describe('pricing', () => {
  it('sums lines to the cent', () => {
    expect(subtotalOf(lines)).toBe(30.17);
    expect(subtotalOf([{ package_id: 1, name: 'x', price: 0.1, quantity: 3 }])).toBe(0.3);
  });

  it('computes PERCENTAGE and VALUE discounts on the covered packages, rounded to cents', () => {
    expect(discountAmount(coupon({ type: 'PERCENTAGE', value: 10 }), lines)).toBe(3.02);
    expect(discountAmount(coupon({ type: 'PERCENTAGE', value: 50, applies_to: [2] }), lines)).toBe(0.1);
    expect(discountAmount(coupon({ type: 'VALUE', value: 5, applies_to: [2] }), lines)).toBe(0.2);
    expect(discountAmount(coupon({ type: 'VALUE', value: 5 }), lines)).toBe(5);
    expect(discountAmount(coupon({ type: 'VALUE', value: 5, applies_to: [99] }), lines)).toBe(0);
  });

  it('reports every missing package with its field', () => {
    const catalog = new Map([[1, pkg(1, 5)]]);
    try {
      orderLines([{ package_id: 1, quantity: 1 }, { package_id: 7, quantity: 1 }, { package_id: 8, quantity: 1 }], catalog);
      expect.unreachable();
    } catch (error) {
      expect((error as HttpError).details.map((d) => d.field)).toEqual(['packages.1.package_id', 'packages.2.package_id']);
    }
  });
});

describe('coupon rules', () => {
  it('accepts a plain coupon and names each broken rule', () => {
    expect(() => assertCouponUsable(coupon(), lines, use)).not.toThrow();
    expect(codeOf(() => assertCouponUsable(coupon({ expires_in: '2026-06-01T00:00:00.000Z' }), lines, use))).toBe('COUPON_EXPIRED');
    expect(codeOf(() => assertCouponUsable(coupon({ max_uses: 3, uses: 3 }), lines, use))).toBe('COUPON_SOLD_OUT');
    expect(codeOf(() => assertCouponUsable(coupon({ min_price: 30.18 }), lines, use))).toBe('COUPON_MIN_PRICE');
    expect(() => assertCouponUsable(coupon({ min_price: 30.17 }), lines, use)).not.toThrow();
    expect(codeOf(() => assertCouponUsable(coupon({ applies_to: [5] }), lines, use))).toBe('COUPON_NOT_APPLICABLE');
    expect(codeOf(() => assertCouponUsable(coupon({ max_uses_per_client: 1 }), lines, { ...use, clientUses: 1 }))).toBe('COUPON_CLIENT_LIMIT');
  });

  it('compares the restriction list ignoring case, by the chosen criteria', () => {
    const byEmail = coupon({ restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['STEVE@example.COM'] });
    expect(() => assertCouponUsable(byEmail, lines, use)).not.toThrow();
    expect(codeOf(() => assertCouponUsable(byEmail, lines, { ...use, client_email: 'ann@example.com' }))).toBe('COUPON_RESTRICTED');
    const byId = coupon({ restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['steve'] });
    expect(() => assertCouponUsable(byId, lines, use)).not.toThrow();
    expect(codeOf(() => assertCouponUsable(byId, lines, { ...use, client_identifier: 'steve2' }))).toBe('COUPON_RESTRICTED');
  });
});

describe('checkout variables', () => {
  const defined = [
    variable({ name: 'Server', type: 'SELECT', options: [{ id: 1, name: 'S', value: 'survival', price: null }] }),
    variable({ name: 'nick', required: true, applies_to: [2], regex: '[a-z]+' }),
  ];

  it('resolves names ignoring case to the stored name', () => {
    expect(resolveVariables(defined, [{ name: 'SERVER', value: 'survival' }], [1])).toEqual([{ name: 'Server', value: 'survival', option_price: null, applies_to: null }]);
  });

  it('requires a required variable only for the packages it applies to', () => {
    expect(() => resolveVariables(defined, [], [1])).not.toThrow();
    expect(() => resolveVariables(defined, [], [1, 2])).toThrow('Variable nick is required');
  });

  it('reports every problem at once', () => {
    try {
      resolveVariables(defined, [{ name: 'server', value: 'creative' }, { name: 'nick', value: 'NICK' }, { name: 'x', value: '1' }], [2]);
      expect.unreachable();
    } catch (error) {
      expect((error as HttpError).details.map((d) => d.field)).toEqual(['variables.0.value', 'variables.1.value', 'variables.2.name']);
    }
  });
});

describe('variable regexes on the linear-time engine', () => {
  it('refuses, on regex, a pattern only the backtracking engine runs, and accepts the rest', () => {
    for (const pattern of ['(?=a)(a|a)+', '(ab)\\1', '(?<=a)b', '(?<n>x)\\k<n>', 'a{1,1000}']) {
      expect(() => assertLinearRegex(pattern), pattern).toThrow(HttpError);
      try {
        assertLinearRegex(pattern);
      } catch (error) {
        expect((error as HttpError).details).toEqual([expect.objectContaining({ field: 'regex', code: 'VALIDATION_FAILED' })]);
      }
    }
    for (const pattern of [null, '[a-z]+', '(a|aa)+', '\\bfoo\\b', '[A-Z]{2,8}']) expect(() => assertLinearRegex(pattern)).not.toThrow();
  });

  it('runs (a|aa)+ on a failing 41-character value (minutes of backtracking) on the linear engine', () => {
    const nick = variable({ name: 'nick', regex: '(a|aa)+' });
    expect(() => resolveVariables([nick], [{ name: 'nick', value: `${'a'.repeat(40)}!` }], [1])).toThrow('does not match');
  });

  it('refuses a value for a stored pattern the linear engine cannot run, instead of running it on the backtracking one', () => {
    const legacy = variable({ name: 'twice', regex: '(ab)\\1' });
    expect(() => resolveVariables([legacy], [{ name: 'twice', value: 'abab' }], [1])).toThrow('cannot be checked');
  });

  it('tells the price of the SELECT option chosen and which packages the variable applies to', () => {
    const server = variable({ name: 'Server', type: 'SELECT', applies_to: [2], options: [{ id: 1, name: 'S', value: 'survival', price: 2.5 }, { id: 2, name: 'C', value: 'creative', price: null }] });
    expect(resolveVariables([server], [{ name: 'server', value: 'survival' }], [2])).toEqual([{ name: 'Server', value: 'survival', option_price: 2.5, applies_to: [2] }]);
    expect(resolveVariables([server], [{ name: 'server', value: 'creative' }], [2])[0]!.option_price).toBeNull();
  });
});

describe('command rendering', () => {
  const context: RenderContext = {
    order_id: 42,
    internal_id: 'abc',
    client_identifier: 'Steve',
    client_name: 'Steve S',
    client_email: 's@example.com',
    client_social: null,
    variables: new Map([['server', 'eu-{order_id}'], ['client_name', 'shadowed']]),
    knownVariables: new Set(['server', 'client_name', 'optional']),
  };

  it('replaces built-ins and variables in one pass, leaving unknown placeholders', () => {
    expect(renderCommand('give {client_identifier} x{quantity} on {Server} #{order_id}/{internal_id} {client_email} [{client_social}] [{optional}] {nope} {client_name}', context, 3)).toBe(
      'give Steve x3 on eu-{order_id} #42/abc s@example.com [] [] {nope} Steve S',
    );
  });

  it('bounds the commands of one order to what one approval transaction holds', () => {
    const many = Array.from({ length: 99 }, (_, i) => ({ command: `c${i}`, servers: null, stage: 'APPROVED' as const, offline_execute: true, delay_seconds: 0 }));
    const catalog = new Map([[1, pkg(1, 1, many)]]);
    expect(() => renderDeliveries([{ package_id: 1, name: 'P1', price: 1, quantity: 1 }], catalog, context)).toThrow('at most 98 commands');
    const catalog98 = new Map([[1, pkg(1, 1, many.slice(0, 98))]]);
    expect(renderDeliveries([{ package_id: 1, name: 'P1', price: 1, quantity: 1 }], catalog98, context)).toHaveLength(98);
    // A template naming servers counts once per server: 49 x 2 = 98 fits, 50 x 2 does not.
    const twice = (n: number) => new Map([[1, pkg(1, 1, many.slice(0, n).map((template) => ({ ...template, servers: [1, 2] })))]]);
    expect(renderDeliveries([{ package_id: 1, name: 'P1', price: 1, quantity: 1 }], twice(49), context)).toHaveLength(49);
    expect(() => renderDeliveries([{ package_id: 1, name: 'P1', price: 1, quantity: 1 }], twice(50), context)).toThrow('these deliver 100');
  });
});
