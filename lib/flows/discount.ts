import {
  getStoredDiscount,
  getStoredDiscounts,
  insertDiscount,
  listStoredDiscounts,
  readDiscountStatusSnapshot,
  storeDiscountStatusSnapshot,
  storedDiscountPage,
  writeDiscountPatch,
  type DiscountFields,
  type DiscountStatusSnapshot,
  type StoredDiscount,
} from '#lib/db/discount.ts';
import { retrying } from '#lib/db/transact.ts';
import { discountMatches, discountStatus, discountViolation, withStatus } from '#lib/domain/coupon.ts';
import { unprocessable } from '#lib/errors.ts';
import { DISCOUNT_STATUSES, EVERY_PACKAGE, type Discount, type DiscountCreate, type DiscountListQuery, type DiscountPatch, type DiscountStatus } from '#lib/schemas/discount.ts';
import { currentTimeMs } from '#lib/clock.ts';

/**
 * Discount coupons as the operator manages them: the stored coupon (lib/db/discount.ts) judged
 * by the coupon rules (lib/domain/coupon.ts), and answered with its `status` at the time of the
 * request. Calls: those of the access patterns used (creation 2, get 1, unfiltered page 2, a page by
 * status alone 2 (the first after a write or a change of the clock: 1 per MB + 2), other filters 1
 * per MB, update 2).
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
  if (filters.status && !filters.coupon && !filters.restricted_to) return statusPage(storeId, filters.status, page, limit, now);
  const matches = (await listStoredDiscounts(storeId, filters.coupon))
    .map((stored) => withStatus(stored, now))
    .filter((discount) => discountMatches(discount, filters))
    .sort((a, b) => a.id - b.id);
  return { total: matches.length, data: matches.slice((page - 1) * limit, page * limit) };
}

/** The ids of each status at `now`, in id order, and until when they hold: the next expiry still ahead (null: none, only a write changes them). */
export function statusSnapshotOf(discounts: readonly StoredDiscount[], now: number): Pick<DiscountStatusSnapshot, 'ids' | 'until'> {
  const ids = Object.fromEntries(DISCOUNT_STATUSES.map((status) => [status, [] as number[]])) as Record<DiscountStatus, number[]>;
  let until: number | null = null;
  for (const discount of [...discounts].sort((a, b) => a.id - b.id)) {
    ids[discountStatus(discount, now)].push(discount.id);
    const expiry = discount.expires_in === null ? null : Date.parse(discount.expires_in);
    if (expiry !== null && expiry > now && (until === null || expiry < until)) until = expiry;
  }
  return { ids, until: until === null ? null : new Date(until).toISOString() };
}

/**
 * A page of the discounts of one status and its total, from the status snapshot
 * (lib/db/discount.ts): its ids and a BatchGet of the page's; computed again, from every coupon,
 * when a write or the clock made it old. Each discount shows its status at `now`.
 */
async function statusPage(storeId: number, status: DiscountStatus, page: number, limit: number, now: number): Promise<{ total: number; data: Discount[] }> {
  const start = (page - 1) * limit;
  const snapshot = await readDiscountStatusSnapshot(storeId);
  const holds = snapshot.of === snapshot.version && snapshot.at !== null && Date.parse(snapshot.at) <= now && (snapshot.until === null || Date.parse(snapshot.until) > now);
  if (holds) {
    const ids = snapshot.ids[status];
    const shown = await getStoredDiscounts(storeId, ids.slice(start, start + limit));
    return { total: ids.length, data: shown.map((discount) => withStatus(discount, now)) };
  }
  const all = await listStoredDiscounts(storeId, undefined);
  const computed = statusSnapshotOf(all, now);
  // A write meanwhile wins (nothing stored): this answer is still the one at `now`, the next read computes again.
  await storeDiscountStatusSnapshot(storeId, { ...computed, at: new Date(now).toISOString(), version: snapshot.version });
  const byId = new Map(all.map((discount) => [discount.id, discount]));
  const ids = computed.ids[status];
  return { total: ids.length, data: ids.slice(start, start + limit).map((id) => withStatus(byId.get(id)!, now)) };
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
