import { categoriesWithEnabledPackages, listCategoriesWithEnabledPackages } from '#lib/db/category.ts';
import { findDiscountByCode } from '#lib/db/discount.ts';
import { discountStatus } from '#lib/domain/coupon.ts';
import type { CartIndex } from '#lib/db/cart-index.ts';
import { enabledPackagePage, getEnabledPackage, type ShownPackage, type StoredPackage } from '#lib/db/package.ts';
import { getPromosByIds, IN_FORCE_SNAPSHOT, listPromos } from '#lib/db/promo.ts';
import { readSnapshot, snapshotHolds, STOREFRONT_CATEGORIES, storeSnapshot } from '#lib/db/list-count.ts';
import type { Category } from '#lib/schemas/category.ts';
import { getStoreOrThrow } from '#lib/db/store.ts';
import { tagsFor, tagsShownOn } from '#lib/db/tag.ts';
import { getVariablesByIds, listVariables } from '#lib/db/variable.ts';
import { inForceAt, toStorefrontPackage } from '#lib/domain/storefront.ts';
import { notFound } from '#lib/errors.ts';
import type { Promo } from '#lib/schemas/promo.ts';
import { COUPON_SHAPE, type StorefrontCategory, type StorefrontPackage } from '#lib/schemas/storefront.ts';
import type { Tag } from '#lib/schemas/tag.ts';
import type { Variable } from '#lib/schemas/variable.ts';
import { currentTimeMs } from '#lib/clock.ts';

/**
 * The public storefront (extensions section 8): what buyers may see of a store, read by its
 * domain. Each use case reads what its answer needs, in parallel, and nothing about disabled
 * packages. Calls per request, besides the domain's GetItem that found the store:
 *
 * | use case                 | reads                                                                | calls          |
 * |--------------------------|----------------------------------------------------------------------|----------------|
 * | the store                | GetItem of the store                                                 | 1              |
 * | categories               | their snapshot + BatchGet of the page (after a package write moved   | 2 (1 per MB    |
 * |                          | an enabled count: Query of the categories, filtered on the count)   | when old)      |
 * | packages (of a category) | a Query of the sparse storefront index with Limit + one BatchGet of the list's counter, the apply-all tag ids and the cart index, in parallel, then a BatchGet of the tags shown and one of the variables naming the page's packages or every package (lib/db/cart-index.ts) | 2-4 (+ skip) |
 * | one package              | one BatchGet of the package, the apply-all tag ids and the cart index, then a BatchGet of the tags shown and one of its variables | 1-3 |
 * | a coupon by code         | Query of the code index (exact code)                                 | 1              |
 * | promos in force          | GetItem of the in-force snapshot + BatchGet of the page's promos;     | 2              |
 * |                          | when a promo write or a start/end passing made it old: Query of the  | (+1 per MB)    |
 * |                          | promos + the snapshot's conditional write (lib/db/promo.ts)          |                |
 */
export async function storefrontStore(storeId: number) {
  const store = await getStoreOrThrow(storeId);
  return { store: { id: store.id, name: store.name, domain: store.domain, active_domain: store.domain, currency: store.currency, theme: store.theme, terms_url: store.terms_url } };
}

/** A page of the categories with enabled packages and their total, from their snapshot; computed again after a package write moved an enabled count. */
export async function storefrontCategoryPage(storeId: number, page: number, limit: number, now = currentTimeMs()): Promise<{ total: number; data: StorefrontCategory[] }> {
  const snapshot = await readSnapshot(storeId, STOREFRONT_CATEGORIES);
  const start = (page - 1) * limit;
  let total: number;
  let categories: (Category & { enabled_package_count: number })[];
  if (snapshotHolds(snapshot, now)) {
    const ids = snapshot.ids.slice(start, start + limit);
    total = snapshot.ids.length;
    categories = ids.length === 0 ? [] : (await categoriesWithEnabledPackages(storeId, ids)).sort((a, b) => a.id - b.id);
  } else {
    const all = await listCategoriesWithEnabledPackages(storeId);
    await storeSnapshot(storeId, STOREFRONT_CATEGORIES, { ids: all.map((category) => category.id), at: new Date(now).toISOString(), until: null, version: snapshot.version });
    total = all.length;
    categories = all.slice(start, start + limit);
  }
  return {
    total,
    data: categories.map((category) => ({
      id: category.id,
      name: category.name,
      parent_id: null,
      packages_count: category.enabled_package_count,
      sub_categories: [],
    })),
  };
}

