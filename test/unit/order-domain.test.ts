import { describe, expect, it } from 'vitest';
import { assessCart, cartSignature, cartValues, honouredPrices, orderEmail, type CartRequest, type CartState } from '#lib/domain/cart.ts';
import { couponPriceRefusal, couponRefusal, type CouponRecord } from '#lib/domain/coupon.ts';
import { renderCommand, renderDeliveries, type RenderContext } from '#lib/domain/order.ts';
import { assertLinearRegex, missingRequired, resolveValues } from '#lib/domain/variable.ts';
import { HttpError } from '#lib/errors.ts';
import { CATALOG_DEFAULTS, type Package } from '#lib/schemas/package.ts';
import type { Variable } from '#lib/schemas/variable.ts';

const NOW = Date.parse('2026-06-01T00:00:00Z');

const pkg = (id: number, price: number, commands: Package['commands'] = []): Package => ({
  id,
  store_id: 1,
  name: `P${id}`,
  price,
  category_id: null,
  parent_id: null,
  image: null,
  commands,
  created_at: '',
  updated_at: '',
  ...CATALOG_DEFAULTS,
  tags: [],
});

const coupon = (fields: Partial<CouponRecord> = {}): CouponRecord => ({
  id: 1,
  store_id: 1,
  coupon: 'CODE',
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
  created_at: '',
  updated_at: '',
  revision: 0,
  ...fields,
});

const variable = (fields: Partial<Variable>): Variable => ({
  id: 1,
  store_id: 1,
  name: 'v',
  description: 'd',
  type: 'TEXT',
  required: false,
  regex: null,
  applies_to: null,
  bracket_display: '{v}',
  display: 'v',
  created_at: '',
  updated_at: '',
  ...fields,
});

const use = { client_identifier: 'Steve', client_email: 'steve@example.com', clientUses: 0, now: NOW };

const codeOf = (error: HttpError | undefined) => error?.details[0]?.code;

/** An order's values as the cart rules take them, refused all at once as the flow does. */
function resolveVariables(defined: readonly Variable[], input: { name: string; value: string }[], packageIds: number[]) {
  const given = input.map((item, index) => ({ ...item, nameField: `variables.${index}.name`, valueField: `variables.${index}.value` }));
  const { resolved, problems } = resolveValues(defined, given);
  problems.push(
    ...missingRequired(
      defined,
      resolved,
      packageIds.map((package_id) => ({ package_id, field: 'variables', own: [] })),
      'variables',
    ),
  );
  if (problems.length > 0) throw new HttpError(422, problems);
  return resolved;
}

const request = (lines: { package_id: number; quantity: number }[], extra: Partial<CartRequest> = {}): CartRequest => ({
  lines: lines.map((line, index) => ({ ...line, field: `packages.${index}` })),
  values: [],
  valuesField: 'variables',
  coupon: null,
  ref_code: null,
  client_email: 'steve@example.com',
  client_identifier: 'Steve',
  extraWrites: 0,
  inputProblems: [],
  ...extra,
});
const state = (catalog: Package[], extra: Partial<CartState> = {}): CartState => ({
  catalog: new Map(catalog.map((p) => [p.id, p])),
  variables: [],
  promos: [],
  coupon: null,
  held: new Map(),
  quoted: null,
  refCodeKnown: false,
  termsUrl: null,
  ...extra,
});
const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as HttpError).details.map((d) => `${d.field}:${d.code}`);
  }
  return [];
};

