import { refCodeKey } from '#lib/db/affiliate.ts';
import { customerFromItem, customerKey } from '#lib/db/customer.ts';
import { couponUseKeys, couponUseOf } from '#lib/db/coupon-use.ts';
import { couponKey, discountIdOfCoupon, type StoredDiscount } from '#lib/db/discount.ts';
import { getMany, type Key } from '#lib/db/entity.ts';
import { packageFromItem, packageKey, type StoredPackage } from '#lib/db/package.ts';
import { listPromos } from '#lib/db/promo.ts';
import { quoteFromItem, quoteKey, type StoredQuote } from '#lib/db/quote.ts';
import { heldUnits, limitCounterKey } from '#lib/db/reservation.ts';
import { storeFromItem, storeKey } from '#lib/db/store.ts';
import { listVariables } from '#lib/db/variable.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import type { Promo } from '#lib/schemas/promo.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/**
 * Everything a cart is judged against (lib/domain/cart.ts), for `POST /app/order`, the quote and
 * the checkout alike. Calls exclude the credential lookup.
 *
 * | round | what                                                                                  | calls |
 * |-------|---------------------------------------------------------------------------------------|-------|
 * | 1     | Query `VARIABLE#` + Query `PROMO#` + BatchGet (the packages, the coupon's sentinel,    | 3     |
 * |       | the quote, the logged-in buyer, the ref_code's sentinel, a storefront's store item),  |       |
 * |       | in parallel                                                                           |       |
 * | 2     | only with a coupon, or a package with a per-customer limit and a known e-mail:         | 0-1   |
 * |       | BatchGet (the coupon and this client's two use counters, the limit counters)          |       |
 *
 * Round 2 needs round 1: the coupon's id comes from its sentinel, and which packages have a
 * limit (and, for a buyer who left client_email out, the e-mail) from the items read.
 */
type Criteria = (typeof LIMIT_CRITERIA)[number];

export interface CartReadRequest {
  packageIds: readonly number[];
  coupon: string | null;
  refCode: string | null;
  /** The customer's e-mail when the request gave it; a buyer's comes from `customerId` otherwise. */
  client_email: string | null;
  client_identifier: string | null;
  quoteId: string | null;
  customerId: number | null;
  /** A storefront cart: the store's settings are read too (its terms_url), in the same BatchGet. */
  storefront: boolean;
}

export interface CartRead {
  catalog: Map<number, StoredPackage>;
  variables: Variable[];
  promos: Promo[];
  /** null when no coupon was asked or its code names no coupon. */
  coupon: { record: StoredDiscount; clientUses: Record<Criteria, number> } | null;
  /** Units the customer holds per limited package; null when no e-mail is known. */
  held: Map<number, number> | null;
  quote: StoredQuote | undefined;
  customer: Customer | undefined;
  /** An affiliate or link of the store holds the ref_code asked for. */
  refCodeKnown: boolean;
  /** The store's terms a storefront buyer must accept; null without terms, or for an operator's order. */
  termsUrl: string | null;
}

export async function readCart(storeId: number, request: CartReadRequest): Promise<CartRead> {
  const packageKeys = request.packageIds.map((id) => packageKey(storeId, id));
  const extraKeys: { name: 'sentinel' | 'quote' | 'customer' | 'ref' | 'store'; key: Key }[] = [
    ...(request.coupon === null ? [] : [{ name: 'sentinel' as const, key: couponKey(storeId, request.coupon) }]),
    ...(request.quoteId === null ? [] : [{ name: 'quote' as const, key: quoteKey(storeId, request.quoteId) }]),
    ...(request.customerId === null ? [] : [{ name: 'customer' as const, key: customerKey(storeId, request.customerId) }]),
    ...(request.refCode === null ? [] : [{ name: 'ref' as const, key: refCodeKey(storeId, request.refCode) }]),
    ...(request.storefront ? [{ name: 'store' as const, key: storeKey(storeId) }] : []),
  ];
  const [items, variables, promos] = await Promise.all([getMany([...packageKeys, ...extraKeys.map(({ key }) => key)]), listVariables(storeId), listPromos(storeId)]);
  const extra = (name: string) => items[packageKeys.length + extraKeys.findIndex((entry) => entry.name === name)];
  const catalog = new Map<number, StoredPackage>();
  for (const item of items.slice(0, packageKeys.length)) {
    if (!item) continue;
    const pkg = packageFromItem(item);
    catalog.set(pkg.id, pkg);
  }
  const customerItem = request.customerId === null ? undefined : extra('customer');
  const storeItem = request.storefront ? extra('store') : undefined;
  const customer = customerItem ? customerFromItem(customerItem) : undefined;
  const email = request.client_email ?? customer?.email ?? null;
  const quoteItem = request.quoteId === null ? undefined : extra('quote');

  const sentinel = request.coupon === null ? undefined : extra('sentinel');
  const discountId = sentinel ? discountIdOfCoupon(sentinel) : undefined;
  const limited = email === null ? [] : [...catalog.values()].filter((pkg) => pkg.per_customer_limit !== null);
  const limitKeys = limited.map((pkg) => limitCounterKey(storeId, pkg.id, email!));
  const couponKeys = discountId === undefined ? [] : couponUseKeys(storeId, discountId, { client_email: email ?? '', client_identifier: request.client_identifier ?? '' });
  const second = couponKeys.length + limitKeys.length === 0 ? [] : await getMany([...couponKeys, ...limitKeys]);
  const coupon = discountId === undefined ? undefined : couponUseOf(second.slice(0, couponKeys.length));
  const counters = second.slice(couponKeys.length);
  const held = email === null ? null : new Map(limited.map((pkg, index) => [pkg.id, heldUnits(counters[index])]));
  return {
    catalog,
    variables,
    promos,
    coupon: coupon ?? null,
    held,
    quote: quoteItem ? quoteFromItem(quoteItem) : undefined,
    customer,
    refCodeKnown: request.refCode !== null && extra('ref') !== undefined,
    termsUrl: storeItem ? storeFromItem(storeItem).terms_url : null,
  };
}
