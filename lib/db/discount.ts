import { fieldsOf, getOne, newItemWrite, patchOne, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, storeList } from '#lib/db/list-count.ts';
import { packageKey } from '#lib/db/package.ts';
import { queryAll, queryPage } from '#lib/db/query.ts';
import { missingReference } from '#lib/db/references.ts';
import { nextId } from '#lib/db/sequence.ts';
import { check, putNewItem, remove, retrying, StaleRead, update, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict } from '#lib/errors.ts';
import { DISCOUNT_TYPES, EVERY_PACKAGE, LIMIT_CRITERIA, RESTRICTION_CRITERIA, type Discount, type DiscountPatch } from '#lib/schemas/discount.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Discount coupons.
 *
 * | access pattern               | key / index                                                          | calls                |
 * |------------------------------|----------------------------------------------------------------------|----------------------|
 * | create                       | sequence ADD + TransactWrite: Put `STORE#<s> / DISCOUNT#<id>`,        | 2                    |
 * |                              | Put sentinel `STORE#<s> / COUPON#<lower code>`, ConditionCheck of     |                      |
 * |                              | each package in `applies_to`, count `DISCOUNT` +1                     |                      |
 * | get                          | GetItem `STORE#<s> / DISCOUNT#<id>`                                   | 1                    |
 * | update                       | GetItem + UpdateItem (ALL_NEW); TransactWrite instead when the code   | 2                    |
 * |                              | changes (sentinel moved) or `applies_to` names packages (checked)     |                      |
 * | delete                       | GetItem (for the code) + TransactWrite deleting item and sentinel,    | 2                    |
 * |                              | count `DISCOUNT` -1                                                   |                      |
 * | a page, no filter            | counter `DISCOUNT` + Query with Limit (lib/db/list-count.ts)          | 2 (+ skip)           |
 * | list, filtered, no code      | Query `STORE#<s>`, sk begins_with `DISCOUNT#`                         | 1 per MB             |
 * | list, `coupon` prefix filter | Query gsi1 `STORE#<s>#COUPON`, gsi1sk begins_with `<lower prefix>`    | 1 per MB             |
 * | discount by code (orders)    | GetItem sentinel `COUPON#<lower code>` (holds `discount_id`)          | 1 (+1 for the item)  |
 * | discount by code (storefront)| Query gsi1 `STORE#<s>#COUPON`, gsi1sk = `<lower code>`                | 1                    |
 *
 * The unfiltered list is counted (`total` a counter moved by create and delete) and a page reads
 * its own items. A filtered list reads every coupon of the store (or every coupon whose code
 * starts with the prefix: the prefix is the only filter in the key condition) and filters the rest
 * in memory: `status` depends on the clock and on `uses`, which orders move, so no write moves a
 * coupon into EXPIRED and it cannot be a counter or a key; `restricted_to` is a list, which no
 * index can key or count; a code prefix is any string, too many sets to count. A filtered page
 * therefore costs read capacity in proportion to the matching coupons (the code index) or the
 * store's coupons, the same for page 1 as for page 50.
 *
 * The list is answered in id order whichever query served it (the index returns code order).
 *
 * Packages named in `applies_to` must exist when the coupon is written (a ConditionCheck each in
 * the same transaction; 422 naming `applies_to.N`), but are not reference-counted: a coupon
 * should not stop a package from being deleted, and an id left behind simply matches no package.
 *
 * `uses` is a counter owned by orders (lib/db/coupon-use.ts); this module never writes it after
 * creation. A PATCH is a read-validate-write (lib/flows/discount.ts) whose write is conditioned
 * on the `revision` it read, so that two PATCHes cannot each pass the cross-field rules
 * (lib/domain/coupon.ts) against a state the other one is changing; a stale read or a colliding
 * transaction is read again and retried. `status` is computed from the clock, never stored.
 */
const DISCOUNT = ENTITY.DISCOUNT;

export const discountKey = (storeId: number, discountId: number) => ({ pk: storePk(storeId), sk: entitySk(DISCOUNT, discountId) });
export const couponKey = (storeId: number, code: string) => ({ pk: storePk(storeId), sk: `${ENTITY.COUPON}#${code.toLowerCase()}` });
const couponIndexPk = (storeId: number) => `${storePk(storeId)}#COUPON`;