describe('the cart rules', () => {
  it('prices with the pricing engine: option prices per unit, then promos, then the coupon', () => {
    const server = variable({ name: 'server', type: 'SELECT', applies_to: [1], options: [{ id: 1, name: 'S', value: 's', price: 0.1 }] });
    const promo = {
      id: 1,
      name: 'P',
      type: 'PROGRESSIVE' as const,
      condition_mode: 'QUANTITY' as const,
      enabled: true,
      starts_at: '2020-01-01T00:00:00.000Z',
      ends_at: null,
      targets: [{ type: 'STORE' as const }],
      tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE' as const, reward_value: 10, reward_quantity: null, targets: [] }],
    };
    const assessed = assessCart(
      request([{ package_id: 1, quantity: 3 }], { values: [{ name: 'server', value: 's', nameField: 'f', valueField: 'f' }], coupon: 'code' }),
      state([pkg(1, 9.9)], {
        variables: [server],
        promos: [promo],
        coupon: { record: coupon({ type: 'VALUE', value: 1 }), clientUses: { CLIENT_EMAIL: 0, CLIENT_IDENTIFIER: 0 } },
      }),
      NOW,
    );
    // (9.90 + 0.10) x 3 = 30.00; 10% promo = 3.00; VALUE coupon 1.00 on 27.00: total 26.00
    expect(assessed.prices).toMatchObject({ subtotal: 30, promo_discount: 3, coupon_discount: 1, discount: 4, total: 26, coupon: 'CODE' });
    expect(assessed.prices.items[0]).toMatchObject({ options_price: 0.1, promo_id: 1 });
  });

  describe("a line's own fields (section 8)", () => {
    const server = variable({
      name: 'server',
      type: 'SELECT',
      options: [
        { id: 1, name: 'Big', value: 'big', price: 1 },
        { id: 2, name: 'Small', value: 'small', price: null },
      ],
    });
    const own = (name: string, value: string, line: number) => [{ name, value, nameField: `cart.${line}.fields.${name}`, valueField: `cart.${line}.fields.${name}` }];
    const storefront = (lines: { package_id: number; quantity: number; values?: ReturnType<typeof own> }[], values: ReturnType<typeof own> = []) =>
      request([], { lines: lines.map((line, index) => ({ ...line, field: `cart.${index}` })), values, valuesField: 'fields' });

    it("prices an option chosen in one line's fields on that line alone", () => {
      const assessed = assessCart(
        storefront([
          { package_id: 1, quantity: 1, values: own('server', 'big', 0) },
          { package_id: 2, quantity: 2 },
        ]),
        state([pkg(1, 5), pkg(2, 5)], { variables: [server] }),
        NOW,
      );
      expect(assessed.prices.items.map((item) => [item.package_id, item.options_price, item.subtotal])).toEqual([
        [1, 1, 6],
        [2, 0, 10],
      ]);
      expect(assessed.variables).toEqual([]);
      expect(assessed.lineVariables.get(1)?.map(({ name, value }) => `${name}=${value}`)).toEqual(['server=big']);
      expect(assessed.lineVariables.get(2)).toEqual([]);
    });

    it("applies order-level fields to every line, and a line's own value over them", () => {
      const assessed = assessCart(
        storefront(
          [
            { package_id: 1, quantity: 1, values: own('SERVER', 'small', 0) },
            { package_id: 2, quantity: 1 },
          ],
          own('server', 'big', -1),
        ),
        state([pkg(1, 5), pkg(2, 5)], { variables: [server] }),
        NOW,
      );
      expect(assessed.prices.items.map((item) => item.options_price)).toEqual([0, 1]);
    });

    it('requires a required variable on each line it applies to, from the line or the order', () => {
      const nick = variable({ name: 'nick', required: true });
      const cart = state([pkg(1, 5), pkg(2, 5)], { variables: [nick] });
      expect(() =>
        assessCart(
          storefront([
            { package_id: 1, quantity: 1, values: own('nick', 'a', 0) },
            { package_id: 2, quantity: 1, values: own('nick', 'b', 1) },
          ]),
          cart,
          NOW,
        ),
      ).not.toThrow();
      expect(() =>
        assessCart(
          storefront(
            [
              { package_id: 1, quantity: 1 },
              { package_id: 2, quantity: 1 },
            ],
            own('nick', 'a', -1),
          ),
          cart,
          NOW,
        ),
      ).not.toThrow();
      expect(
        fieldsOf(() =>
          assessCart(
            storefront([
              { package_id: 1, quantity: 1, values: own('nick', 'a', 0) },
              { package_id: 2, quantity: 1 },
            ]),
            cart,
            NOW,
          ),
        ),
      ).toEqual(['cart.1.fields:VALIDATION_FAILED']);
      expect(
        fieldsOf(() =>
          assessCart(
            storefront([
              { package_id: 1, quantity: 1 },
              { package_id: 2, quantity: 1 },
            ]),
            cart,
            NOW,
          ),
        ),
      ).toEqual(['fields:VALIDATION_FAILED']);
    });

    it("checks a line's values as the order's: an unknown name or option is a 422 on the line's field", () => {
      expect(fieldsOf(() => assessCart(storefront([{ package_id: 1, quantity: 1, values: own('server', 'huge', 0) }]), state([pkg(1, 5)], { variables: [server] }), NOW))).toEqual([
        'cart.0.fields.server:VALIDATION_FAILED',
      ]);
    });
  });

  it('reports every problem at once: missing, disabled, out of stock, over the limit, a value, the coupon', () => {
    const problems = fieldsOf(() =>
      assessCart(
        request(
          [
            { package_id: 7, quantity: 1 },
            { package_id: 2, quantity: 1 },
            { package_id: 3, quantity: 4 },
            { package_id: 4, quantity: 2 },
          ],
          { values: [{ name: 'nope', value: '1', nameField: 'fields.nope', valueField: 'fields.nope' }], coupon: 'gone' },
        ),
        state(
          [
            { ...pkg(2, 1), enabled: false },
            { ...pkg(3, 1), stock: 3 },
            { ...pkg(4, 1), per_customer_limit: 2 },
          ],
          { held: new Map([[4, 1]]) },
        ),
        NOW,
      ),
    );
    expect(problems).toEqual([
      'packages.0.package_id:VALIDATION_FAILED',
      'packages.1.package_id:PACKAGE_DISABLED',
      'packages.2.quantity:OUT_OF_STOCK',
      'packages.3.quantity:LIMIT_REACHED',
      'fields.nope:VALIDATION_FAILED',
      'coupon:COUPON_NOT_FOUND',
    ]);
  });

  it("requires terms: true of a storefront cart when the store has terms, and nothing of an operator's order", () => {
    const withTerms = state([pkg(1, 5)], { termsUrl: 'https://shop.example.com/terms' });
    const line = [{ package_id: 1, quantity: 1 }];
    for (const terms of [null, false]) expect(fieldsOf(() => assessCart(request(line, { terms }), withTerms, NOW))).toEqual(['terms:VALIDATION_FAILED']);
    expect(() => assessCart(request(line, { terms: true }), withTerms, NOW)).not.toThrow();
    expect(() => assessCart(request(line), withTerms, NOW)).not.toThrow();
    expect(() => assessCart(request(line, { terms: null }), state([pkg(1, 5)]), NOW)).not.toThrow();
  });

  it('checks limits only when the customer is known', () => {
    expect(() => assessCart(request([{ package_id: 4, quantity: 5 }]), state([{ ...pkg(4, 1), per_customer_limit: 2 }], { held: null }), NOW)).not.toThrow();
  });

  it('refuses a cart whose creating transaction would pass 100 items: order, sentinel, list counts, a write per line and per limit, the extras', () => {
    const limited = Array.from({ length: 48 }, (_, index) => ({ ...pkg(index + 1, 1), per_customer_limit: 5 }));
    const lines = limited.map((p) => ({ package_id: p.id, quantity: 1 }));
    // 3 + 48 lines + 48 limits + 1 extra (a checkout's due item) = 100: placed.
    expect(() => assessCart(request(lines, { extraWrites: 1 }), state(limited), NOW)).not.toThrow();
    // One more write is 101: refused on the cart, before anything is written.
    expect(fieldsOf(() => assessCart(request(lines, { extraWrites: 2 }), state(limited), NOW))).toEqual(['packages:VALIDATION_FAILED']);
  });

  it('honours a quote: its prices, without the coupon price rules', () => {
    const quoted = { items: [], subtotal: 1, promo_discount: 0, coupon_discount: 0, discount: 0, total: 1, coupon: null, next_tiers: [] };
    expect(assessCart(request([{ package_id: 1, quantity: 1 }]), state([pkg(1, 50)], { quoted }), NOW).prices).toBe(quoted);
  });
});

