import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { shareInProportion } from '#lib/domain/pricing-money.ts';
import { priceCart, type CartLine, type PricedCart, type PricingCoupon, type PricingInput, type PricingPromo, type PricingTier } from '#lib/domain/pricing.ts';

/**
 * Properties of the pricing engine over generated carts, promos and coupons (fast-check). Every
 * property runs RUNS times; a failure prints its seed and the shrunk counterexample.
 */
const RUNS = 300;
const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const DAY = 86_400_000;
const iso = (epochMs: number) => new Date(epochMs).toISOString();

/** Engine outputs are whole cents as doubles (12.34): back to integers for exact comparisons. */
const cents = (amount: number) => Math.round(amount * 100);

// ---- generators --------------------------------------------------------------------------------

const PACKAGE_IDS = [1, 2, 3, 4, 5, 6] as const;
const centsAmount = (max = 50_000) => fc.integer({ min: 0, max }).map((value) => value / 100);
/** Whole cents most of the time, sometimes thousandths (half cents and worse) to exercise rounding. */
const anyAmount = fc.oneof({ weight: 3, arbitrary: centsAmount() }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 500_000 }).map((value) => value / 1000) });

const cartLine = (unitPrice: fc.Arbitrary<number>): fc.Arbitrary<CartLine> =>
  fc.record({
    package_id: fc.constantFrom(...PACKAGE_IDS),
    name: fc.constant('Package'),
    quantity: fc.integer({ min: 1, max: 6 }),
    unit_price: unitPrice,
    options_price: fc.oneof(fc.constant(0), unitPrice),
    category_id: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  });
const cart = (unitPrice: fc.Arbitrary<number> = anyAmount) => fc.array(cartLine(unitPrice), { maxLength: 6 });

const target = fc.oneof(
  fc.constant({ type: 'STORE' as const }),
  fc.record({ type: fc.constant('CATEGORY' as const), id: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ type: fc.constant('PRODUCT' as const), id: fc.constantFrom(...PACKAGE_IDS) }),
);
const targets = fc.array(target, { minLength: 1, maxLength: 3 });
const percentage = fc.oneof(
  fc.integer({ min: 1, max: 100 }),
  fc.integer({ min: 1, max: 200 }).map((half) => half / 2),
);
const minAmount = (mode: PricingPromo['condition_mode']) =>
  mode === 'QUANTITY' ? fc.integer({ min: 1, max: 12 }) : fc.integer({ min: 1, max: 60_000 }).map((value) => value / 100);

const rewardValue = (type: PricingTier['reward_type']) =>
  type === 'FREE' ? fc.constant(null) : type === 'PERCENTAGE' ? percentage : centsAmount(20_000).filter((value) => value > 0);

const progressiveTier = (mode: PricingPromo['condition_mode']): fc.Arbitrary<PricingTier> =>
  fc.constantFrom('PERCENTAGE' as const, 'VALUE' as const).chain((reward_type) =>
    fc.record({
      min_amount: minAmount(mode),
      reward_type: fc.constant(reward_type),
      reward_value: rewardValue(reward_type),
      reward_quantity: fc.constant(null),
      targets: fc.constant([]),
    }),
  );

const buyXPayYTier = (mode: PricingPromo['condition_mode']): fc.Arbitrary<PricingTier> =>
  fc.constantFrom('FREE' as const, 'PERCENTAGE' as const, 'VALUE' as const).chain((reward_type) =>
    fc.record({
      min_amount: minAmount(mode),
      reward_type: fc.constant(reward_type),
      reward_value: rewardValue(reward_type),
      reward_quantity: fc.integer({ min: 1, max: 3 }),
      targets: fc.uniqueArray(fc.constantFrom(...PACKAGE_IDS), { minLength: 1, maxLength: 3 }).map((ids) => ids.map((id) => ({ type: 'PRODUCT' as const, id }))),
    }),
  );

/** A window around NOW: mostly in force, sometimes disabled, not yet started or already over. */
const promoWindow = fc.record({
  enabled: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  starts_at: fc
    .oneof({ weight: 4, arbitrary: fc.integer({ min: -30 * DAY, max: 0 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: DAY }) })
    .map((offset) => iso(NOW + offset)),
  ends_at: fc.option(
    fc.integer({ min: -DAY, max: 30 * DAY }).map((offset) => iso(NOW + offset)),
    { nil: null },
  ),
});

type PromoWithoutId = Omit<PricingPromo, 'id'>;

