import { couponClientLimit, couponRefused, couponSoldOut } from '#lib/errors.ts';
import { roundCents, subtotalOf } from '#lib/domain/money.ts';
import { EVERY_PACKAGE, type Discount, type DiscountListQuery, type DiscountStatus } from '#lib/schemas/discount.ts';
import type { OrderPackageLine } from '#lib/schemas/order.ts';

/**
 * The coupon rules that need no I/O: a coupon's computed status, the rules that tie its fields
 * together, the list filters, and whether (and for how much) it applies to an order. Time is a
 * parameter (`now`, epoch milliseconds), so the status and the expiry check are testable.
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
export function discountViolation(
  discount: Pick<Discount, 'type' | 'value' | 'restricted_to' | 'restricted_to_criteria'>,
): { message: string; field: string } | undefined {
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
  client_identifier: string;
  client_email: string;
  /** Uses of this coupon by this client so far, under the coupon's `limit_criteria`. */
  clientUses: number;
  now: number;
}

/** The part of the subtotal the coupon applies to (`[-1]`: every package). */
export function coveredSubtotal(coupon: Pick<CouponRecord, 'applies_to'>, lines: readonly OrderPackageLine[]): number {
  const every = coupon.applies_to.includes(EVERY_PACKAGE);
  return subtotalOf(lines.filter((line) => every || coupon.applies_to.includes(line.package_id)));
}

/** PERCENTAGE: covered subtotal * value / 100; VALUE: value, at most the covered subtotal. */
export function discountAmount(coupon: Pick<CouponRecord, 'type' | 'value' | 'applies_to'>, lines: readonly OrderPackageLine[]): number {
  const covered = coveredSubtotal(coupon, lines);
  return roundCents(coupon.type === 'PERCENTAGE' ? (covered * coupon.value) / 100 : Math.min(coupon.value, covered));
}

/**
 * Throws the 422 of the first rule the coupon breaks for this order, in the order a buyer can
 * act on: expired, sold out, not for this buyer, not for these packages, order too small,
 * used too often by this buyer. The transaction re-checks the counts (`uses`, the per-client
 * count) atomically; this check gives the clear message without a write.
 */
export function assertCouponUsable(coupon: CouponRecord, lines: readonly OrderPackageLine[], use: CouponUse): void {
  if (coupon.expires_in !== null && Date.parse(coupon.expires_in) <= use.now) {
    throw couponRefused(`Coupon ${coupon.coupon} has expired`, 'COUPON_EXPIRED');
  }
  if (coupon.max_uses !== null && coupon.uses >= coupon.max_uses) throw couponSoldOut(coupon.coupon);
  if (coupon.restricted_to !== null) {
    const value = (coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? use.client_email : use.client_identifier).toLowerCase();
    if (!coupon.restricted_to.some((allowed) => allowed.toLowerCase() === value)) {
      const who = coupon.restricted_to_criteria === 'CLIENT_EMAIL' ? 'client_email' : 'client_identifier';
      throw couponRefused(`Coupon ${coupon.coupon} is not available to this ${who}`, 'COUPON_RESTRICTED');
    }
  }
  if (!coupon.applies_to.includes(EVERY_PACKAGE) && !lines.some((line) => coupon.applies_to.includes(line.package_id))) {
    throw couponRefused(`Coupon ${coupon.coupon} does not apply to any package of this order`, 'COUPON_NOT_APPLICABLE');
  }
  const subtotal = subtotalOf(lines);
  if (coupon.min_price !== null && subtotal < coupon.min_price) {
    throw couponRefused(`Coupon ${coupon.coupon} requires a subtotal of at least ${coupon.min_price}`, 'COUPON_MIN_PRICE');
  }
  if (coupon.max_uses_per_client !== null && use.clientUses >= coupon.max_uses_per_client) throw couponClientLimit(coupon);
}
