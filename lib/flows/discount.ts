import { getStoredDiscount, insertDiscount, listStoredDiscounts, storedDiscountPage, writeDiscountPatch, type DiscountFields } from '#lib/db/discount.ts';
import { retrying } from '#lib/db/transact.ts';
import { discountMatches, discountViolation, withStatus } from '#lib/domain/coupon.ts';
import { unprocessable } from '#lib/errors.ts';
import { EVERY_PACKAGE, type Discount, type DiscountCreate, type DiscountListQuery, type DiscountPatch } from '#lib/schemas/discount.ts';
import { currentTimeMs } from '#lib/clock.ts';

/**
 * Discount coupons as the operator manages them: the stored coupon (lib/db/discount.ts) judged
 * by the coupon rules (lib/domain/coupon.ts), and answered with its `status` at the time of the
 * request. Calls: those of the access patterns used (creation 2, get 1, unfiltered page 2, filtered list 1 per MB,
 * update 2).
 */
function assertValid(discount: DiscountFields): void {
  const violation = discountViolation(discount);
  if (violation) throw unprocessable(violation.message, violation.field);
}

export async function createDiscount(storeId: number, input: DiscountCreate): Promise<Discount> {
  const fields: DiscountFields = {
    coupon: input.coupon,
    type: input.type,
    value: input.value,
    applies_to: input.applies_to ?? [EVERY_PACKAGE],
    max_uses: input.max_uses ?? null,
    max_uses_per_client: input.max_uses_per_client ?? null,
    expires_in: input.expires_in ?? null,
    min_price: input.min_price ?? null,
    limit_criteria: input.limit_criteria ?? 'CLIENT_IDENTIFIER',
    restricted_to_criteria: input.restricted_to_criteria ?? null,
    restricted_to: input.restricted_to ?? null,
  };
  assertValid(fields);
  return withStatus(await insertDiscount(storeId, fields), currentTimeMs());
}

export async function getDiscount(storeId: number, discountId: number): Promise<Discount> {
  return withStatus(await getStoredDiscount(storeId, discountId), currentTimeMs());
}

type DiscountFilters = Pick<DiscountListQuery, 'status' | 'coupon' | 'restricted_to'>;

/**
 * A page of the discounts and the total of the (filtered) list. Unfiltered: the counted list
 * (lib/db/list-count.ts). Filtered: every candidate is read and judged (the filters depend on
 * the clock, on `uses` or on a list: lib/db/discount.ts), then the page cut; in id order whichever
 * query served it (the code index returns code order).
 */
export async function discountPage(storeId: number, filters: DiscountFilters, page: number, limit: number): Promise<{ total: number; data: Discount[] }> {
  const now = currentTimeMs();
  if (!filters.status && !filters.coupon && !filters.restricted_to) {
    const stored = await storedDiscountPage(storeId, page, limit);
    return { total: stored.total, data: stored.data.map((discount) => withStatus(discount, now)) };
  }
  const matches = (await listStoredDiscounts(storeId, filters.coupon))
    .map((stored) => withStatus(stored, now))
    .filter((discount) => discountMatches(discount, filters))
    .sort((a, b) => a.id - b.id);
  return { total: matches.length, data: matches.slice((page - 1) * limit, page * limit) };
}

/** The merged discount is judged by the creation rules; a write that finds it changed reads again. */
export function updateDiscount(storeId: number, discountId: number, patch: DiscountPatch): Promise<Discount> {
  return retrying(async () => {
    const current = await getStoredDiscount(storeId, discountId);
    const merged = { ...current };
    for (const [name, value] of Object.entries(patch)) if (value !== undefined) Object.assign(merged, { [name]: value });
    assertValid(merged);
    return withStatus(await writeDiscountPatch(storeId, current, patch, merged), currentTimeMs());
  });
}