/** The fields a discount is written with; every other field is the store's or the counters'. */
export type DiscountFields = Omit<Discount, 'id' | 'store_id' | 'uses' | 'created_at' | 'updated_at' | 'status'>;
/** A discount as stored: without its `status`, which depends on the clock (lib/domain/coupon.ts adds it). */
export type StoredDiscount = Omit<Discount, 'status'> & { coupon_lower: string; revision: number };

/** The discount with its code index attributes. */
const discountItem = (discount: StoredDiscount) => ({
  ...discountKey(discount.store_id, discount.id),
  entity: DISCOUNT,
  gsi1pk: couponIndexPk(discount.store_id),
  gsi1sk: discount.coupon_lower,
  ...discount,
});

/** The discount a code's sentinel names. */
export const discountIdOfCoupon = (sentinel: StoredItem): number => fieldsOf(sentinel, ENTITY.COUPON).number('discount_id');

export function discountFromItem(item: StoredItem): StoredDiscount {
  const field = fieldsOf(item, DISCOUNT);
  const coupon = field.string('coupon');
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    coupon,
    type: field.oneOf('type', DISCOUNT_TYPES),
    value: field.number('value'),
    applies_to: field.numbers('applies_to'),
    uses: field.number('uses'),
    max_uses: field.numberOrNull('max_uses'),
    max_uses_per_client: field.numberOrNull('max_uses_per_client'),
    expires_in: field.stringOrNull('expires_in'),
    min_price: field.numberOrNull('min_price'),
    limit_criteria: field.oneOf('limit_criteria', LIMIT_CRITERIA),
    restricted_to_criteria: item.restricted_to_criteria == null ? null : field.oneOf('restricted_to_criteria', RESTRICTION_CRITERIA),
    restricted_to: item.restricted_to == null ? null : field.strings('restricted_to'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    coupon_lower: field.string('coupon_lower', coupon.toLowerCase()),
    revision: field.number('revision'),
  };
}

const PATCHABLE = [
  'coupon',
  'type',
  'value',
  'applies_to',
  'max_uses',
  'max_uses_per_client',
  'expires_in',
  'min_price',
  'limit_criteria',
  'restricted_to_criteria',
  'restricted_to',
] as const;

const couponInUse = () => conflict('A discount with this coupon code already exists in this store', 'coupon');

/** The sentinel that makes a code unique; it holds the discount id, so a code resolves to its discount by key. */
function claimCoupon(storeId: number, code: string, discountId: number): GuardedWrite {
  return { item: putNewItem({ ...couponKey(storeId, code), entity: ENTITY.COUPON, store_id: storeId, discount_id: discountId }), onConditionFailed: couponInUse };
}

/** Existence of each listed package at the moment of the write (keys hold the store: a foreign id is missing). */
function packageChecks(storeId: number, appliesTo: readonly number[]): GuardedWrite[] {
  if (appliesTo.includes(EVERY_PACKAGE)) return [];
  return appliesTo.map((id, index) => ({
    item: check({ Key: packageKey(storeId, id), ConditionExpression: 'attribute_exists(pk)' }),
    onConditionFailed: () => missingReference({ kind: ENTITY.PACKAGE, id, field: `applies_to.${index}` }),
  }));
}

/** Stores a new discount (fields already judged by the coupon rules) with its code's sentinel. */
export async function insertDiscount(storeId: number, fields: DiscountFields): Promise<StoredDiscount> {
  const id = await nextId(storeId, DISCOUNT);
  const now = nowIso();
  const couponLower = fields.coupon.toLowerCase();
  const item: StoredDiscount = { id, store_id: storeId, ...fields, uses: 0, created_at: now, updated_at: now, coupon_lower: couponLower, revision: 0 };
  await retrying(() =>
    writeGuarded([newItemWrite(discountItem(item)), claimCoupon(storeId, fields.coupon, id), ...packageChecks(storeId, fields.applies_to), countMove(storeId, DISCOUNT, 1)]),
  );
  return item;
}

export const getStoredDiscount = (storeId: number, discountId: number) => getOne(discountKey(storeId, discountId), 'Discount', discountFromItem);

/** Every discount of the store, or every one whose code starts with `codePrefix`, in no particular order. */
export async function listStoredDiscounts(storeId: number, codePrefix: string | undefined): Promise<StoredDiscount[]> {
  const prefix = codePrefix?.toLowerCase();
  const items = prefix ? await queryAll({ index: 'gsi1', pk: couponIndexPk(storeId), skPrefix: prefix }) : await queryAll({ pk: storePk(storeId), skPrefix: `${DISCOUNT}#` });
  return items.map(discountFromItem);
}

