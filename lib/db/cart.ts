import { refCodeKey } from '#lib/db/affiliate.ts';
import { customerFromItem, customerKey } from '#lib/db/customer.ts';
import { couponUseKeys, couponUseOf } from '#lib/db/coupon-use.ts';
import { couponKey, discountIdOfCoupon, type StoredDiscount } from '#lib/db/discount.ts';
import { getMany, type Key } from '#lib/db/entity.ts';
import { packageFromItem, packageKey, type StoredPackage } from '#lib/db/package.ts';
import { getPromosByIds, listPromos, promoFromStored, promoKey } from '#lib/db/promo.ts';
import { quoteFromItem, quoteKey, type StoredQuote } from '#lib/db/quote.ts';
import { heldUnits, limitCounterKey } from '#lib/db/reservation.ts';
import { storeFromItem, storeKey } from '#lib/db/store.ts';
import { listVariables, variableFromItem, variableKey, variableNameKey, variableResponse } from '#lib/db/variable.ts';
import { referableKey } from '#lib/db/references.ts';
import { cartIndexFromItem, cartIndexKey, referrerIds } from '#lib/db/cart-index.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import type { Promo } from '#lib/schemas/promo.ts';
import type { Variable } from '#lib/schemas/variable.ts';

/**
 * Everything a cart is judged against (lib/domain/cart.ts), for `POST /app/order`, the quote and
 * the checkout alike: the promos and variables that can apply to the cart's packages, found from
 * the packages themselves (lib/db/cart-index.ts), never all of the store's. Calls exclude the
 * credential lookup.
 *
 * | round | what                                                                                  | calls |
 * |-------|---------------------------------------------------------------------------------------|-------|
 * | 1     | BatchGet: the packages (each with the ids of the promos and variables that refer to    | 1     |
 * |       | it), the store's cart index (store-wide promos, variables for every package), the     |       |
 * |       | coupon's sentinel, the quote, the logged-in buyer, the ref_code's sentinel, a          |       |
 * |       | storefront's store item                                                               |       |
 * | 2     | BatchGet of those promos and variables and the packages' categories (with their promo | 0-2   |
 * |       | ids), and for an order the name sentinels of the variables its commands name,       |       |
 * |       | eventually consistent as the lists were; beside it, only with a coupon or a           |       |
 * |       | limited package, BatchGet of the coupon, this client's use counters, the limit counters |     |
 * | 3     | only when a category names promos not read yet: BatchGet of them                      | 0-1   |
 *
 * A store whose promos and variables predate the index (no `indexed_at`), or a caller that does
 * not say which variable names the cart gives, reads them all instead (a Query each, in round 2),
 * and so does a cart giving a value for a variable that does not apply to it (the rules answer it
 * as they would from the whole list: a 422 when no such variable exists).
 * What the rules are handed may hold promos and variables that do not apply (the index is a
 * superset): the pricing and variable rules match targets and `applies_to` themselves, so the
 * prices are exactly those of the store's whole lists.
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
  /** The variable names the cart gives values for (order-level and per line); without them every variable is read. */
  variableNames?: readonly string[];
  /**
   * An order's read: the variable names its packages' command templates name (the domain's rule,
   * given by the flow), so that a placeholder naming a variable of the store that does not apply
   * to the cart still renders empty. Their name sentinels ride in the catalog's BatchGet.
   */
  commandNames?: (commands: readonly string[]) => string[];
}

export interface CartRead {
  catalog: Map<number, StoredPackage>;
  variables: Variable[];
  /** Lower-case names known to be variables of the store: those read, and those the commands name that exist. */
  variableNames: ReadonlySet<string>;
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

const distinct = <T>(values: Iterable<T>) => [...new Set(values)];
const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);