describe('coupon rules', () => {
  it('accepts a plain coupon and names each rule broken before prices', () => {
    expect(couponRefusal(coupon(), use)).toBeUndefined();
    expect(codeOf(couponRefusal(coupon({ expires_in: '2026-06-01T00:00:00.000Z' }), use))).toBe('COUPON_EXPIRED');
    expect(codeOf(couponRefusal(coupon({ max_uses: 3, uses: 3 }), use))).toBe('COUPON_SOLD_OUT');
    expect(codeOf(couponRefusal(coupon({ max_uses_per_client: 1 }), { ...use, clientUses: 1 }))).toBe('COUPON_CLIENT_LIMIT');
  });

  it("names the rules that need prices from the engine's check", () => {
    const check = { coupon: 'CODE', covers_any_line: true, covered_after_promos: 10, meets_min_price: true, applied: true };
    expect(couponPriceRefusal(coupon(), check)).toBeUndefined();
    expect(codeOf(couponPriceRefusal(coupon(), { ...check, covers_any_line: false }))).toBe('COUPON_NOT_APPLICABLE');
    expect(codeOf(couponPriceRefusal(coupon({ min_price: 30.18 }), { ...check, meets_min_price: false }))).toBe('COUPON_MIN_PRICE');
  });

  it('compares the restriction list ignoring case, by the chosen criteria; refuses when the value is not given', () => {
    const byEmail = coupon({ restricted_to_criteria: 'CLIENT_EMAIL', restricted_to: ['STEVE@example.COM'] });
    expect(couponRefusal(byEmail, use)).toBeUndefined();
    expect(codeOf(couponRefusal(byEmail, { ...use, client_email: 'ann@example.com' }))).toBe('COUPON_RESTRICTED');
    expect(codeOf(couponRefusal(byEmail, { ...use, client_email: null }))).toBe('COUPON_RESTRICTED');
    const byId = coupon({ restricted_to_criteria: 'CLIENT_IDENTIFIER', restricted_to: ['steve'] });
    expect(couponRefusal(byId, use)).toBeUndefined();
    expect(codeOf(couponRefusal(byId, { ...use, client_identifier: 'steve2' }))).toBe('COUPON_RESTRICTED');
  });
});

