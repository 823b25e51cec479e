import type { Discount } from '#lib/schemas/discount.ts';
import type { Promo, PromoTier, Target } from '#lib/schemas/promo.ts';

/*
 * What the pricing engine (lib/domain/pricing.ts) takes and gives. Amounts are numbers in currency
 * units as the API shows them (12.34); the engine computes in whole cents inside.
 */

/** One line of the cart, in the cart's order (a package may appear on several lines). */
export interface CartLine {
  package_id: number;
  name: string;
  /** Whole units, at least 1. */
  quantity: number;
  /** The package's price. */
  unit_price: number;
  /** Per unit: the summed `price` of the SELECT options chosen for variables that apply to the package (the caller sums them). */
  options_price: number;
  category_id: number | null;
}

/** A promo tier as the engine reads it; a PromoTier of lib/schemas/promo.ts is one. */
export type PricingTier = Pick<PromoTier, 'min_amount' | 'reward_type' | 'reward_value' | 'reward_quantity'> & { targets: readonly Target[] };

/** A promo as the engine reads it; the Promo resource of lib/schemas/promo.ts is one. */
export type PricingPromo = Pick<Promo, 'id' | 'name' | 'type' | 'condition_mode' | 'enabled' | 'starts_at' | 'ends_at'> & {
  targets: readonly Target[];
  tiers: readonly PricingTier[];
};

/** The coupon the buyer gave, already found and judged usable on every rule but the two that need prices. */
export type PricingCoupon = Pick<Discount, 'coupon' | 'type' | 'value' | 'min_price'> & { applies_to: readonly number[] };

export interface PricingInput {
  cart: readonly CartLine[];
  /** The store's promos, in force or not: the engine keeps those in force at `now`. */
  promos: readonly PricingPromo[];
  coupon: PricingCoupon | null;
  /** Epoch milliseconds; the engine reads no clock. */
  now: number;
}

export interface PricedLine {
  package_id: number;
  name: string;
  quantity: number;
  unit_price: number;
  options_price: number;
  /** (unit_price + options_price) x quantity, rounded to the cent. */
  subtotal: number;
  promo_discount: number;
  /** The promo that gave `promo_discount`; null when no promo takes anything off this line. */
  promo_id: number | null;
  coupon_discount: number;
  /** subtotal - promo_discount - coupon_discount, never below 0. */
  total: number;
}

export interface NextTier {
  promo_id: number;
  name: string;
  /** Units (QUANTITY) or currency (VALUE, whole cents) the cart still needs to reach the tier. */
  missing: number;
  reward_type: PromoTier['reward_type'];
  reward_value: number | null;
}

/**
 * What the coupon rules (lib/domain/coupon.ts) need to decide the two checks that depend on
 * prices (rule 6), and what the engine did with the coupon.
 */
export interface CouponCheck {
  coupon: string;
  /** `applies_to` is [-1] or names a package on some line: false is COUPON_NOT_APPLICABLE. */
  covers_any_line: boolean;
  /** Summed amounts after promos of the lines the coupon covers (what a VALUE coupon is capped at). */
  covered_after_promos: number;
  /** `min_price` null, or at most the order's `amount_after_promos`: false is COUPON_MIN_PRICE. */
  meets_min_price: boolean;
  /** Both checks pass: the coupon is priced into the lines. Otherwise every coupon_discount is 0. */
  applied: boolean;
}

export interface PricedCart {
  items: PricedLine[];
  subtotal: number;
  promo_discount: number;
  coupon_discount: number;
  /** promo_discount + coupon_discount */
  discount: number;
  total: number;
  /** The coupon's code when it was applied, else null. */
  coupon: string | null;
  next_tiers: NextTier[];
  /** subtotal - promo_discount: the order's amount after promos, which `min_price` is compared with. */
  amount_after_promos: number;
  /** null when no coupon was given. */
  coupon_check: CouponCheck | null;
}
