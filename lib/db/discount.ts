import { fieldsOf, getMany, getOne, newItemWrite, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, listCounterKey, snapshotBump, storeList } from '#lib/db/list-count.ts';
import { readItem } from '#lib/db/query.ts';
import { packageKey } from '#lib/db/package.ts';
import { queryAll, queryPage } from '#lib/db/query.ts';
import { missingReference } from '#lib/db/references.ts';
import { nextId } from '#lib/db/sequence.ts';
import { check, putNewItem, remove, retrying, StaleRead, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict } from '#lib/errors.ts';
import {
  DISCOUNT_STATUSES,
  DISCOUNT_TYPES,
  EVERY_PACKAGE,
  LIMIT_CRITERIA,
  RESTRICTION_CRITERIA,
  type Discount,
  type DiscountPatch,
  type DiscountStatus,
} from '#lib/schemas/discount.ts';
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
 * | update                       | GetItem + TransactWrite (Update conditioned on the revision and the   | 2                    |
 * |                              | uses read, the sentinel moved when the code changes, `applies_to`'s   |                      |
 * |                              | packages checked, the status snapshot bumped)                         |                      |
 * | delete                       | GetItem (for the code) + TransactWrite deleting item and sentinel,    | 2                    |
 * |                              | count `DISCOUNT` -1, status snapshot bumped                           |                      |
 * | a page, no filter            | counter `DISCOUNT` + Query with Limit (lib/db/list-count.ts)          | 2 (+ skip)           |
 * | a page by `status` alone     | GetItem of the status snapshot `COUNT#<s> / DISCOUNT#STATUS` + BatchGet | 2                  |
 * |                              | of the page's ids; when a write or the clock made it old: the Query   | (1 per MB + 1)       |
 * |                              | below + the snapshot's conditional write, once                        |                      |
 * | list, filtered, no code      | Query `STORE#<s>`, sk begins_with `DISCOUNT#`                         | 1 per MB             |
 * | list, `coupon` prefix filter | Query gsi1 `STORE#<s>#COUPON`, gsi1sk begins_with `<lower prefix>`    | 1 per MB             |
 * | discount by code (orders)    | GetItem sentinel `COUPON#<lower code>` (holds `discount_id`)          | 1 (+1 for the item)  |
 * | discount by code (storefront)| Query gsi1 `STORE#<s>#COUPON`, gsi1sk = `<lower code>`                | 1                    |
 *
 * The unfiltered list is counted (`total` a counter moved by create and delete) and a page reads
 * its own items. `status` depends on the clock and on `uses`, which orders move, so no write moves
 * a coupon into EXPIRED and it cannot be a counter or a key: the list filtered by `status` alone is
 * a snapshot (lib/db/list-count.ts `ListSnapshot`, one item holding the ids of each status in id
 * order), valid from `at` until `until`, the next `expires_in` still ahead of it (the clock's next
 * change), and at the `version` it was computed at. Every write that may move a coupon from one
 * status to another ADDs 1 to `version` in its own transaction: create, PATCH and delete here, and
 * among the orders only those that change whether a coupon is sold out, the use that reaches
 * `max_uses` and the release of a use from a coupon at `max_uses` (lib/db/coupon-use.ts), so an
 * ordinary order never touches it. A read whose snapshot is old reads every coupon once and stores
 * the snapshot conditioned on the version it read; the others read it and their page. The totals
 * are therefore exact at the request's time, and page 1 costs the same with 20 or 1,000 coupons
 * (the snapshot holds a few bytes per coupon: about 5 KB at 1,000).
 * A list filtered by `restricted_to` or a code prefix reads every coupon of the store (or every
 * coupon whose code starts with the prefix: the prefix is the only filter in the key condition)
 * and filters the rest in memory: `restricted_to` is a list, which no index can key or count; a
 * code prefix is any string, too many sets to count.
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
    writeGuarded([
      newItemWrite(discountItem(item)),
      claimCoupon(storeId, fields.coupon, id),
      ...packageChecks(storeId, fields.applies_to),
      countMove(storeId, DISCOUNT, 1),
      discountStatusBump(storeId),
    ]),
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
 * on the revision read (StaleRead otherwise: the caller reads again), in one transaction with the
 * status snapshot's bump. Answers the stored discount.
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
    // `expires_in` or `max_uses` may move the coupon to another status: whichever field changed, the snapshot is computed again.
    discountStatusBump(storeId),
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
      discountStatusBump(storeId),
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

