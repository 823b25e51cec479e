import { fieldsOf, getMany, getOne, patchOne, putNewCounted, type StoredItem } from '#lib/db/entity.ts';
import { nowIso, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, enabledInCategoryCounter, startCounted, storeList } from '#lib/db/list-count.ts';
import { queryAll } from '#lib/db/query.ts';
import { plural, referableKey, unreferencedCondition } from '#lib/db/references.ts';
import { nextId } from '#lib/db/sequence.ts';
import { rawNumber, remove, retrying, writeGuarded } from '#lib/db/transact.ts';
import { conflict, notFound } from '#lib/errors.ts';
import type { Category, CategoryCreate, CategoryPatch } from '#lib/schemas/category.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { createOnce } from '#lib/db/idempotency.ts';

/**
 * Categories.
 *
 * | access pattern | key                                                                 | calls    |
 * |----------------|---------------------------------------------------------------------|----------|
 * | create         | sequence ADD + TransactWrite: Put `STORE#<s> / CATEGORY#<id>`, count +1 | 2    |
 * | get, update    | `STORE#<s> / CATEGORY#<id>` (conditional on existence)              | 1        |
 * | a page (id order) | counter `CATEGORY` + Query with Limit (lib/db/list-count.ts)     | 2 (+ skip) |
 * | delete         | TransactWrite: Delete conditioned on `ref_count` 0 (ALL_OLD on failure), count -1 | 1 |
 * | storefront list| snapshot `COUNT#<s> / CATEGORY#STOREFRONT` + BatchGet of the page (lib/db/list-count.ts `ListSnapshot`); made old by a package write moving an enabled count: then Query as the list, filtered on `enabled_package_count > 0` | 2 (1 per MB when old) |
 *
 * Packages (`category_id`) and promos (CATEGORY targets) hold counted references to a category
 * (lib/db/references.ts). Deleting a category that is still referred to is a 409 that says how
 * many packages (`package_count`) and promos refer to it, rather than leaving them dangling.
 * `enabled_package_count` counts its enabled packages (moved by lib/db/package.ts in the
 * package's own transactions), so the storefront lists categories without reading packages.
 */
const CATEGORY = ENTITY.CATEGORY;
export const categoryKey = (storeId: number, categoryId: number) => referableKey(storeId, CATEGORY, categoryId);
const categoryItem = (category: Category) => ({ ...categoryKey(category.store_id, category.id), entity: CATEGORY, ...category });

export function categoryFromItem(item: StoredItem): Category {
  const field = fieldsOf(item, CATEGORY);
  return { id: field.number('id'), store_id: field.number('store_id'), name: field.string('name'), created_at: field.string('created_at'), updated_at: field.string('updated_at') };
}

export async function createCategory(storeId: number, input: CategoryCreate): Promise<Category> {
  return createOnce(
    (categoryId: number) => getCategory(storeId, categoryId),
    async (recordOnKey) => {
      const id = await nextId(storeId, CATEGORY);
      const now = nowIso();
      const category: Category = { id, store_id: storeId, name: input.name, created_at: now, updated_at: now };
      // Its storefront list of enabled packages starts empty, counted (ids are never reused).
      await putNewCounted(categoryItem(category), storeId, CATEGORY, [startCounted(storeId, enabledInCategoryCounter(id)), ...recordOnKey(id)]);
      return category;
    },
  );
}

export const getCategory = (storeId: number, categoryId: number) => getOne(categoryKey(storeId, categoryId), 'Category', categoryFromItem);

/** A page of the store's categories, in id order, and their total. */
export const categoryPage = (storeId: number, page: number, limit: number) => countedPage(storeId, storeList(storeId, CATEGORY), page, limit, categoryFromItem);

/** The categories holding at least one enabled package, in id order, with that count. */
export async function listCategoriesWithEnabledPackages(storeId: number): Promise<(Category & { enabled_package_count: number })[]> {
  const items = await queryAll({
    pk: storePk(storeId),
    skPrefix: `${CATEGORY}#`,
    filter: { FilterExpression: 'enabled_package_count > :zero', ExpressionAttributeValues: { ':zero': 0 } },
  });
  return items.map((item) => ({ ...categoryFromItem(item), enabled_package_count: fieldsOf(item, CATEGORY).number('enabled_package_count') }));
}

/** Categories by id with their enabled counts (one eventually consistent BatchGet per 100, as the list was read); a deleted one is left out. */
export async function categoriesWithEnabledPackages(storeId: number, categoryIds: readonly number[]): Promise<(Category & { enabled_package_count: number })[]> {
  const items = await getMany(
    categoryIds.map((id) => categoryKey(storeId, id)),
    { consistent: false },
  );
  return items.flatMap((item) => (item ? [{ ...categoryFromItem(item), enabled_package_count: fieldsOf(item, CATEGORY).number('enabled_package_count') }] : []));
}

export const updateCategory = (storeId: number, categoryId: number, patch: CategoryPatch) =>
  patchOne(categoryKey(storeId, categoryId), 'Category', patch, ['name'], categoryFromItem);

export async function deleteCategory(storeId: number, categoryId: number): Promise<void> {
  await retrying(async () => {
    await writeGuarded([
      {
        item: remove({ Key: categoryKey(storeId, categoryId), ...unreferencedCondition, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        onConditionFailed: (stored) => {
          if (!stored) return notFound('Category');
          const packages = rawNumber(stored, 'package_count');
          const promos = rawNumber(stored, 'ref_count') - packages;
          const holders = [packages > 0 ? `${plural(packages, 'package')} in it` : '', promos > 0 ? `${plural(promos, 'promo')} targeting it` : ''];
          return conflict(`Category ${categoryId} is still in use (${holders.filter(Boolean).join(' and ')}); move or remove those first`);
        },
      },
      countMove(storeId, CATEGORY, -1),
    ]);
  });
}