describe('storefront carts', () => {
  it("keeps the order's fields and each line's apart: a name given twice is no conflict, each line keeps its own", () => {
    const given = cartValues({ Nick: 'steve' }, [{ fields: { nick: 'alex', server: 's' } }, { fields: { SERVER: 'c' } }, {}]);
    expect(given.values.map(({ name, value }) => `${name}=${value}`)).toEqual(['Nick=steve']);
    expect(given.lines.map((line) => line.map(({ name, value, valueField }) => `${name}=${value}@${valueField}`))).toEqual([
      ['nick=alex@cart.0.fields.nick', 'server=s@cart.0.fields.server'],
      ['SERVER=c@cart.1.fields.SERVER'],
      [],
    ]);
    expect(given.problems).toEqual([]);
  });

  it('signs each line with its own values: the same option on another line is another cart', () => {
    const lines = [
      { package_id: 1, quantity: 1 },
      { package_id: 2, quantity: 1 },
    ];
    const onFirst = cartSignature({ lines: [{ ...lines[0]!, values: [{ name: 'server', value: 's' }] }, lines[1]!], values: [], coupon: null, ref_code: null });
    const onSecond = cartSignature({ lines: [lines[0]!, { ...lines[1]!, values: [{ name: 'server', value: 's' }] }], values: [], coupon: null, ref_code: null });
    const onOrder = cartSignature({ lines, values: [{ name: 'server', value: 's' }], coupon: null, ref_code: null });
    expect(new Set([onFirst, onSecond, onOrder]).size).toBe(3);
    expect(cartSignature({ lines: [lines[1]!, { ...lines[0]!, values: [{ name: 'SERVER', value: 's' }] }], values: [], coupon: null, ref_code: null })).toBe(onFirst);
  });

  it('signs a cart whatever its line order, and honours a quote only unexpired and for the same cart', () => {
    const a = cartSignature({
      lines: [
        { package_id: 1, quantity: 2 },
        { package_id: 3, quantity: 1 },
      ],
      values: [{ name: 'Nick', value: 'x' }],
      coupon: 'Ten',
      ref_code: null,
    });
    const b = cartSignature({
      lines: [
        { package_id: 3, quantity: 1 },
        { package_id: 1, quantity: 2 },
      ],
      values: [{ name: 'nick', value: 'x' }],
      coupon: 'TEN',
      ref_code: null,
    });
    expect(a).toBe(b);
    expect(
      cartSignature({
        lines: [
          { package_id: 1, quantity: 3 },
          { package_id: 3, quantity: 1 },
        ],
        values: [{ name: 'nick', value: 'x' }],
        coupon: 'TEN',
        ref_code: null,
      }),
    ).not.toBe(a);
    const prices = { items: [], subtotal: 1, promo_discount: 0, coupon_discount: 0, discount: 0, total: 1, coupon: null, next_tiers: [] };
    const quote = { signature: a, expires_at: new Date(NOW + 1000).toISOString(), prices };
    expect(honouredPrices(quote, b, NOW)).toBe(prices);
    expect(honouredPrices(quote, b, NOW + 1000)).toBeNull();
    expect(honouredPrices(quote, 'other', NOW)).toBeNull();
    expect(honouredPrices(undefined, b, NOW)).toBeNull();
  });

  it("places a buyer's order under the buyer's e-mail, and a guest's under the one given", () => {
    expect(orderEmail(null, { email: 'ann@example.com' })).toBe('ann@example.com');
    expect(orderEmail('ANN@example.com', { email: 'ann@example.com' })).toBe('ANN@example.com');
    expect(() => orderEmail('bob@example.com', { email: 'ann@example.com' })).toThrow('client_email');
    expect(() => orderEmail(null, 'guest')).toThrow('client_email is required');
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
      resolveVariables(
        defined,
        [
          { name: 'server', value: 'creative' },
          { name: 'nick', value: 'NICK' },
          { name: 'x', value: '1' },
        ],
        [2],
      );
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
    const server = variable({
      name: 'Server',
      type: 'SELECT',
      applies_to: [2],
      options: [
        { id: 1, name: 'S', value: 'survival', price: 2.5 },
        { id: 2, name: 'C', value: 'creative', price: null },
      ],
    });
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
    variables: new Map([
      ['server', 'eu-{order_id}'],
      ['client_name', 'shadowed'],
    ]),
    knownVariables: new Set(['server', 'client_name', 'optional']),
  };

  it('replaces built-ins and variables in one pass, leaving unknown placeholders', () => {
    expect(
      renderCommand('give {client_identifier} x{quantity} on {Server} #{order_id}/{internal_id} {client_email} [{client_social}] [{optional}] {nope} {client_name}', context, 3),
    ).toBe('give Steve x3 on eu-{order_id} #42/abc s@example.com [] [] {nope} Steve S');
  });

  it('bounds the commands of one order to what one approval transaction holds', () => {
    const many = Array.from({ length: 98 }, (_, i) => ({ command: `c${i}`, servers: null, stage: 'APPROVED' as const, offline_execute: true, delay_seconds: 0 }));
    const catalog = new Map([[1, pkg(1, 1, many)]]);
    const line = {
      package_id: 1,
      name: 'P1',
      price: 1,
      quantity: 1,
      options_price: 0,
      subtotal: 1,
      promo_discount: 0,
      promo_id: null,
      coupon_discount: 0,
      total: 1,
      variables: [],
    };
    // 97 commands + their chain item + the order + the list counts = 100 items.
    expect(() => renderDeliveries([line], catalog, context)).toThrow('at most 97 commands; these deliver 98');
    const catalog97 = new Map([[1, pkg(1, 1, many.slice(0, 97))]]);
    expect(renderDeliveries([line], catalog97, context)).toHaveLength(97);
    // A template naming servers counts once per server: 48 x 2 = 96 fits, 49 x 2 does not.
    const twice = (n: number) =>
      new Map([
        [
          1,
          pkg(
            1,
            1,
            many.slice(0, n).map((template) => ({ ...template, servers: [1, 2] })),
          ),
        ],
      ]);
    expect(renderDeliveries([line], twice(48), context)).toHaveLength(48);
    expect(() => renderDeliveries([line], twice(49), context)).toThrow('these deliver 98');
  });
});
