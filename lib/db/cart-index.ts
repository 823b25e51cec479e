import type { StoredItem } from '#lib/db/entity.ts';
import { storePk } from '#lib/db/keys.ts';
import { readItem } from '#lib/db/query.ts';
import { referableKey, type Reference, type ReferrerSet } from '#lib/db/references.ts';
import { putNewItem, update, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * What a cart reads to find the promos and variables that can apply to it, instead of all of the
 * store's (lib/db/cart.ts).
 *
 * | what                                        | where                                                                 | kept by                          |
 * |---------------------------------------------|-----------------------------------------------------------------------|----------------------------------|
 * | promos targeting a package (or rewarding it) | `promo_ids` set on the package item                                    | the promo's ref_count ADD (lib/db/references.ts) |
 * | promos targeting a category                 | `promo_ids` set on the category item                                   | the same                          |
 * | variables applying to a package             | `variable_ids` set on the package item                                 | the variable's ref_count ADD      |
 * | promos targeting the whole store (`STORE`)  | `store_promo_ids` on `STORE#<s> / CART_INDEX`                          | the promo's transaction           |
 * | variables applying to every package         | `every_package_variable_ids` on the same item                          | the variable's transaction        |
 *
 * The sets are a superset of what applies: an id whose promo or variable is gone (deleted, or
 * retargeted while `cart-index` ran) costs a key in a BatchGet and finds nothing or something the
 * pricing rules do not match, so the prices never depend on the sets being tight. They must never
 * miss one: every write that makes a promo or variable refer to an item adds its id in the same
 * transaction. A store created before the sets existed has no `indexed_at` on its index item, and
 * its carts read every promo and variable as before until `npm run admin -- cart-index --store ID`
 * (lib/admin/commands.ts) fills the sets and marks it; a new store starts marked.
 */
export const cartIndexKey = (storeId: number) => ({ pk: storePk(storeId), sk: ENTITY.CART_INDEX });
const STORE_WIDE: Record<ReferrerSet, string> = { promo_ids: 'store_promo_ids', variable_ids: 'every_package_variable_ids' };

const idsOf = (value: unknown): number[] => (value instanceof Set ? [...value].map(Number) : []);

/** The ids of a referrer set on a stored item (a package, a category, the index item's store-wide sets). */
export const referrerIds = (item: StoredItem | undefined, set: ReferrerSet): number[] => idsOf(item?.[set]);

export interface CartIndex {
  storePromoIds: number[];
  everyPackageVariableIds: number[];
}

/** The store's index, or null when the store's promos and variables predate it (its carts read them all). */
export function cartIndexFromItem(item: StoredItem | undefined): CartIndex | null {
  if (!item || typeof item.indexed_at !== 'string') return null;
  return { storePromoIds: idsOf(item[STORE_WIDE.promo_ids]), everyPackageVariableIds: idsOf(item[STORE_WIDE.variable_ids]) };
}

/** The store's index as last written (eventually consistent, as the lists it stands for were read). */
export const readCartIndex = async (storeId: number): Promise<CartIndex | null> => cartIndexFromItem(await readItem(cartIndexKey(storeId)));

/** A new store has no promos nor variables: its index starts complete. */
export const startCartIndex = (storeId: number, at: string): GuardedWrite => ({
  item: putNewItem({ ...cartIndexKey(storeId), entity: ENTITY.CART_INDEX, store_id: storeId, indexed_at: at }),
  onConditionFailed: () => new Error(`cart index of store ${storeId} started twice`),
});

/** The write moving `id` into or out of a store-wide set, for the referrer's own transaction; none when it stays where it was. */
export function storeWideWrites(storeId: number, set: ReferrerSet, id: number, was: boolean, is: boolean): GuardedWrite[] {
  if (was === is) return [];
  return [
    {
      item: update({
        Key: cartIndexKey(storeId),
        UpdateExpression: `${is ? 'ADD' : 'DELETE'} #ids :id SET store_id = :store`,
        ExpressionAttributeNames: { '#ids': STORE_WIDE[set] },
        ExpressionAttributeValues: { ':id': new Set([id]), ':store': storeId },
      }),
    },
  ];
}

/**
 * Fills the sets of a store whose promos and variables predate them (the admin's `cart-index`),
 * then marks the index: each referred item gets its referrers' ids (an item deleted meanwhile is
 * skipped), the store-wide ones go on the index item. ADD is a union: a promo written meanwhile
 * adds its own id too, and nothing is taken away.
 */
export async function fillCartIndex(
  storeId: number,
  referrers: readonly { set: ReferrerSet; id: number; storeWide: boolean; references: readonly Reference[] }[],
  at: string,
): Promise<number> {
  let writes = 0;
  for (const referrer of referrers) {
    const targets = new Map(referrer.references.map((ref) => [`${ref.kind}#${ref.id}`, ref]));
    await Promise.all(
      [...targets.values()].map((ref) =>
        writeIf(
          update({
            Key: referableKey(storeId, ref.kind, ref.id),
            UpdateExpression: 'ADD #ids :id',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#ids': referrer.set },
            ExpressionAttributeValues: { ':id': new Set([referrer.id]) },
          }),
        ),
      ),
    );
    writes += targets.size;
    if (referrer.storeWide) await writeIf(storeWideWrites(storeId, referrer.set, referrer.id, false, true)[0]!.item);
  }
  await writeIf(
    update({
      Key: cartIndexKey(storeId),
      UpdateExpression: 'SET indexed_at = :at, entity = :entity, store_id = :store',
      ExpressionAttributeValues: { ':at': at, ':entity': ENTITY.CART_INDEX, ':store': storeId },
    }),
  );
  return writes;
}
