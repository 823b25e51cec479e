import { fieldsOf, getMany, getOne, newItemWrite, type Fields, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, snapshotBump, storeList } from '#lib/db/list-count.ts';
import { queryAll } from '#lib/db/query.ts';
import { storeWideWrites } from '#lib/db/cart-index.ts';
import { referenceWrites } from '#lib/db/references.ts';
import { put, remove, retrying, StaleRead, update, writeGuarded, writeReturning, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import type { Reference } from '#lib/schemas/common.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { CONDITION_MODES, PROMO_TYPES, REWARD_TYPES, TARGET_TYPES, targetsWholeStore, type Promo, type Target } from '#lib/schemas/promo.ts';

/**
 * Promos. A promo and its tiers (at most 10) are one item, so reading a promo is one GetItem.
 * The rules (lib/domain/promo.ts) are applied by lib/flows/promo.ts before these writes.
 *
 * | access pattern  | key / calls                                                                          | calls    |
 * |-----------------|--------------------------------------------------------------------------------------|----------|
 * | ids             | one ADD on `STORE#<s> / #SEQ#PROMO` (promo id and n tier ids together)                | 1        |
 * | create          | TransactWrite(Put `STORE#<s> / PROMO#<id>` + one ref_count ADD per target, count +1) | 1        |
 * | get             | GetItem `STORE#<s> / PROMO#<id>`                                                     | 1        |
 * | every promo     | Query `STORE#<s>`, sk begins_with `PROMO#` (quotes, the storefront's promos in force) | 1 per MB |
 * | a page (id order) | counter `PROMO` + Query with Limit (lib/db/list-count.ts)                          | 2 (+ skip) |
 * | update          | TransactWrite(Put conditioned on the `version` read + ref_count deltas)              | 1        |
 * | delete          | TransactWrite(Delete conditioned on the `version` read + negative ref_count deltas, count -1) | 1 |
 *
 * So a creation costs 2 calls, an update 2 or 3 (GetItem, an ADD only when new tiers appear,
 * the TransactWrite), a delete 2.
 *
 * Targets (PRODUCT -> package, CATEGORY -> category, tier targets -> package) are counted
 * references (lib/db/references.ts), written in the promo's own transaction: a target missing
 * from the caller's store fails its condition and the promo is refused with a 422 naming the
 * input field, and a package or category a promo targets cannot be deleted (409). A delete
 * racing a creation therefore ends one way or the other, never with a dangling target.
 *
 * Tier ids come from the same counter item as promo ids (attribute `tier_value`), so creating a
 * promo allocates all its ids in one call.
 */
const PROMO = ENTITY.PROMO;
export const promoKey = (storeId: number, promoId: number) => ({ pk: storePk(storeId), sk: entitySk(PROMO, promoId) });
const sequenceKey = (storeId: number) => ({ pk: storePk(storeId), sk: `#SEQ#${PROMO}` });

/** A promo as stored, with the version its writes are conditioned on. */
export type StoredPromo = Promo & { version: number };

/** Allocates `promos` (0 or 1) promo ids and `tiers` tier ids in one ADD; returns the first of each. */
export async function allocatePromoIds(storeId: number, promos: 0 | 1, tiers: number): Promise<{ promoId: number; firstTierId: number }> {
  const counters = await writeReturning(
    {
      item: update({
        Key: sequenceKey(storeId),
        UpdateExpression: promos ? 'ADD #value :promos, tier_value :tiers SET store_id = :store' : 'ADD tier_value :tiers SET store_id = :store',
        ExpressionAttributeNames: promos ? { '#value': 'value' } : undefined,
        ExpressionAttributeValues: { ':tiers': tiers, ':store': storeId, ...(promos ? { ':promos': promos } : {}) },
      }),
    },
    'UPDATED_NEW',
  );
  return { promoId: Number(counters?.value), firstTierId: Number(counters?.tier_value) - tiers + 1 };
}

const promoItem = (storeId: number, promo: Promo, version: number) => ({ ...promoKey(storeId, promo.id), entity: PROMO, ...promo, version });

const targetFromFields = (target: Fields): Target => {
  const id = target.optionalNumber('id');
  return { type: target.oneOf('type', TARGET_TYPES), ...(id === undefined ? {} : { id }) };
};

export function promoFromItem(item: StoredItem): StoredPromo {
  const field = fieldsOf(item, PROMO);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name: field.string('name'),
    type: field.oneOf('type', PROMO_TYPES),
    condition_mode: field.oneOf('condition_mode', CONDITION_MODES),
    enabled: field.boolean('enabled'),
    starts_at: field.string('starts_at'),
    ends_at: field.stringOrNull('ends_at'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    targets: field.objects('targets', targetFromFields),
    tiers: field.objects('tiers', (tier) => ({
      id: tier.number('id'),
      store_id: tier.number('store_id'),
      promo_id: tier.number('promo_id'),
      min_amount: tier.number('min_amount'),
      reward_type: tier.oneOf('reward_type', REWARD_TYPES),
      reward_value: tier.numberOrNull('reward_value'),
      reward_quantity: tier.numberOrNull('reward_quantity'),
      created_at: tier.string('created_at'),
      updated_at: tier.string('updated_at'),
      targets: tier.objects('targets', targetFromFields),
    })),
    version: field.number('version'),
  };
}

/** The promo without the version its writes are conditioned on. */
const withoutVersion = ({ version: _, ...promo }: StoredPromo): Promo => promo;

/**
 * The storefront's promos in force (extensions section 8) change with the clock, so no write can
 * keep their count: they are a snapshot (lib/db/list-count.ts `ListSnapshot`) that every promo
 * write makes old, and that also holds only `until` the next start or end of an enabled promo.
 */
export const IN_FORCE_SNAPSHOT = `${PROMO}#IN_FORCE`;

/** The writes of a promo's references and of where carts find it, from `before` (null: new) to `after` (null: deleted). */
function placementWrites(
  storeId: number,
  promoId: number,
  before: { promo: Promo; references: readonly Reference[] } | null,
  after: { promo: Promo; references: readonly Reference[] } | null,
) {
  return [
    snapshotBump(storeId, IN_FORCE_SNAPSHOT),
    ...referenceWrites(storeId, before?.references ?? [], after?.references ?? [], { set: 'promo_ids', id: promoId }),
    ...storeWideWrites(storeId, 'promo_ids', promoId, before !== null && targetsWholeStore(before.promo), after !== null && targetsWholeStore(after.promo)),
  ];
}

/** Stores a new promo (judged by the rules) and counts its references. */
export async function insertPromo(storeId: number, promo: Promo, references: readonly Reference[], alsoWrite: readonly GuardedWrite[] = []): Promise<void> {
  await retrying(() =>
    writeGuarded([newItemWrite(promoItem(storeId, promo, 1)), ...placementWrites(storeId, promo.id, null, { promo, references }), countMove(storeId, PROMO, 1), ...alsoWrite]),
  );
}

export const getStoredPromo = (storeId: number, promoId: number) => getOne(promoKey(storeId, promoId), 'Promo', promoFromItem);

export const getPromo = (storeId: number, promoId: number): Promise<Promo> => getStoredPromo(storeId, promoId);

export async function listPromos(storeId: number): Promise<Promo[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${PROMO}#` })).map((item) => withoutVersion(promoFromItem(item)));
}

/** A stored promo as the rules read it. */
export const promoFromStored = (item: StoredItem): Promo => withoutVersion(promoFromItem(item));

/** Promos by id (one eventually consistent BatchGetItem per 100, as the list was read); ids whose promo is gone are left out. */
export async function getPromosByIds(storeId: number, promoIds: readonly number[]): Promise<Promo[]> {
  const items = await getMany(
    promoIds.map((id) => promoKey(storeId, id)),
    { consistent: false },
  );
  return items.flatMap((item) => (item ? [withoutVersion(promoFromItem(item))] : []));
}

/** A page of the store's promos, in id order, and their total. */
export const promoPage = (storeId: number, page: number, limit: number) =>
  countedPage(storeId, storeList(storeId, PROMO), page, limit, (item) => withoutVersion(promoFromItem(item)));

/** The write only lands on the version we read; otherwise read again (or 404 when it is gone). */
const sameVersion = (version: number) => ({
  ConditionExpression: 'version = :version',
  ExpressionAttributeValues: { ':version': version },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});
const staleOrGone = (stored: unknown) => (stored ? new StaleRead() : notFound('Promo'));

/** Replaces the promo read at `version` (`current`), moving reference counts from `before` to `after`. */
export async function replacePromo(storeId: number, current: Promo, promo: Promo, version: number, before: readonly Reference[], after: readonly Reference[]): Promise<void> {
  await writeGuarded([
    { item: put({ Item: promoItem(storeId, promo, version + 1), ...sameVersion(version) }), onConditionFailed: staleOrGone },
    ...placementWrites(storeId, promo.id, { promo: current, references: before }, { promo, references: after }),
  ]);
}

/** Deletes the promo read at `version` (`current`), releasing its references. */
export async function deletePromoItem(storeId: number, current: Promo, version: number, references: readonly Reference[]): Promise<void> {
  await writeGuarded([
    { item: remove({ Key: promoKey(storeId, current.id), ...sameVersion(version) }), onConditionFailed: staleOrGone },
    ...placementWrites(storeId, current.id, { promo: current, references }, null),
    countMove(storeId, PROMO, -1),
  ]);
}
