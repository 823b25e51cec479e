import { describe, expect, it } from 'vitest';
import { commissionOf, priceCart, roundToCents, type CartLine, type PricingCoupon, type PricingPromo, type PricingTier } from '#lib/domain/pricing.ts';
import { shareInProportion } from '#lib/domain/pricing-money.ts';

/** Worked examples of section 8 of extensions.md, one per rule; each comment carries the arithmetic. */

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const iso = (epochMs: number) => new Date(epochMs).toISOString();

const line = (package_id: number, quantity: number, unit_price: number, options_price = 0, category_id: number | null = null): CartLine => ({
  package_id,
  name: `Package ${package_id}`,
  quantity,
  unit_price,
  options_price,
  category_id,
});

const tier = (min_amount: number, reward_type: PricingTier['reward_type'], reward_value: number | null, extra: Partial<PricingTier> = {}): PricingTier => ({
  min_amount,
  reward_type,
  reward_value,
  reward_quantity: null,
  targets: [],
  ...extra,
});

const promo = (id: number, fields: Partial<PricingPromo> = {}): PricingPromo => ({
  id,
  name: `Promo ${id}`,
  type: 'PROGRESSIVE',
  condition_mode: 'QUANTITY',
  enabled: true,
  starts_at: '2026-01-01T00:00:00.000Z',
  ends_at: null,
  targets: [{ type: 'STORE' }],
  tiers: [tier(1, 'PERCENTAGE', 10)],
  ...fields,
});

/** "Buy `minUnits` of the targets, get `quantity` of each reward product discounted." */
const buyXPayY = (id: number, targets: PricingPromo['targets'], minUnits: number, rewards: number[], reward: Partial<PricingTier> = {}) =>
  promo(id, {
    type: 'BUY_X_PAY_Y',
    targets,
    tiers: [tier(minUnits, 'FREE', null, { reward_quantity: 1, targets: rewards.map((rewardId) => ({ type: 'PRODUCT' as const, id: rewardId })), ...reward })],
  });

const coupon = (fields: Partial<PricingCoupon> = {}): PricingCoupon => ({ coupon: 'SAVE', type: 'PERCENTAGE', value: 10, applies_to: [-1], min_price: null, ...fields });

const price = (cart: CartLine[], promos: PricingPromo[] = [], withCoupon: PricingCoupon | null = null, now = NOW) => priceCart({ cart, promos, coupon: withCoupon, now });

const column = <K extends keyof ReturnType<typeof price>['items'][number]>(result: ReturnType<typeof price>, key: K) => result.items.map((item) => item[key]);

describe('pricing, the issue 12 example', () => {
  it('2 x 10.00 (with a 100.00 option) + 1 x 5.00, "50% off from 2 units" and "buy A, get B free": 110.00, not 25.00', () => {
    // A: (10.00 + 100.00 option) x 2 = 220.00; B: 5.00 x 1 = 5.00; subtotal 225.00.
    // Promo 1, PROGRESSIVE QUANTITY on the store: 3 units >= 2 -> 50% off each line: A 110.00, B 2.50.
    // Promo 2, BUY_X_PAY_Y: 2 units of A >= 1 -> 1 unit of B free: B 5.00.
    // Rule 5: A takes 110.00 (promo 1), B takes max(2.50, 5.00) = 5.00 (promo 2).
    // Total 225.00 - 115.00 = 110.00 (today's naive pricing: 2 x 10 + 5 = 25.00, discount 0).
    const result = price(
      [line(1, 2, 10, 100), line(2, 1, 5)],
      [promo(1, { name: '50% off from 2 units', tiers: [tier(2, 'PERCENTAGE', 50)] }), buyXPayY(2, [{ type: 'PRODUCT', id: 1 }], 1, [2])],
    );
    expect(result.items).toEqual([
      { package_id: 1, name: 'Package 1', quantity: 2, unit_price: 10, options_price: 100, subtotal: 220, promo_discount: 110, promo_id: 1, coupon_discount: 0, total: 110 },
      { package_id: 2, name: 'Package 2', quantity: 1, unit_price: 5, options_price: 0, subtotal: 5, promo_discount: 5, promo_id: 2, coupon_discount: 0, total: 0 },
    ]);
    expect(result).toMatchObject({ subtotal: 225, promo_discount: 115, coupon_discount: 0, discount: 115, total: 110, next_tiers: [], coupon: null });
  });
});