const shape = (pkg: StoredPackage, storeTags: readonly Tag[], variables: readonly Variable[]) => toStorefrontPackage(pkg, tagsShownOn(pkg.tags, storeTags), variables);

/**
 * The variables the packages shown may take (those naming them and those for every package), one
 * BatchGet of them; every variable of the store while its index is older than the variables.
 */
async function variablesOf(storeId: number, index: CartIndex | null, shown: readonly ShownPackage[]): Promise<Variable[]> {
  if (index === null) return listVariables(storeId);
  const ids = [...new Set([...index.everyPackageVariableIds, ...shown.flatMap((entry) => entry.variableIds)])];
  return ids.length === 0 ? [] : (await getVariablesByIds(storeId, ids)).sort((a, b) => a.id - b.id);
}

/** A page of the enabled packages (of a category) and their total. */
export async function storefrontPackagePage(storeId: number, categoryId: number | undefined, page: number, limit: number): Promise<{ total: number; data: StorefrontPackage[] }> {
  const { applyAll, index, ...packages } = await enabledPackagePage(storeId, categoryId, page, limit);
  const [shown, variables] = await Promise.all([
    tagsFor(
      storeId,
      packages.data.flatMap(({ pkg }) => pkg.tags),
      applyAll,
    ),
    variablesOf(storeId, index, packages.data),
  ]);
  return { total: packages.total, data: packages.data.map(({ pkg }) => shape(pkg, shown, variables)) };
}

export async function storefrontPackage(storeId: number, packageId: number): Promise<StorefrontPackage> {
  const { found, applyAll, index } = await getEnabledPackage(storeId, packageId);
  const [tags, variables] = await Promise.all([tagsFor(storeId, found.pkg.tags, applyAll), variablesOf(storeId, index, [found])]);
  return shape(found.pkg, tags, variables);
}

/** One answer for an unknown, expired or sold-out code: the buyer learns nothing about which. */
export async function usableCoupon(storeId: number, code: string, now = currentTimeMs()) {
  // A key longer than the index allows would be a 500: what cannot be a code is simply unknown.
  const discount = COUPON_SHAPE.test(code) ? await findDiscountByCode(storeId, code) : undefined;
  if (!discount || discountStatus(discount, now) !== 'ACTIVE') throw notFound('Coupon');
  const { coupon, type, value, applies_to, min_price, expires_in } = discount;
  return { coupon, type, value, applies_to, min_price, expires_in };
}

/**
 * A page of the promos in force and their total, from the store's in-force snapshot
 * (lib/db/promo.ts): the snapshot's GetItem and a BatchGet of the page's promos; the promos are
 * read whole only when a promo write or the clock (a start or an end passing) made the snapshot old.
 */
export async function promoPageInForce(storeId: number, page: number, limit: number, now = currentTimeMs()): Promise<{ total: number; data: Promo[] }> {
  const snapshot = await readSnapshot(storeId, IN_FORCE_SNAPSHOT);
  const start = (page - 1) * limit;
  if (snapshotHolds(snapshot, now)) {
    const ids = snapshot.ids.slice(start, start + limit);
    const promos = ids.length === 0 ? [] : await getPromosByIds(storeId, ids);
    return { total: snapshot.ids.length, data: promos.sort((a, b) => a.id - b.id) };
  }
  const promos = await listPromos(storeId);
  const computed = inForceAt(promos, now);
  await storeSnapshot(storeId, IN_FORCE_SNAPSHOT, { ...computed, at: new Date(now).toISOString(), version: snapshot.version });
  const byId = new Map(promos.map((promo) => [promo.id, promo]));
  return { total: computed.ids.length, data: computed.ids.slice(start, start + limit).map((id) => byId.get(id)!) };
}