/** A page of the store's discounts, unfiltered, in id order, and their total. */
export const storedDiscountPage = (storeId: number, page: number, limit: number) => countedPage(storeId, storeList(storeId, DISCOUNT), page, limit, discountFromItem);

/**
 * Writes a PATCH read from `current` whose merged result the coupon rules accepted, conditioned
 * on the revision read (StaleRead otherwise: the caller reads again). Answers the stored discount.
 */
export async function writeDiscountPatch(storeId: number, current: StoredDiscount, patch: DiscountPatch, accepted: DiscountFields): Promise<StoredDiscount> {
  const discountId = current.id;
  const key = discountKey(storeId, discountId);
  const merged: StoredDiscount = { ...current, ...accepted };
  merged.coupon_lower = merged.coupon.toLowerCase();
  merged.updated_at = nowIso();
  merged.revision = current.revision + 1;
  const renamed = merged.coupon_lower !== current.coupon_lower;
  const sentinelMoves: GuardedWrite[] = renamed
    ? [{ item: remove({ Key: couponKey(storeId, current.coupon_lower) }), onConditionFailed: () => new StaleRead() }, claimCoupon(storeId, merged.coupon, discountId)]
    : [];
  const checks = patch.applies_to ? packageChecks(storeId, patch.applies_to) : [];

  if (sentinelMoves.length === 0 && checks.length === 0) {
    return patchOne(key, 'Discount', { ...patch, revision: merged.revision }, [...PATCHABLE, 'revision'], discountFromItem, {
      // Changed or deleted since the read: the next round reads it again (and answers 404 if it is gone).
      condition: {
        expression: '#expected_revision = :expected_revision',
        names: { '#expected_revision': 'revision' },
        values: { ':expected_revision': current.revision },
        failure: () => new StaleRead(),
      },
    });
  }

  const parts = setExpression(
    { ...patch, updated_at: merged.updated_at, revision: merged.revision, ...(renamed ? { coupon_lower: merged.coupon_lower, gsi1sk: merged.coupon_lower } : {}) },
    [...PATCHABLE, 'updated_at', 'revision', 'coupon_lower', 'gsi1sk'],
  );
  parts.names['#expected_revision'] = 'revision';
  parts.values[':expected_revision'] = current.revision;
  // A transaction returns no item, so it is also conditioned on `uses`: the merged item is then exactly what was written.
  parts.names['#uses'] = 'uses';
  parts.values[':expected_uses'] = current.uses;
  await writeGuarded([
    {
      item: update({
        Key: key,
        UpdateExpression: `SET ${parts.sets.join(', ')}`,
        ConditionExpression: '#expected_revision = :expected_revision AND #uses = :expected_uses',
        ExpressionAttributeNames: parts.names,
        ExpressionAttributeValues: parts.values,
      }),
      onConditionFailed: () => new StaleRead(),
    },
    ...sentinelMoves,
    ...checks,
  ]);
  return merged;
}

export function deleteDiscount(storeId: number, discountId: number): Promise<void> {
  const key = discountKey(storeId, discountId);
  return retrying(async () => {
    const current = await getOne(key, 'Discount', discountFromItem);
    await writeGuarded([
      {
        item: remove({
          Key: key,
          // A rename in between moved the sentinel: read again so that the right one goes.
          ConditionExpression: 'coupon_lower = :coupon_lower',
          ExpressionAttributeValues: { ':coupon_lower': current.coupon_lower },
        }),
        onConditionFailed: () => new StaleRead(),
      },
      { item: remove({ Key: couponKey(storeId, current.coupon_lower) }), onConditionFailed: () => new StaleRead() },
      countMove(storeId, DISCOUNT, -1),
    ]);
  });
}

/**
 * The discount of a code, any case, or undefined: the code index holds the whole item, so one
 * Query answers without the sentinel's second read. Eventually consistent, as a public read may be.
 */
export async function findDiscountByCode(storeId: number, code: string): Promise<StoredDiscount | undefined> {
  const page = await queryPage({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :code',
    ExpressionAttributeValues: { ':pk': couponIndexPk(storeId), ':code': code.toLowerCase() },
  });
  const item = page.Items?.[0];
  return item ? discountFromItem(item) : undefined;
}
