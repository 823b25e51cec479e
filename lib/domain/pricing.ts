import {
  compare,
  exact,
  fromCents,
  fromCentsToAmount,
  percentOf,
  product,
  shareInProportion,
  smaller,
  smallerCents,
  sum,
  sumCents,
  toCents,
  whole,
  ZERO,
  type Exact,
} from '#lib/domain/pricing-money.ts';
import { nextTiers, promoDiscounts, type LineAmounts } from '#lib/domain/pricing-promos.ts';
import type { CartLine, CouponCheck, PricedCart, PricingCoupon, PricingInput } from '#lib/domain/pricing-types.ts';
import { EVERY_PACKAGE } from '#lib/schemas/discount.ts';

export { promoInForce, targetMatches } from '#lib/domain/pricing-promos.ts';
export type * from '#lib/domain/pricing-types.ts';

/**
 * The pricing engine of section 8 of extensions.md ("Storefront and pricing"): one pure function
 * that the quote, the checkout and `POST /app/order` all call, so the same cart gets the same price
 * everywhere. No I/O, no clock: `now` is a parameter.
 *
 * Contract
 * - `priceCart({cart, promos, coupon, now})` -> PricedCart (lib/domain/pricing-types.ts): the
 *   Quote's items and totals, `next_tiers`, plus `amount_after_promos` and `coupon_check`.
 * - The caller sums each line's SELECT option prices into `options_price` (per unit), passes every
 *   promo of the store (the engine keeps those in force at `now`) and the coupon only once the rules
 *   that need no price have passed (exists, not expired, not sold out, restriction list, per-client
 *   uses).
 * - The engine throws nothing about the coupon. The two coupon rules that need prices are the
 *   coupon module's to throw (lib/domain/coupon.ts): `coupon_check.covers_any_line` false is
 *   COUPON_NOT_APPLICABLE, `coupon_check.meets_min_price` false is COUPON_MIN_PRICE (compared with
 *   `amount_after_promos`, rule 6). A coupon that fails either is not priced: every
 *   `coupon_discount` is 0 and `coupon` is null, so a caller that only reports never shows a price
 *   the order could not get.
 * - Inputs the API validates (finite amounts >= 0, whole quantities >= 1) are asserted: a breach is
 *   a RangeError (a bug of the caller), never a 422.
 *
 * Arithmetic: amounts are read as the exact decimals they were written as and computed as exact
 * fractions; every rounded amount is a whole number of cents (BigInt). So 0.1 + 0.2 is 0.30, and 50%
 * of 4.35 is 2.18 (halves away from zero), where doubles give 2.17. Totals are sums of the rounded
 * lines, never rounded again. See lib/domain/pricing-money.ts.
 *
 * Interpretations where section 8 leaves room
 * - Rule 1: a line's subtotal is (unit_price + options_price) x quantity rounded once, on the line,
 *   not the unit price rounded and then multiplied (3 x 1.145 = 3.435 -> 3.44).
 * - "The unit price" of rule 4 is the whole unit price, unit_price + options_price, as the rule's
 *   own parenthesis says; a VALUE reward is at most that per unit. A line's reward (k units) is
 *   computed exactly and rounded once for the line.
 * - A PERCENTAGE tier of 100 takes a PROGRESSIVE line to 0 and acts as FREE on BUY_X_PAY_Y units;
 *   percentages above 100 (refused on creation) are read as 100, so no line goes below 0.
 * - A VALUE condition_mode measures the matched lines' subtotals (options included) before any
 *   discount: a promo never counts another promo's or the coupon's discount.
 * - A currency reward or coupon value with fractions of a cent is rounded to the cent before it is
 *   shared. A PROGRESSIVE VALUE reward is shared among every matched line; when a line then takes
 *   another promo's larger discount (rule 5), this promo's share on it is not moved to other lines.
 * - Sharing (rule 3 and 6): each share rounded, the last line takes the remainder; when that
 *   remainder would put the last line below 0 or above its own amount (only possible with three
 *   lines or more and cent-sized amounts), the excess spills backwards (shareInProportion).
 * - BUY_X_PAY_Y: its single tier applies once the measure reaches `min_amount` (with several tiers,
 *   as PROGRESSIVE: the largest reached). "Once per order": each reward product gets at most
 *   `reward_quantity` units however far the measure goes past the minimum; a product on several
 *   lines takes them in cart order. Reward units count in the measure ("buy 2 of A, get 1 of A
 *   free" with 2 A in the cart gives 1 A free).
 * - Rule 5: a promo that takes 0 off a line does not name it: `promo_id` is null then.
 * - Rule 6: the coupon covers a line when `applies_to` is [-1] or holds its package id; "applies"
 *   means it covers at least one line, whatever the line's amount after promos. `min_price` is met
 *   when the order's amount after promos (every line, not only the covered ones) is at least it.
 *   PERCENTAGE: each covered line loses value% of its amount after promos, rounded per line. VALUE:
 *   min(value, the covered lines' amount after promos), shared in proportion to those amounts.
 * - Rule 7: the nearest first (the smallest exact share of the next tier's min_amount still
 *   missing; ties: the lowest promo id), at most 10; `missing` is whole units (QUANTITY) or currency
 *   rounded UP to the cent (VALUE), because the measure moves in whole cents (see nextTierOf).
 * - Rule 8 (commissionOf): percent of the order's total, rounded to the cent, halves away from zero.
 */