const promoWithoutId: fc.Arbitrary<PromoWithoutId> = fc
  .record({ type: fc.constantFrom('PROGRESSIVE' as const, 'BUY_X_PAY_Y' as const), condition_mode: fc.constantFrom('QUANTITY' as const, 'VALUE' as const) })
  .chain(({ type, condition_mode }) =>
    fc.record({
      name: fc.constant(`${type} ${condition_mode}`),
      type: fc.constant(type),
      condition_mode: fc.constant(condition_mode),
      promoWindow,
      targets,
      tiers:
        type === 'PROGRESSIVE'
          ? fc.uniqueArray(progressiveTier(condition_mode), { minLength: 1, maxLength: 4, selector: (tier) => tier.min_amount })
          : buyXPayYTier(condition_mode).map((tier) => [tier]),
    }),
  )
  .map(({ promoWindow: { enabled, starts_at, ends_at }, ...promo }) => ({ ...promo, enabled, starts_at, ends_at }));

/** Promos with distinct ids, in no particular id order. */
const withIds = (promos: fc.Arbitrary<PromoWithoutId[]>) =>
  promos.chain((list) =>
    fc
      .uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: list.length, maxLength: list.length })
      .map((ids) => list.map((promo, index): PricingPromo => ({ ...promo, id: ids[index] ?? index + 100 }))),
  );
const promos = withIds(fc.array(promoWithoutId, { maxLength: 4 }));

const coupon: fc.Arbitrary<PricingCoupon> = fc.constantFrom('PERCENTAGE' as const, 'VALUE' as const).chain((type) =>
  fc.record({
    coupon: fc.constant('CODE'),
    type: fc.constant(type),
    value: type === 'PERCENTAGE' ? percentage : centsAmount(30_000).filter((value) => value > 0),
    applies_to: fc.oneof(fc.constant([-1]), fc.uniqueArray(fc.constantFrom(...PACKAGE_IDS), { minLength: 1, maxLength: 4 })),
    min_price: fc.option(centsAmount(100_000), { nil: null }),
  }),
);

const pricingInput: fc.Arbitrary<PricingInput> = fc.record({ cart: cart(), promos, coupon: fc.option(coupon, { nil: null }), now: fc.constant(NOW) });

const check = <T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void) => fc.assert(fc.property(arbitrary, predicate), { numRuns: RUNS });

// ---- properties --------------------------------------------------------------------------------