describe('pricing, section 8 rule by rule', () => {
  it('rounding: every amount to the nearest cent, halves away from zero, exact where doubles drift', () => {
    // 0.125 -> 0.13 (a half goes up, away from zero).
    expect(price([line(1, 1, 0.125)]).total).toBe(0.13);
    // 10.075 is 10.07499999... as a double, so Math.round(x * 100) / 100 gives 10.07; the rule says 10.08.
    expect(price([line(1, 1, 10.075)]).total).toBe(10.08);
    expect(roundToCents(1.005)).toBe(1.01);
    expect(roundToCents(-0.125)).toBe(-0.13);
    // 50% of 4.35 = 2.175 -> 2.18 (as doubles 4.35 * 50 / 100 = 2.17499999... -> 2.17).
    expect(price([line(1, 1, 4.35)], [promo(1, { tiers: [tier(1, 'PERCENTAGE', 50)] })]).items[0]).toMatchObject({ promo_discount: 2.18, total: 2.17 });
    // 0.1 + 0.2 per unit, 3 units: 0.90 exactly (as doubles 0.30000000000000004 x 3 = 0.9000000000000001).
    expect(price([line(1, 3, 0.1, 0.2)]).subtotal).toBe(0.9);
  });

  it('totals are the sums of the rounded lines, never rounded again', () => {
    // Two lines of 0.125: each rounds to 0.13, so the subtotal is 0.26 (rounding the sum 0.25 would give 0.25).
    const result = price([line(1, 1, 0.125), line(2, 1, 0.125)]);
    expect(column(result, 'subtotal')).toEqual([0.13, 0.13]);
    expect(result).toMatchObject({ subtotal: 0.26, total: 0.26 });
  });

  it('rule 1: subtotal = (unit_price + options_price) x quantity, rounded once per line', () => {
    // (1.00 + 0.145 option) x 3 = 3.435 -> 3.44 (rounding the unit first would give 1.15 x 3 = 3.45).
    const result = price([line(1, 3, 1, 0.145), line(2, 2, 7.5, 2.5)]);
    // Second line: (7.50 + 2.50) x 2 = 20.00.
    expect(result.items.map(({ unit_price, options_price, subtotal }) => ({ unit_price, options_price, subtotal }))).toEqual([
      { unit_price: 1, options_price: 0.145, subtotal: 3.44 },
      { unit_price: 7.5, options_price: 2.5, subtotal: 20 },
    ]);
    expect(result.subtotal).toBe(23.44);
  });

  it('rule 2: a promo counts only when enabled, started (starts_at <= now) and not ended (ends_at > now)', () => {
    const cart = [line(1, 1, 10)];
    const tenOff = (fields: Partial<PricingPromo>) => price(cart, [promo(1, fields)]).promo_discount;
    // 10% of 10.00 = 1.00 when it counts, 0 otherwise.
    expect(tenOff({})).toBe(1);
    expect(tenOff({ starts_at: iso(NOW) })).toBe(1);
    expect(tenOff({ ends_at: iso(NOW + 1) })).toBe(1);
    expect(tenOff({ enabled: false })).toBe(0);
    expect(tenOff({ starts_at: iso(NOW + 1) })).toBe(0);
    expect(tenOff({ ends_at: iso(NOW) })).toBe(0);
    expect(tenOff({ starts_at: '2025-01-01T00:00:00.000Z', ends_at: '2025-12-31T00:00:00.000Z' })).toBe(0);
  });

  it('rule 2: STORE matches every line, CATEGORY the lines of its packages, PRODUCT the line of that (variation) id', () => {
    // Lines: package 1 (category 5) 10.00, package 2 (category 6) 20.00, variation 3 (no category) 40.00; 50% off.
    const cart = [line(1, 1, 10, 0, 5), line(2, 1, 20, 0, 6), line(3, 1, 40)];
    const off = (targets: PricingPromo['targets']) => column(price(cart, [promo(1, { targets, tiers: [tier(1, 'PERCENTAGE', 50)] })]), 'promo_discount');
    expect(off([{ type: 'STORE' }])).toEqual([5, 10, 20]);
    expect(off([{ type: 'CATEGORY', id: 5 }])).toEqual([5, 0, 0]);
    expect(off([{ type: 'PRODUCT', id: 3 }])).toEqual([0, 0, 20]);
    expect(
      off([
        { type: 'CATEGORY', id: 6 },
        { type: 'PRODUCT', id: 1 },
      ]),
    ).toEqual([5, 10, 0]);
  });

  it('rule 2: the measure is the matched units (QUANTITY) or summed subtotals before discounts (VALUE)', () => {
    // Category 5 holds 2 + 1 = 3 units worth 2 x 10.00 + 1 x 15.00 = 35.00; the line outside (100.00) does not count.
    const cart = [line(1, 2, 10, 0, 5), line(2, 1, 15, 0, 5), line(3, 1, 100)];
    const targets = [{ type: 'CATEGORY' as const, id: 5 }];
    const byUnits = (min: number) => price(cart, [promo(1, { targets, tiers: [tier(min, 'PERCENTAGE', 10)] })]).promo_discount;
    const byValue = (min: number) => price(cart, [promo(1, { targets, condition_mode: 'VALUE', tiers: [tier(min, 'PERCENTAGE', 10)] })]).promo_discount;
    // 10% of 35.00 = 3.50 once reached.
    expect([byUnits(3), byUnits(4)]).toEqual([3.5, 0]);
    expect([byValue(35), byValue(35.01)]).toEqual([3.5, 0]);
    // VALUE counts the subtotal before any discount: a 100% PRODUCT promo on line 1 does not lower the measure.
    const both = price(cart, [
      promo(1, { targets, condition_mode: 'VALUE', tiers: [tier(35, 'PERCENTAGE', 10)] }),
      promo(2, { targets: [{ type: 'PRODUCT', id: 1 }], tiers: [tier(1, 'PERCENTAGE', 100)] }),
    ]);
    expect(column(both, 'promo_id')).toEqual([2, 1, null]);
  });

  it('rule 3: PROGRESSIVE takes the tier with the largest min_amount not above the measure, PERCENTAGE off each line', () => {
    // Tiers given out of order: 5 units -> 20%, 2 units -> 10%, 10 units -> 30%. 6 units reach 2 and 5: 20% applies.
    const tiers = [tier(5, 'PERCENTAGE', 20), tier(2, 'PERCENTAGE', 10), tier(10, 'PERCENTAGE', 30)];
    const result = price([line(1, 4, 2.5), line(2, 2, 9.99)], [promo(1, { tiers })]);
    // 20% of 10.00 = 2.00; 20% of 19.98 = 3.996 -> 4.00.
    expect(column(result, 'promo_discount')).toEqual([2, 4]);
    expect(result.total).toBe(23.98);
    // A PERCENTAGE tier of 100 takes the line to 0, never below.
    expect(price([line(1, 1, 3.33)], [promo(1, { tiers: [tier(1, 'PERCENTAGE', 100)] })]).total).toBe(0);
  });

  it('rule 3: a VALUE tier is shared in proportion to subtotals, each share rounded, the remainder on the last matched line', () => {
    // 10.00 off three lines of 10.00: 3.333... -> 3.33, 3.33, and the last takes 10.00 - 6.66 = 3.34.
    const even = price([line(1, 1, 10), line(2, 1, 10), line(3, 1, 10)], [promo(1, { tiers: [tier(1, 'VALUE', 10)] })]);
    expect(column(even, 'promo_discount')).toEqual([3.33, 3.33, 3.34]);
    // Only matched lines share: 5.00 off category 7 (lines 1 and 3, 20.00 and 10.00): 3.33 and 5.00 - 3.33 = 1.67.
    const matched = price([line(1, 2, 10, 0, 7), line(2, 1, 50), line(3, 1, 10, 0, 7)], [promo(1, { targets: [{ type: 'CATEGORY', id: 7 }], tiers: [tier(1, 'VALUE', 5)] })]);
    expect(column(matched, 'promo_discount')).toEqual([3.33, 0, 1.67]);
    // Never more than their sum: 50.00 off lines worth 12.00 + 3.00 takes exactly 15.00.
    const capped = price([line(1, 1, 12), line(2, 1, 3)], [promo(1, { tiers: [tier(1, 'VALUE', 50)] })]);
    expect(column(capped, 'promo_discount')).toEqual([12, 3]);
    expect(capped.total).toBe(0);
  });

  it('rule 3 guard: when the last remainder would go below 0, the excess spills back and no line leaves [0, its subtotal]', () => {
    // 0.05 off 0.03, 0.03, 0.03, 0.01: shares 0.015 -> 0.02 three times = 0.06, the last would get -0.01.
    // The last keeps 0, its -0.01 moves to the third line: 0.02, 0.02, 0.01, 0 (sum 0.05).
    const result = price([line(1, 1, 0.03), line(2, 1, 0.03), line(3, 1, 0.03), line(4, 1, 0.01)], [promo(1, { tiers: [tier(1, 'VALUE', 0.05)] })]);
    expect(column(result, 'promo_discount')).toEqual([0.02, 0.02, 0.01, 0]);
    expect(result.promo_discount).toBe(0.05);
    // Above its amount: 8 cents on 3, 3, 3, 1: 2.4 -> 2 three times, the last would get 2 > 1; it keeps 1, the third takes 3.
    expect(shareInProportion(8n, [3n, 3n, 3n, 1n])).toEqual([2n, 2n, 3n, 1n]);
    // Consistent cases are the plain rule: 10 cents on 3, 3, 4 -> 3, 3, 4.
    expect(shareInProportion(10n, [3n, 3n, 4n])).toEqual([3n, 3n, 4n]);
  });

  it('rule 4: BUY_X_PAY_Y discounts up to reward_quantity units of each reward product: FREE is the whole unit price with options', () => {
    // Buy 2 of product 1, get 2 units of product 2 (8.00 + 1.50 option) free: 3 in the cart, 2 x 9.50 = 19.00 off.
    const promos = [buyXPayY(1, [{ type: 'PRODUCT', id: 1 }], 2, [2], { reward_quantity: 2 })];
    const result = price([line(1, 2, 20), line(2, 3, 8, 1.5)], promos);
    expect(column(result, 'promo_discount')).toEqual([0, 19]);
    // Below the minimum (1 unit of product 1): nothing.
    expect(price([line(1, 1, 20), line(2, 3, 8, 1.5)], promos).promo_discount).toBe(0);
    // Once per order: 6 units of product 1 (three times the minimum) still give 2 units, 19.00.
    expect(price([line(1, 6, 20), line(2, 3, 8, 1.5)], promos).promo_discount).toBe(19);
    // A reward product not in the cart gives nothing, and a product on two lines takes its units in cart order.
    expect(price([line(1, 2, 20)], promos).promo_discount).toBe(0);
    expect(column(price([line(1, 2, 20), line(2, 1, 8), line(2, 5, 8)], promos), 'promo_discount')).toEqual([0, 8, 8]);
  });

  it('rule 4: PERCENTAGE takes reward_value% of the unit price, VALUE reward_value per unit but at most the unit price', () => {
    const cart = [line(1, 1, 30), line(2, 3, 4, 1)];
    const withReward = (reward: Partial<PricingTier>) => price(cart, [buyXPayY(1, [{ type: 'PRODUCT', id: 1 }], 1, [2], { reward_quantity: 2, ...reward })]).items[1];
    // 2 units of (4.00 + 1.00): 25% of 5.00 = 1.25 per unit, 2.50.
    expect(withReward({ reward_type: 'PERCENTAGE', reward_value: 25 })).toMatchObject({ promo_discount: 2.5, total: 12.5 });
    // 3.00 per unit x 2 = 6.00; 7.00 per unit is capped at the 5.00 unit price: 10.00.
    expect(withReward({ reward_type: 'VALUE', reward_value: 3 })).toMatchObject({ promo_discount: 6, total: 9 });
    expect(withReward({ reward_type: 'VALUE', reward_value: 7 })).toMatchObject({ promo_discount: 10, total: 5 });
    // A PERCENTAGE of 100 is the same as FREE.
    expect(withReward({ reward_type: 'PERCENTAGE', reward_value: 100 })).toMatchObject({ promo_discount: 10 });
  });

  it('rule 4: reward units count in the measure when the reward product is also a target ("buy 3 of A, get 1 of A free")', () => {
    // 3 units of A (12.00 each) reach the minimum of 3 although one of them is the free one: 12.00 off.
    const promos = [buyXPayY(1, [{ type: 'PRODUCT', id: 1 }], 3, [1])];
    expect(price([line(1, 3, 12)], promos).items[0]).toMatchObject({ subtotal: 36, promo_discount: 12, promo_id: 1, total: 24 });
    // 2 units do not reach it: nothing, the buyer pays 24.00 for 2.
    expect(price([line(1, 2, 12)], promos).promo_discount).toBe(0);
  });

  it('rule 5: promos do not stack: the largest discount applies and promo_id names it', () => {
    // Line 1 (40.00): promo 1 10% = 4.00, promo 2 25% on product 1 = 10.00 -> 10.00 (promo 2); line 2 (10.00): only promo 1, 1.00.
    const result = price([line(1, 1, 40), line(2, 1, 10)], [promo(1), promo(2, { targets: [{ type: 'PRODUCT', id: 1 }], tiers: [tier(1, 'PERCENTAGE', 25)] })]);
    expect(result.items.map(({ promo_discount, promo_id }) => ({ promo_discount, promo_id }))).toEqual([
      { promo_discount: 10, promo_id: 2 },
      { promo_discount: 1, promo_id: 1 },
    ]);
    // Two 60% promos on one line: 60% (the larger), never 120%: the line stays at 40% of 10.00 = 4.00, above 0.
    const twoBig = price([line(1, 1, 10)], [promo(1, { tiers: [tier(1, 'PERCENTAGE', 60)] }), promo(2, { tiers: [tier(1, 'PERCENTAGE', 60)] })]);
    expect(twoBig.total).toBe(4);
    // No promo reached: promo_id null.
    expect(price([line(1, 1, 10)], [promo(1, { tiers: [tier(2, 'PERCENTAGE', 10)] })]).items[0]?.promo_id).toBeNull();
  });

  it('rule 5: ties go to the lowest promo id, whatever the order the promos come in', () => {
    // Promo 7 (20% = 2.00) and promo 3 (2.00 off) give 10.00 the same 2.00: promo 3 names it.
    const promos = [promo(7, { tiers: [tier(1, 'PERCENTAGE', 20)] }), promo(3, { tiers: [tier(1, 'VALUE', 2)] })];
    expect(price([line(1, 1, 10)], promos).items[0]).toMatchObject({ promo_discount: 2, promo_id: 3 });
    expect(price([line(1, 1, 10)], [...promos].reverse()).items[0]).toMatchObject({ promo_discount: 2, promo_id: 3 });
  });

  it('rule 6: a PERCENTAGE coupon applies per covered line, on its amount after promos', () => {
    // Line 1 20.00 - 50% promo = 10.00, coupon 15% = 1.50; line 2 9.99 not covered; line 3 3.30 -> 15% = 0.495 -> 0.50.
    const result = price(
      [line(1, 1, 20), line(2, 1, 9.99), line(3, 1, 3.3)],
      [promo(1, { targets: [{ type: 'PRODUCT', id: 1 }], tiers: [tier(1, 'PERCENTAGE', 50)] })],
      coupon({ value: 15, applies_to: [1, 3] }),
    );
    expect(column(result, 'coupon_discount')).toEqual([1.5, 0, 0.5]);
    expect(column(result, 'total')).toEqual([8.5, 9.99, 2.8]);
    expect(result).toMatchObject({ subtotal: 33.29, promo_discount: 10, coupon_discount: 2, discount: 12, total: 21.29, coupon: 'SAVE', amount_after_promos: 23.29 });
    expect(result.coupon_check).toEqual({ coupon: 'SAVE', covers_any_line: true, covered_after_promos: 13.3, meets_min_price: true, applied: true });
  });

  it('rule 6: a VALUE coupon is shared among covered lines in proportion to their amounts after promos', () => {
    // After promos: 30.00 - 100% = 0, 20.00, 10.00; 5.00 shared over 0 / 20.00 / 10.00: 0, 3.33, 5.00 - 3.33 = 1.67.
    const result = price(
      [line(1, 1, 30), line(2, 1, 20), line(3, 1, 10)],
      [promo(1, { targets: [{ type: 'PRODUCT', id: 1 }], tiers: [tier(1, 'PERCENTAGE', 100)] })],
      coupon({ type: 'VALUE', value: 5 }),
    );
    expect(column(result, 'coupon_discount')).toEqual([0, 3.33, 1.67]);
    expect(result.total).toBe(25);
    // Never more than the covered amount after promos: 100.00 off 10.00 + 20.00 (line 1 not covered) takes 30.00.
    const capped = price([line(1, 1, 30), line(2, 1, 20), line(3, 1, 10)], [], coupon({ type: 'VALUE', value: 100, applies_to: [2, 3] }));
    expect(column(capped, 'total')).toEqual([30, 0, 0]);
  });

  it('rule 6: min_price is compared with the order amount after promos; a coupon that fails or covers nothing is not priced', () => {
    // Subtotal 50.00, 20% promo -> 40.00 after promos. min_price 45 fails although the subtotal would pass; 40 passes.
    const cart = [line(1, 1, 50)];
    const promos = [promo(1, { tiers: [tier(1, 'PERCENTAGE', 20)] })];
    const tooSmall = price(cart, promos, coupon({ min_price: 45 }));
    expect(tooSmall).toMatchObject({ coupon_discount: 0, total: 40, coupon: null, amount_after_promos: 40 });
    expect(tooSmall.coupon_check).toMatchObject({ covers_any_line: true, meets_min_price: false, applied: false });
    expect(price(cart, promos, coupon({ min_price: 40 }))).toMatchObject({ coupon_discount: 4, total: 36, coupon: 'SAVE' });
    // applies_to names no package of the cart: not applicable, nothing priced.
    const elsewhere = price(cart, promos, coupon({ applies_to: [2] }));
    expect(elsewhere).toMatchObject({ coupon_discount: 0, coupon: null });
    expect(elsewhere.coupon_check).toMatchObject({ covers_any_line: false, covered_after_promos: 0, applied: false });
  });

  it('rule 7: next_tiers tells what each PROGRESSIVE promo in force still needs, in units or currency', () => {
    const cart = [line(1, 3, 10, 0, 5), line(2, 1, 4.995)];
    const result = price(cart, [
      // Category 5 holds 3 units, next tier at 5: 2 units missing (the 2-unit tier is reached).
      promo(4, { name: 'More units', targets: [{ type: 'CATEGORY', id: 5 }], tiers: [tier(2, 'PERCENTAGE', 10), tier(5, 'PERCENTAGE', 15)] }),
      // VALUE on the store: 30.00 + 5.00 (4.995 rounded) = 35.00, next tier 40.004 -> 5.004 missing, rounded up to 5.01 (5.00 would not reach it).
      promo(2, { name: 'Spend more', condition_mode: 'VALUE', tiers: [tier(40.004, 'VALUE', 5)] }),
      // Last tier reached (1 unit): no next tier.
      promo(1, { tiers: [tier(1, 'PERCENTAGE', 5)] }),
      // Matches no line of the cart: absent.
      promo(3, { targets: [{ type: 'CATEGORY', id: 9 }], tiers: [tier(1, 'PERCENTAGE', 5)] }),
      // Not in force, BUY_X_PAY_Y: absent.
      promo(5, { enabled: false, tiers: [tier(10, 'PERCENTAGE', 50)] }),
      buyXPayY(6, [{ type: 'STORE' }], 10, [1]),
    ]);
    expect(result.next_tiers).toEqual([
      { promo_id: 2, name: 'Spend more', missing: 5.01, reward_type: 'VALUE', reward_value: 5 },
      { promo_id: 4, name: 'More units', missing: 2, reward_type: 'PERCENTAGE', reward_value: 15 },
    ]);
  });

  it('rule 7: next_tiers holds at most 10 entries, the smallest share still missing first, ties by the lowest promo id', () => {
    // 2 units in the cart; promo i's next tier is at 2 + i units: i missing of 2 + i (a share growing with i).
    const promos = Array.from({ length: 14 }, (_, index) => promo(100 - index, { tiers: [tier(2 + (index + 1), 'PERCENTAGE', 5)] }));
    // Two promos as near as promo 100 (1 of 3 units missing): 1 of 3 again (id 7), and 10.00 of 30.00 (id 8, VALUE): ties go to the lowest id.
    promos.push(promo(8, { condition_mode: 'VALUE', tiers: [tier(30, 'PERCENTAGE', 5)] }), promo(7, { tiers: [tier(3, 'PERCENTAGE', 5)] }));
    const result = price([line(1, 2, 10)], promos);
    expect(result.next_tiers.map((next) => [next.promo_id, next.missing])).toEqual([
      [7, 1],
      [8, 10],
      [100, 1],
      [99, 2],
      [98, 3],
      [97, 4],
      [96, 5],
      [95, 6],
      [94, 7],
      [93, 8],
    ]);
  });

  it('rule 8: the commission is a percentage of the total, rounded to the cent', () => {
    // 12.5% of 20.99 = 2.62375 -> 2.62; 10% of 0.05 = 0.005 -> 0.01 (half away from zero); 7% of 1.50 = 0.105 -> 0.11.
    expect(commissionOf(20.99, 12.5)).toBe(2.62);
    expect(commissionOf(0.05, 10)).toBe(0.01);
    expect(commissionOf(1.5, 7)).toBe(0.11);
    expect(commissionOf(0, 30)).toBe(0);
  });
});