export async function readCart(storeId: number, request: CartReadRequest): Promise<CartRead> {
  const packageKeys = request.packageIds.map((id) => packageKey(storeId, id));
  const extraKeys: { name: 'sentinel' | 'quote' | 'customer' | 'ref' | 'store' | 'index'; key: Key }[] = [
    ...(request.coupon === null ? [] : [{ name: 'sentinel' as const, key: couponKey(storeId, request.coupon) }]),
    ...(request.quoteId === null ? [] : [{ name: 'quote' as const, key: quoteKey(storeId, request.quoteId) }]),
    ...(request.customerId === null ? [] : [{ name: 'customer' as const, key: customerKey(storeId, request.customerId) }]),
    ...(request.refCode === null ? [] : [{ name: 'ref' as const, key: refCodeKey(storeId, request.refCode) }]),
    ...(request.storefront ? [{ name: 'store' as const, key: storeKey(storeId) }] : []),
    { name: 'index' as const, key: cartIndexKey(storeId) },
  ];
  const items = await getMany([...packageKeys, ...extraKeys.map(({ key }) => key)]);
  const extra = (name: string) => items[packageKeys.length + extraKeys.findIndex((entry) => entry.name === name)];
  const catalog = new Map<number, StoredPackage>();
  const packageItems = items.slice(0, packageKeys.length).filter((item) => item !== undefined);
  for (const item of packageItems) {
    const pkg = packageFromItem(item);
    catalog.set(pkg.id, pkg);
  }
  const customerItem = request.customerId === null ? undefined : extra('customer');
  const storeItem = request.storefront ? extra('store') : undefined;
  const customer = customerItem ? customerFromItem(customerItem) : undefined;
  const email = request.client_email ?? customer?.email ?? null;
  const quoteItem = request.quoteId === null ? undefined : extra('quote');
  const index = cartIndexFromItem(extra('index'));

  const sentinel = request.coupon === null ? undefined : extra('sentinel');
  const discountId = sentinel ? discountIdOfCoupon(sentinel) : undefined;
  const limited = email === null ? [] : [...catalog.values()].filter((pkg) => pkg.per_customer_limit !== null);
  const limitKeys = limited.map((pkg) => limitCounterKey(storeId, pkg.id, email!));
  const couponKeys = discountId === undefined ? [] : couponUseKeys(storeId, discountId, { client_email: email ?? '', client_identifier: request.client_identifier ?? '' });

  // What the index says may apply: the packages' own promos and variables, the store-wide ones, the named variables, the categories to ask.
  const promoIds = index === null ? [] : distinct([...index.storePromoIds, ...packageItems.flatMap((item) => referrerIds(item, 'promo_ids'))]);
  const everyVariable = index === null || request.variableNames === undefined;
  const variableIds = everyVariable ? [] : distinct([...index.everyPackageVariableIds, ...packageItems.flatMap((item) => referrerIds(item, 'variable_ids'))]);
  const categoryIds = index === null ? [] : distinct([...catalog.values()].flatMap((pkg) => (pkg.category_id === null ? [] : [pkg.category_id])));
  const categoryKeys = categoryIds.map((id) => referableKey(storeId, ENTITY.CATEGORY, id));
  const promoKeys = promoIds.map((id) => promoKey(storeId, id));
  const variableKeys = variableIds.map((id) => variableKey(storeId, id));
  const namedInCommands =
    everyVariable || !request.commandNames
      ? []
      : distinct(request.commandNames([...catalog.values()].flatMap((pkg) => pkg.commands.map((template) => template.command))).map((name) => name.toLowerCase()));
  const nameKeys = namedInCommands.map((name) => variableNameKey(storeId, name));
  const counterKeys = [...couponKeys, ...limitKeys];
  // The catalog as the store's whole lists were read (eventually consistent, half the units); the counters a reservation checks, consistently.
  const catalogKeys = [...categoryKeys, ...promoKeys, ...variableKeys, ...nameKeys];
  const [second, catalogItems, everyPromo, allVariables] = await Promise.all([
    counterKeys.length === 0 ? [] : getMany(counterKeys),
    catalogKeys.length === 0 ? [] : getMany(catalogKeys, { consistent: false }),
    index === null ? listPromos(storeId) : undefined,
    everyVariable ? listVariables(storeId) : undefined,
  ]);
  const couponItems = second.slice(0, couponKeys.length);
  const counters = second.slice(couponKeys.length);
  const categoryItems = catalogItems.slice(0, categoryKeys.length);
  const promoItems = catalogItems.slice(categoryKeys.length, categoryKeys.length + promoKeys.length);
  const variableItems = catalogItems.slice(categoryKeys.length + promoKeys.length, categoryKeys.length + promoKeys.length + variableKeys.length);
  const nameItems = catalogItems.slice(categoryKeys.length + promoKeys.length + variableKeys.length);
  // Round 3: promos that only a category of the cart names.
  const read = new Set(promoIds);
  const byCategory = distinct(categoryItems.flatMap((item) => referrerIds(item, 'promo_ids'))).filter((id) => !read.has(id));
  const categoryPromos = byCategory.length === 0 ? [] : await getPromosByIds(storeId, byCategory);
  const promos = everyPromo ?? byId([...promoItems.flatMap((item) => (item ? [promoFromStored(item)] : [])), ...categoryPromos]);
  const found = allVariables ?? byId(variableItems.flatMap((item) => (item ? [variableResponse(variableFromItem(item))] : [])));
  // A value for a variable that does not apply to the cart (or does not exist): the rules judge it against the whole list, read now.
  const known = new Set(found.map((variable) => variable.name.toLowerCase()));
  const variables = (request.variableNames ?? []).every((name) => known.has(name.toLowerCase())) ? found : await listVariables(storeId);
  const variableNames = new Set([...variables.map((variable) => variable.name.toLowerCase()), ...namedInCommands.filter((_, position) => nameItems[position] !== undefined)]);

  const coupon = discountId === undefined ? undefined : couponUseOf(couponItems);
  const held = email === null ? null : new Map(limited.map((pkg, position) => [pkg.id, heldUnits(counters[position])]));
  return {
    catalog,
    variables,
    variableNames,
    promos,
    coupon: coupon ?? null,
    held,
    quote: quoteItem ? quoteFromItem(quoteItem) : undefined,
    customer,
    refCodeKnown: request.refCode !== null && extra('ref') !== undefined,
    termsUrl: storeItem ? storeFromItem(storeItem).terms_url : null,
  };
}
