import type { CouponCheck } from '#lib/domain/pricing.ts';
import { couponClientLimit, couponRefused, couponSoldOut, type HttpError } from '#lib/errors.ts';
import type { Discount, DiscountListQuery, DiscountStatus } from '#lib/schemas/discount.ts';

/*
 * The coupon rules that need no I/O: a coupon's computed status, the rules that tie its fields
 * together, the list filters, and whether an order may use it. Time is a
 * parameter (`now`, epoch milliseconds), so the status and the expiry check are testable.
 * What a coupon takes off is the pricing engine's (lib/domain/pricing.ts, rule 6).
 */

/** The coupon as stored (the discount item without the computed status), with the revision orders condition on. */
export type CouponRecord = Omit<Discount, 'status'> & { revision: number };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** `EXPIRED` wins over `SOLD_OUT`: an expired coupon cannot be used whatever its count. */
export function discountStatus(discount: Pick<Discount, 'expires_in' | 'max_uses' | 'uses'>, now: number): DiscountStatus {
  if (discount.expires_in !== null && Date.parse(discount.expires_in) <= now) return 'EXPIRED';
  if (discount.max_uses !== null && discount.uses >= discount.max_uses) return 'SOLD_OUT';
  return 'ACTIVE';
}

/** The response shape of a stored coupon at `now`. */
export function withStatus<T extends Pick<Discount, 'expires_in' | 'max_uses' | 'uses'>>(stored: T, now: number): T & { status: DiscountStatus } {
  return { ...stored, status: discountStatus(stored, now) };
}

/** The rules that span fields, held by a creation and by the merged result of a PATCH. */
export function discountViolation(discount: Pick<Discount, 'type' | 'value' | 'restricted_to' | 'restricted_to_criteria'>): { message: string; field: string } | undefined {
  if (discount.type === 'PERCENTAGE' && discount.value > 100) {
    return { message: 'value of a PERCENTAGE discount must be at most 100', field: 'value' };
  }
  if (discount.restricted_to !== null && discount.restricted_to_criteria === null) {
    return { message: 'restricted_to_criteria (CLIENT_EMAIL or CLIENT_IDENTIFIER) is required when restricted_to is set', field: 'restricted_to_criteria' };
  }
  if (discount.restricted_to !== null && discount.restricted_to_criteria === 'CLIENT_EMAIL') {
    const index = discount.restricted_to.findIndex((value) => !EMAIL.test(value));
    if (index >= 0) return { message: 'restricted_to entries must be e-mail addresses when restricted_to_criteria is CLIENT_EMAIL', field: `restricted_to.${index}` };
  }
  return undefined;
}

/**
 * The list filters applied after the read. `restricted_to` compares case-insensitively for
 * every criteria: e-mail addresses are matched that way in practice, and for identifiers a
 * search that finds one coupon too many is safer than one that hides it.
 */
export function discountMatches(discount: Discount, filters: Pick<DiscountListQuery, 'status' | 'restricted_to'>): boolean {
  if (filters.status && discount.status !== filters.status) return false;
  const wanted = filters.restricted_to?.toLowerCase();
  if (wanted && !(discount.restricted_to ?? []).some((value) => value.toLowerCase() === wanted)) return false;
  return true;
}

export interface CouponUse {
  /** null when the caller did not say (a quote may leave the client out). */
  client_identifier: string | null;
  client_email: string | null;
  /** Uses of this coupon by this client so far, under the coupon's `limit_criteria`. */
  clientUses: number;
  now: number;
}

/**
 * The 422 of the first rule the coupon breaks before any price is known, in the order a buyer
 * can act on: expired, sold out, not for this buyer, used too often by this buyer; undefined
 * when it may be priced. A restricted coupon needs the value it is restricted by: without it
 * (a quote without client_email) it is refused rather than shown at a price the order might not
 * get. The transaction re-checks the counts (`uses`, the per-client count) atomically; this
 * gives the clear message without a write.
 */
export function couponRefusal(coupon: CouponRecord, use: CouponUse): HttpError | undefined {
  if (coupon.expires_in !== null && Date.parse(coupon.expires_in) <= use.now) {
    return couponRefused(`Coupon ${coupon.coupon} has expired`, 'COUPON_EXPIRED');
  }
  if (coupon.max_uses !== null && coupon.uses >= coupon.max_uses) return couponSoldOut(coupon.coupon);
  if (coupon.restricted_to !== null) {
    const who = coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? 'client_email' : 'client_identifier';
    const value = (coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? use.client_email : use.client_identifier)?.toLowerCase();
    if (value === undefined) return couponRefused(`Coupon ${coupon.coupon} is restricted: send ${who} to use it`, 'COUPON_RESTRICTED');
    if (!coupon.restricted_to.some((allowed) => allowed.toLowerCase() === value)) {
      return couponRefused(`Coupon ${coupon.coupon} is not available to this ${who}`, 'COUPON_RESTRICTED');
    }
  }
  if (coupon.max_uses_per_client !== null && use.clientUses >= coupon.max_uses_per_client) return couponClientLimit(coupon);
  return undefined;
}

/** The two coupon rules that need prices (rule 6 of section 8), read from the pricing engine's `coupon_check`. */
export function couponPriceRefusal(coupon: Pick<CouponRecord, 'coupon' | 'min_price'>, check: CouponCheck): HttpError | undefined {
  if (!check.covers_any_line) return couponRefused(`Coupon ${coupon.coupon} does not apply to any package of this order`, 'COUPON_NOT_APPLICABLE');
  if (!check.meets_min_price) {
    return couponRefused(`Coupon ${coupon.coupon} requires an amount after promotions of at least ${coupon.min_price}`, 'COUPON_MIN_PRICE');
  }
  return undefined;
}