describe('pricing properties', () => {
  it('the total is never negative, nor is any line', () => {
    check(pricingInput, (input) => {
      const result = priceCart(input);
      expect(result.total).toBeGreaterThanOrEqual(0);
      for (const item of result.items) expect(item.total).toBeGreaterThanOrEqual(0);
    });
  });

  it('no discount exceeds what it applies to: promo <= subtotal, coupon <= amount after promo, none below 0', () => {
    check(pricingInput, (input) => {
      for (const item of priceCart(input).items) {
        expect(cents(item.promo_discount)).toBeGreaterThanOrEqual(0);
        expect(cents(item.promo_discount)).toBeLessThanOrEqual(cents(item.subtotal));
        expect(cents(item.coupon_discount)).toBeGreaterThanOrEqual(0);
        expect(cents(item.coupon_discount)).toBeLessThanOrEqual(cents(item.subtotal) - cents(item.promo_discount));
      }
    });
  });

  it('lines sum to the totals exactly in cents, and each line total is subtotal - promo - coupon', () => {
    check(pricingInput, (input) => {
      const result = priceCart(input);
      const sumOf = (key: 'subtotal' | 'promo_discount' | 'coupon_discount' | 'total') => result.items.reduce((sum, item) => sum + cents(item[key]), 0);
      for (const item of result.items) {
        expect(cents(item.total)).toBe(cents(item.subtotal) - cents(item.promo_discount) - cents(item.coupon_discount));
        // Every amount is a whole number of cents (no float residue such as 0.30000000000000004).
        for (const amount of [item.subtotal, item.promo_discount, item.coupon_discount, item.total]) expect(cents(amount) / 100).toBe(amount);
      }
      expect(cents(result.subtotal)).toBe(sumOf('subtotal'));
      expect(cents(result.promo_discount)).toBe(sumOf('promo_discount'));
      expect(cents(result.coupon_discount)).toBe(sumOf('coupon_discount'));
      expect(cents(result.total)).toBe(sumOf('total'));
      expect(cents(result.discount)).toBe(cents(result.promo_discount) + cents(result.coupon_discount));
      expect(cents(result.total)).toBe(cents(result.subtotal) - cents(result.discount));
      expect(cents(result.amount_after_promos)).toBe(cents(result.subtotal) - cents(result.promo_discount));
    });
  });

  it('promos do not stack: each line gets the largest discount any one promo gives it, named by the lowest such id', () => {
    check(pricingInput, (input) => {
      const together = priceCart({ ...input, coupon: null });
      const alone = input.promos.map((promo) => ({ id: promo.id, items: priceCart({ ...input, promos: [promo], coupon: null }).items }));
      together.items.forEach((item, index) => {
        const offers = alone.map(({ id, items }) => ({ id, cents: cents(items[index]?.promo_discount ?? 0) }));
        const largest = Math.max(0, ...offers.map((offer) => offer.cents));
        expect(cents(item.promo_discount)).toBe(largest);
        const namers = offers.filter((offer) => offer.cents === largest && largest > 0).map((offer) => offer.id);
        expect(item.promo_id).toBe(namers.length > 0 ? Math.min(...namers) : null);
      });
    });
  });

  it('the coupon is priced only when it applies, only on the lines it covers, and a VALUE coupon takes min(value, covered amount)', () => {
    check(fc.record({ cart: cart(), promos, coupon, now: fc.constant(NOW) }), (input) => {
      const result = priceCart(input);
      const outcome = result.coupon_check!;
      const covered = (line: CartLine) => input.coupon!.applies_to.includes(-1) || input.coupon!.applies_to.includes(line.package_id);
      expect(outcome.covers_any_line).toBe(input.cart.some(covered));
      expect(outcome.meets_min_price).toBe(input.coupon!.min_price === null || cents(result.amount_after_promos) >= Math.round(input.coupon!.min_price * 100));
      expect(outcome.applied).toBe(outcome.covers_any_line && outcome.meets_min_price);
      expect(result.coupon).toBe(outcome.applied ? 'CODE' : null);
      result.items.forEach((item, index) => {
        if (!outcome.applied || !covered(input.cart[index]!)) expect(item.coupon_discount).toBe(0);
      });
      const afterPromosCovered = result.items.filter((_, index) => covered(input.cart[index]!)).reduce((sum, item) => sum + cents(item.subtotal) - cents(item.promo_discount), 0);
      expect(cents(outcome.covered_after_promos)).toBe(afterPromosCovered);
      if (outcome.applied && input.coupon!.type === 'VALUE') {
        expect(cents(result.coupon_discount)).toBe(Math.min(Math.round(input.coupon!.value * 100), afterPromosCovered));
      }
    });
  });

  it('sharing: the shares sum to the amount (capped at the weights), stay within [0, weight], and are the plain rule whenever it is consistent', () => {
    // Cent-sized weights, many lines, amounts up to their sum: where rounding several shares the same way pushes the
    // last remainder out of bounds (about 1 case in 10 here; wider weights make it rare).
    const sharing = fc
      .array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 10 })
      .chain((weights) => fc.record({ weights: fc.constant(weights), amount: fc.integer({ min: 0, max: weights.reduce((sum, weight) => sum + weight, 0) + 2 }) }));
    check(sharing, ({ amount, weights }) => {
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      const shares = shareInProportion(BigInt(amount), weights.map(BigInt)).map(Number);
      expect(shares.reduce((sum, share) => sum + share, 0)).toBe(Math.min(amount, total));
      shares.forEach((share, index) => {
        expect(share).toBeGreaterThanOrEqual(0);
        expect(share).toBeLessThanOrEqual(weights[index]!);
      });
      if (total === 0) return;
      // The letter of section 8, in integers: each share rounded half away from zero, the last takes the remainder.
      const shared = Math.min(amount, total);
      const plain = weights.map((weight) => Math.floor((2 * shared * weight + total) / (2 * total)));
      plain[plain.length - 1] = shared - plain.slice(0, -1).reduce((sum, share) => sum + share, 0);
      if (plain.every((share, index) => share >= 0 && share <= weights[index]!)) expect(shares).toEqual(plain);
    });
  });

  describe('adding a unit to a line never raises that line price per unit, with PROGRESSIVE PERCENTAGE promos only', () => {
    // Why only PERCENTAGE tiers: a VALUE tier is a fixed amount, spread over more units as the cart
    // grows, so the price per unit rises until the next tier (pricing.test.ts shows 7.50 -> 8.33).
    // And only tiers whose percentage does not fall as min_amount grows ("a larger discount as the
    // cart grows", store-api.md); a store could configure the opposite, which breaks it by design.
    const percentTiers = (mode: PricingPromo['condition_mode'], percent: fc.Arbitrary<number>) =>
      fc.uniqueArray(minAmount(mode), { minLength: 1, maxLength: 4 }).chain((minimums) =>
        fc.array(percent, { minLength: minimums.length, maxLength: minimums.length }).map((percents) => {
          const sortedPercents = [...percents].sort((a, b) => a - b);
          return [...minimums]
            .sort((a, b) => a - b)
            .map(
              (min_amount, index): PricingTier => ({
                min_amount,
                reward_type: 'PERCENTAGE',
                reward_value: sortedPercents[index] ?? 0,
                reward_quantity: null,
                targets: [],
              }),
            );
        }),
      );
    const percentPromos = (percent: fc.Arbitrary<number>) =>
      withIds(
        fc.array(
          fc.constantFrom('QUANTITY' as const, 'VALUE' as const).chain((condition_mode) =>
            fc.record({
              name: fc.constant('progressive'),
              type: fc.constant('PROGRESSIVE' as const),
              condition_mode: fc.constant(condition_mode),
              enabled: fc.constant(true),
              starts_at: fc.constant(iso(NOW - DAY)),
              ends_at: fc.constant(null),
              targets,
              tiers: percentTiers(condition_mode, percent),
            }),
          ),
          { minLength: 1, maxLength: 3 },
        ),
      );
    const grown = (lines: CartLine[], index: number) => lines.map((line, at) => (at === index ? { ...line, quantity: line.quantity + 1 } : line));
    const scenario = (unitPrice: fc.Arbitrary<number>, percent: fc.Arbitrary<number>) =>
      fc
        .record({ cart: fc.array(cartLine(unitPrice), { minLength: 1, maxLength: 5 }), promos: percentPromos(percent) })
        .chain((value) => fc.record({ cart: fc.constant(value.cart), promos: fc.constant(value.promos), index: fc.integer({ min: 0, max: value.cart.length - 1 }) }));
    const lineTotal = (result: PricedCart, index: number) => cents(result.items[index]?.total ?? Number.NaN);

    it('exactly, when every discount is a whole number of cents (whole-currency prices, whole percentages)', () => {
      check(scenario(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 100 })), ({ cart: lines, promos: list, index }) => {
        const quantity = lines[index]!.quantity;
        const before = lineTotal(priceCart({ cart: lines, promos: list, coupon: null, now: NOW }), index);
        const after = lineTotal(priceCart({ cart: grown(lines, index), promos: list, coupon: null, now: NOW }), index);
        // after / (q + 1) <= before / q, in integers.
        expect(after * quantity).toBeLessThanOrEqual(before * (quantity + 1));
      });
    });

    it('within the rounding of each line (half a cent either way) for any whole-cent prices and percentages', () => {
      check(scenario(centsAmount(), percentage), ({ cart: lines, promos: list, index }) => {
        const q = lines[index]!.quantity;
        const before = lineTotal(priceCart({ cart: lines, promos: list, coupon: null, now: NOW }), index);
        const after = lineTotal(priceCart({ cart: grown(lines, index), promos: list, coupon: null, now: NOW }), index);
        // Exact per-unit prices never rise; each rounded line total is within 0.5 cent of its exact value, so
        // after / (q + 1) <= before / q + 0.5 / q + 0.5 / (q + 1); times 2q(q + 1):
        expect(2 * q * after).toBeLessThanOrEqual(2 * (q + 1) * before + (q + 1) + q);
      });
    });
  });

  describe('time', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('pricing is deterministic, leaves its input untouched and reads no wall clock', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      check(pricingInput, (input) => {
        const copy = structuredClone(input);
        vi.setSystemTime(0);
        const inTheSeventies = priceCart(input);
        // A clock read would change which generated promos are in force: they sit around NOW.
        vi.setSystemTime(NOW + 365 * DAY);
        const nextYear = priceCart(input);
        expect(nextYear).toEqual(inTheSeventies);
        expect(input).toEqual(copy);
      });
    });

    it('a promo outside its window (disabled, not started, ended) changes nothing', () => {
      const outOfWindow = fc.oneof(
        promoWithoutId.map((promo) => ({ ...promo, enabled: false, starts_at: iso(NOW - DAY), ends_at: null })),
        fc.integer({ min: 1, max: 30 * DAY }).chain((offset) => promoWithoutId.map((promo) => ({ ...promo, enabled: true, starts_at: iso(NOW + offset), ends_at: null }))),
        fc
          .integer({ min: 0, max: 30 * DAY })
          .chain((offset) => promoWithoutId.map((promo) => ({ ...promo, enabled: true, starts_at: iso(NOW - 60 * DAY), ends_at: iso(NOW - offset) }))),
      );
      const scenario = fc.record({ input: pricingInput, extra: outOfWindow, at: fc.nat() });
      check(scenario, ({ input, extra, at }) => {
        const id = Math.max(0, ...input.promos.map((promo) => promo.id)) + 1;
        const position = at % (input.promos.length + 1);
        const withExtra = [...input.promos.slice(0, position), { ...extra, id }, ...input.promos.slice(position)];
        expect(priceCart({ ...input, promos: withExtra })).toEqual(priceCart(input));
      });
    });
  });
});