describe('pricing, edges', () => {
  it('a VALUE tier does not keep the price per unit from rising as units are added (why the property test uses PERCENTAGE tiers)', () => {
    // "5.00 off from 2 units": 2 x 10.00 - 5.00 = 15.00 (7.50 a unit); 3 units: 30.00 - 5.00 = 25.00 (8.33 a unit).
    const promos = [promo(1, { tiers: [tier(2, 'VALUE', 5)] })];
    const perUnit = (quantity: number) => price([line(1, quantity, 10)], promos).total / quantity;
    expect(perUnit(3)).toBeGreaterThan(perUnit(2));
  });

  it('refuses inputs the API validates (a bug of the caller, not a 422)', () => {
    expect(() => price([line(1, 0, 10)])).toThrow(RangeError);
    expect(() => price([line(1, 1.5, 10)])).toThrow(RangeError);
    expect(() => price([line(1, 1, -1)])).toThrow(RangeError);
    expect(() => price([line(1, 1, Number.NaN)])).toThrow(RangeError);
  });

  it('an empty cart costs 0 and lists no next tier', () => {
    expect(price([], [promo(1, { tiers: [tier(2, 'PERCENTAGE', 10)] })], coupon())).toMatchObject({ items: [], total: 0, next_tiers: [], coupon: null });
  });
});
