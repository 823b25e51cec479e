import {
  ceilCents,
  ceilWhole,
  compare,
  difference,
  exact,
  fromCents,
  fromCentsToAmount,
  percentOf,
  shareInProportion,
  smaller,
  smallerCents,
  sumCents,
  toCents,
  whole,
  type Exact,
} from '#lib/domain/pricing-money.ts';
import type { CartLine, NextTier, PricingPromo, PricingTier } from '#lib/domain/pricing-types.ts';
import type { Target } from '#lib/schemas/promo.ts';

/*
 * Rules 2 to 4 and 7 of section 8: which promos count, what each one would take off each line,
 * and what the cart still needs for the next tier. Choosing among the promos of a line (rule 5)
 * is lib/domain/pricing.ts's job. See that module's header for the interpretations.
 */

/** A cart line with its exact unit price (package + options) and its rounded subtotal in cents. */
export interface LineAmounts {
  line: CartLine;
  /** unit_price + options_price, exact: "the whole unit price" of rule 4. */
  unitPrice: Exact;
  subtotalCents: bigint;
}

/** Rule 2: enabled, `starts_at <= now`, `ends_at` null or later than now (an unreadable date never is). */
export function promoInForce(promo: Pick<PricingPromo, 'enabled' | 'starts_at' | 'ends_at'>, now: number): boolean {
  return promo.enabled && Date.parse(promo.starts_at) <= now && (promo.ends_at === null || Date.parse(promo.ends_at) > now);
}

/** Rule 2: STORE every line, CATEGORY the lines of packages in it, PRODUCT the line of that package (or variation) id. */
export function targetMatches(target: Target, line: CartLine): boolean {
  switch (target.type) {
    case 'STORE':
      return true;
    case 'CATEGORY':
      return line.category_id !== null && line.category_id === target.id;
    case 'PRODUCT':
      return line.package_id === target.id;
  }
}

const matchedBy = (targets: readonly Target[], line: CartLine) => targets.some((target) => targetMatches(target, line));

/** Rule 2: units (QUANTITY) or summed subtotals before any discount (VALUE) of the lines the promo's targets match. */
function measureOf(promo: PricingPromo, lines: readonly LineAmounts[]): Exact {
  const matched = lines.filter(({ line }) => matchedBy(promo.targets, line));
  return promo.condition_mode === 'QUANTITY'
    ? whole(matched.reduce((units, { line }) => units + line.quantity, 0))
    : fromCents(sumCents(matched.map(({ subtotalCents }) => subtotalCents)));
}

const byMinimum = (tiers: readonly PricingTier[]) => [...tiers].sort((a, b) => compare(exact(a.min_amount), exact(b.min_amount)));

/** Rule 3: the tier with the largest `min_amount` not above the measure, if any. */
const reachedTier = (tiers: readonly PricingTier[], measure: Exact) => byMinimum(tiers).findLast((tier) => compare(exact(tier.min_amount), measure) <= 0);

/** Rule 7: the tier with the smallest `min_amount` above the measure, if any. */
const nextTierAbove = (tiers: readonly PricingTier[], measure: Exact) => byMinimum(tiers).find((tier) => compare(exact(tier.min_amount), measure) > 0);

/** A percentage as an exact number, capped at 100 (a line never goes below 0). */
const percentage = (tier: PricingTier) => smaller(exact(tier.reward_value ?? 0), whole(100));

/** Rule 3: what a PROGRESSIVE promo's reached tier takes off each line (0 for the lines it does not match). */
function progressiveDiscounts(promo: PricingPromo, tier: PricingTier, lines: readonly LineAmounts[]): bigint[] {
  const matched = lines.map(({ line }) => matchedBy(promo.targets, line));
  const weights = lines.map(({ subtotalCents }, index) => (matched[index] ? subtotalCents : 0n));
  switch (tier.reward_type) {
    case 'PERCENTAGE':
      return weights.map((subtotal) => toCents(percentOf(fromCents(subtotal), percentage(tier))));
    case 'VALUE': {
      // Shared among the matched lines only, so the remainder lands on the last matched line.
      const matchedIndexes = weights.flatMap((_, index) => (matched[index] ? [index] : []));
      const shares = shareInProportion(
        toCents(exact(tier.reward_value ?? 0)),
        matchedIndexes.map((index) => weights[index] ?? 0n),
      );
      const discounts = weights.map(() => 0n);
      matchedIndexes.forEach((lineIndex, shareIndex) => (discounts[lineIndex] = shares[shareIndex] ?? 0n));
      return discounts;
    }
    case 'FREE':
      // Refused for PROGRESSIVE by lib/domain/promo.ts; read as its name says, should one be stored.
      return weights;
  }
}