function assertAmount(value: number, what: string): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${what} must be a finite amount >= 0, not ${value}`);
}

function lineAmounts(line: CartLine, index: number): LineAmounts {
  if (!Number.isSafeInteger(line.quantity) || line.quantity < 1) throw new RangeError(`cart.${index}.quantity must be a whole number >= 1, not ${line.quantity}`);
  assertAmount(line.unit_price, `cart.${index}.unit_price`);
  assertAmount(line.options_price, `cart.${index}.options_price`);
  const unitPrice = sum(exact(line.unit_price), exact(line.options_price));
  return { line, unitPrice, subtotalCents: toCents(product(unitPrice, whole(line.quantity))) };
}

interface LinePromo {
  cents: bigint;
  promoId: number | null;
}

/** Rule 5: per line, the largest discount any promo gives (ties: the lowest promo id), at most the line's subtotal. */
function bestPromoPerLine(input: PricingInput, lines: readonly LineAmounts[]): LinePromo[] {
  const best: LinePromo[] = lines.map(() => ({ cents: 0n, promoId: null }));
  const byId = [...input.promos].sort((a, b) => a.id - b.id);
  for (const promo of byId) {
    promoDiscounts(promo, lines, input.now).forEach((cents, index) => {
      const current = best[index];
      if (current && cents > current.cents) best[index] = { cents, promoId: promo.id };
    });
  }
  return best.map((choice, index) => ({ ...choice, cents: smallerCents(choice.cents, lines[index]?.subtotalCents ?? 0n) }));
}

const covers = (coupon: PricingCoupon, line: CartLine) => coupon.applies_to.includes(EVERY_PACKAGE) || coupon.applies_to.includes(line.package_id);

interface CouponPricing {
  check: CouponCheck;
  cents: bigint[];
}

/** Rule 6: the coupon on the lines it covers, on their amounts after promos, priced only when it applies. */
function priceCoupon(coupon: PricingCoupon, lines: readonly LineAmounts[], afterPromos: readonly bigint[]): CouponPricing {
  assertAmount(coupon.value, 'coupon.value');
  const covered = lines.map(({ line }) => covers(coupon, line));
  const coveredAmounts = afterPromos.map((amount, index) => (covered[index] ? amount : 0n));
  const coveredCents = sumCents(coveredAmounts);
  const orderAfterPromos: Exact = fromCents(sumCents(afterPromos));
  const coversAnyLine = covered.some(Boolean);
  const meetsMinPrice = coupon.min_price === null || compare(exact(coupon.min_price), orderAfterPromos) <= 0;
  const applied = coversAnyLine && meetsMinPrice;
  const check: CouponCheck = {
    coupon: coupon.coupon,
    covers_any_line: coversAnyLine,
    covered_after_promos: fromCentsToAmount(coveredCents),
    meets_min_price: meetsMinPrice,
    applied,
  };
  if (!applied) return { check, cents: lines.map(() => 0n) };
  if (coupon.type === 'PERCENTAGE') {
    const percent = smaller(exact(coupon.value), whole(100));
    return { check, cents: coveredAmounts.map((amount) => toCents(percentOf(fromCents(amount), percent))) };
  }
  const coveredIndexes = covered.flatMap((isCovered, index) => (isCovered ? [index] : []));
  const shares = shareInProportion(
    toCents(exact(coupon.value)),
    coveredIndexes.map((index) => coveredAmounts[index] ?? 0n),
  );
  const cents = lines.map(() => 0n);
  coveredIndexes.forEach((lineIndex, shareIndex) => (cents[lineIndex] = shares[shareIndex] ?? 0n));
  return { check, cents };
}

/** Prices a cart by the rules of section 8 (see the header for the contract and interpretations). */
export function priceCart(input: PricingInput): PricedCart {
  const lines = input.cart.map(lineAmounts);
  const promos = bestPromoPerLine(input, lines);
  const afterPromos = lines.map(({ subtotalCents }, index) => subtotalCents - (promos[index]?.cents ?? 0n));
  const coupon = input.coupon ? priceCoupon(input.coupon, lines, afterPromos) : null;
  const couponCents = coupon?.cents ?? lines.map(() => 0n);

  const items = lines.map(({ line, subtotalCents }, index) => {
    const promo = promos[index] ?? { cents: 0n, promoId: null };
    const couponDiscount = couponCents[index] ?? 0n;
    return {
      package_id: line.package_id,
      name: line.name,
      quantity: line.quantity,
      unit_price: line.unit_price,
      options_price: line.options_price,
      subtotal: fromCentsToAmount(subtotalCents),
      promo_discount: fromCentsToAmount(promo.cents),
      promo_id: promo.promoId,
      coupon_discount: fromCentsToAmount(couponDiscount),
      total: fromCentsToAmount(subtotalCents - promo.cents - couponDiscount),
    };
  });

  const subtotal = sumCents(lines.map(({ subtotalCents }) => subtotalCents));
  const promoDiscount = sumCents(promos.map(({ cents }) => cents));
  const couponDiscount = sumCents(couponCents);
  return {
    items,
    subtotal: fromCentsToAmount(subtotal),
    promo_discount: fromCentsToAmount(promoDiscount),
    coupon_discount: fromCentsToAmount(couponDiscount),
    discount: fromCentsToAmount(promoDiscount + couponDiscount),
    total: fromCentsToAmount(subtotal - promoDiscount - couponDiscount),
    coupon: coupon?.check.applied ? coupon.check.coupon : null,
    next_tiers: nextTiers(input.promos, lines, input.now),
    amount_after_promos: fromCentsToAmount(subtotal - promoDiscount),
    coupon_check: coupon?.check ?? null,
  };
}

/** Rule 8: the affiliate's commission, `percent`% of the order's total, rounded to the cent (halves away from zero). */
export function commissionOf(total: number, percent: number): number {
  assertAmount(total, 'total');
  assertAmount(percent, 'percent');
  return fromCentsToAmount(toCents(percentOf(exact(total), exact(percent))));
}

/**
 * Amounts added exactly (0.1 + 0.2 is 0.3, not 0.30000000000000004): how a caller sums SELECT
 * option prices into `options_price`, so the engine reads the decimal the options were written as.
 */
export function addAmounts(amounts: readonly number[]): number {
  const total = amounts.reduce((acc, amount) => sum(acc, exact(amount)), ZERO);
  return Number(total.num) / Number(total.den);
}

/** An amount rounded to the cent, halves away from zero, without float drift (1.005 -> 1.01, 10.075 -> 10.08). */
export const roundToCents = (amount: number): number => fromCentsToAmount(toCents(exact(amount)));