/** The snapshot of the status lists: `COUNT#<s> / DISCOUNT#STATUS` (in the counters' partition, so the list route may store it). */
const STATUS_SNAPSHOT = `${DISCOUNT}#STATUS`;

/** The ADD to the status snapshot's version, for the transaction of a write that may move a coupon between statuses. */
export const discountStatusBump = (storeId: number): GuardedWrite => snapshotBump(storeId, STATUS_SNAPSHOT);

/** The ids of each status, in id order, as computed at `at`, holding until `until` (null: until a write), at version `of`. */
export interface DiscountStatusSnapshot {
  ids: Record<DiscountStatus, number[]>;
  at: string | null;
  until: string | null;
  of: number;
  version: number;
}

const statusAttribute = (status: DiscountStatus) => `ids_${status.toLowerCase()}`;

/** The status snapshot as stored (never computed: no ids, `of` -1); one consistent GetItem. */
export async function readDiscountStatusSnapshot(storeId: number): Promise<DiscountStatusSnapshot> {
  const item = await readItem(listCounterKey(storeId, STATUS_SNAPSHOT), true);
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const idsOf = (value: unknown) => (Array.isArray(value) ? value.map(Number) : []);
  return {
    ids: Object.fromEntries(DISCOUNT_STATUSES.map((status) => [status, idsOf(item?.[statusAttribute(status)])])) as Record<DiscountStatus, number[]>,
    at: text(item?.at),
    until: text(item?.until),
    of: typeof item?.of === 'number' ? item.of : -1,
    version: typeof item?.version === 'number' ? item.version : 0,
  };
}

/** Stores the snapshot computed at `snapshot.version`, unless a write landed meanwhile (false: nothing stored, the next read computes again). */
export const storeDiscountStatusSnapshot = (storeId: number, snapshot: Omit<DiscountStatusSnapshot, 'of'>): Promise<boolean> =>
  writeIf(
    update({
      Key: listCounterKey(storeId, STATUS_SNAPSHOT),
      UpdateExpression: `SET ${DISCOUNT_STATUSES.map((status) => `${statusAttribute(status)} = :${statusAttribute(status)}`).join(', ')}, #at = :at, #until = :until, #of = :version, store_id = :store`,
      ConditionExpression: snapshot.version === 0 ? 'attribute_not_exists(#version) OR #version = :version' : '#version = :version',
      ExpressionAttributeNames: { '#at': 'at', '#until': 'until', '#of': 'of', '#version': 'version' },
      ExpressionAttributeValues: {
        ...Object.fromEntries(DISCOUNT_STATUSES.map((status) => [`:${statusAttribute(status)}`, snapshot.ids[status]])),
        ':at': snapshot.at,
        ':until': snapshot.until,
        ':version': snapshot.version,
        ':store': storeId,
      },
    }),
  );

/**
 * Discounts by id, in the order asked, those deleted since left out; one BatchGet per 100,
 * eventually consistent as the unfiltered page's Query is (half the read units: a BatchGet counts
 * each item apart). Which ids a page holds comes from the snapshot, read consistently.
 */
export async function getStoredDiscounts(storeId: number, discountIds: readonly number[]): Promise<StoredDiscount[]> {
  if (discountIds.length === 0) return [];
  const items = await getMany(
    discountIds.map((id) => discountKey(storeId, id)),
    { consistent: false },
  );
  return items.flatMap((item) => (item ? [discountFromItem(item)] : []));
}