/** Rule 4: the discount on `units` units of a reward line, before rounding. */
function rewardOnUnits(tier: PricingTier, unitPrice: Exact, units: bigint): Exact {
  const perUnit =
    tier.reward_type === 'FREE' ? unitPrice : tier.reward_type === 'PERCENTAGE' ? percentOf(unitPrice, percentage(tier)) : smaller(exact(tier.reward_value ?? 0), unitPrice);
  return { num: perUnit.num * units, den: perUnit.den };
}

/**
 * Rule 4: once per order, each reward product in the cart gets up to `reward_quantity` units
 * discounted. When a product sits on several lines, its units are taken in cart order.
 */
function buyXPayYDiscounts(tier: PricingTier, lines: readonly LineAmounts[]): bigint[] {
  const unitsLeft = new Map<number, bigint>();
  return lines.map(({ line, unitPrice }) => {
    if (!matchedBy(tier.targets, line)) return 0n;
    const left = unitsLeft.get(line.package_id) ?? BigInt(tier.reward_quantity ?? 0);
    const units = smallerCents(left, BigInt(line.quantity));
    unitsLeft.set(line.package_id, left - units);
    return toCents(rewardOnUnits(tier, unitPrice, units));
  });
}

/** What the promo would take off each line (cents, in cart order): all zeros when it is not in force or no tier is reached. */
export function promoDiscounts(promo: PricingPromo, lines: readonly LineAmounts[], now: number): bigint[] {
  const tier = promoInForce(promo, now) ? reachedTier(promo.tiers, measureOf(promo, lines)) : undefined;
  if (!tier) return lines.map(() => 0n);
  return promo.type === 'PROGRESSIVE' ? progressiveDiscounts(promo, tier, lines) : buyXPayYDiscounts(tier, lines);
}

/**
 * Rule 7, for one promo: the next tier of a PROGRESSIVE promo in force that matches a line of the
 * cart, and what the cart still needs to reach it; null when there is none. Under QUANTITY the
 * need is whole units; under VALUE it is rounded UP to the cent, because the measure moves in
 * whole cents: a tier at 10.004 needs 0.01 more from a 10.00 cart, never "0.00".
 */
export function nextTierOf(promo: PricingPromo, lines: readonly LineAmounts[], now: number): { tier: NextTier; share: Exact } | null {
  if (promo.type !== 'PROGRESSIVE' || !promoInForce(promo, now)) return null;
  if (!lines.some(({ line }) => matchedBy(promo.targets, line))) return null;
  const measure = measureOf(promo, lines);
  const next = nextTierAbove(promo.tiers, measure);
  if (!next) return null;
  const minimum = exact(next.min_amount);
  const gap = difference(minimum, measure);
  const missing = promo.condition_mode === 'QUANTITY' ? Number(ceilWhole(gap)) : fromCentsToAmount(ceilCents(gap));
  // The share of the next tier's min_amount still missing (min_amount is above the measure, so above 0).
  const share = { num: gap.num * minimum.den, den: gap.den * minimum.num };
  return { tier: { promo_id: promo.id, name: promo.name, missing, reward_type: next.reward_type, reward_value: next.reward_value }, share };
}

/** Rule 7 bounds the list: this many entries at most, the nearest first. */
export const NEXT_TIERS_MAX = 10;

/** Rule 7 for the cart: the promos' next tiers, the smallest share still missing first (ties: the lowest promo id), at most NEXT_TIERS_MAX. */
export function nextTiers(promos: readonly PricingPromo[], lines: readonly LineAmounts[], now: number): NextTier[] {
  return promos
    .flatMap((promo) => nextTierOf(promo, lines, now) ?? [])
    .sort((a, b) => compare(a.share, b.share) || a.tier.promo_id - b.tier.promo_id)
    .slice(0, NEXT_TIERS_MAX)
    .map(({ tier }) => tier);
}
