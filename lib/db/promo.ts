import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { getOne } from '#lib/db/entity.ts';
import { entitySk, storePk, stripKeys } from '#lib/db/keys.ts';
import { countedPage, countMove, storeList } from '#lib/db/list-count.ts';
import { referenceWrites } from '#lib/db/references.ts';
import { retrying, StaleRead, writeGuarded } from '#lib/db/transact.ts';
import { queryAll } from '#lib/db/query.ts';
import { notFound } from '#lib/errors.ts';
import type { Reference } from '#lib/schemas/common.ts';
import type { Promo } from '#lib/schemas/promo.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

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
  const result = await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: sequenceKey(storeId),
      UpdateExpression: promos ? 'ADD #value :promos, tier_value :tiers SET store_id = :store' : 'ADD tier_value :tiers SET store_id = :store',
      ExpressionAttributeNames: promos ? { '#value': 'value' } : undefined,
      ExpressionAttributeValues: { ':tiers': tiers, ':store': storeId, ...(promos ? { ':promos': promos } : {}) },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return { promoId: Number(result.Attributes?.value), firstTierId: Number(result.Attributes?.tier_value) - tiers + 1 };
}

const promoItem = (storeId: number, promo: Promo, version: number) => ({ ...promoKey(storeId, promo.id), entity: PROMO, ...promo, version });

/** Stores a new promo (judged by the rules) and counts its references. */
export async function insertPromo(storeId: number, promo: Promo, references: readonly Reference[]): Promise<void> {
  await retrying(() =>
    writeGuarded([
      {
        item: { Put: { TableName: TABLE, Item: promoItem(storeId, promo, 1), ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`promo id ${promo.id} allocated twice in store ${storeId}`),
      },
      ...referenceWrites(storeId, [], references),
      countMove(storeId, PROMO, 1),
    ]),
  );
}

export const getStoredPromo = (storeId: number, promoId: number) => getOne(promoKey(storeId, promoId), 'Promo', (item) => stripKeys(item) as StoredPromo);

export const getPromo = (storeId: number, promoId: number): Promise<Promo> => getStoredPromo(storeId, promoId);

export async function listPromos(storeId: number): Promise<Promo[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${PROMO}#` })).map((item) => stripKeys(item) as Promo);
}

/** A page of the store's promos, in id order, and their total. */
export const promoPage = (storeId: number, page: number, limit: number) => countedPage<Promo>(storeId, storeList(storeId, PROMO), page, limit);

/** The write only lands on the version we read; otherwise read again (or 404 when it is gone). */
const sameVersion = (version: number) => ({
  ConditionExpression: 'version = :version',
  ExpressionAttributeValues: { ':version': version },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});
const staleOrGone = (stored: unknown) => (stored ? new StaleRead() : notFound('Promo'));

/** Replaces the promo read at `version`, moving reference counts from `before` to `after`. */
export async function replacePromo(storeId: number, promo: Promo, version: number, before: readonly Reference[], after: readonly Reference[]): Promise<void> {
  await writeGuarded([
    { item: { Put: { TableName: TABLE, Item: promoItem(storeId, promo, version + 1), ...sameVersion(version) } }, onConditionFailed: staleOrGone },
    ...referenceWrites(storeId, before, after),
  ]);
}

/** Deletes the promo read at `version`, releasing its references. */
export async function deletePromoItem(storeId: number, promoId: number, version: number, references: readonly Reference[]): Promise<void> {
  await writeGuarded([
    { item: { Delete: { TableName: TABLE, Key: promoKey(storeId, promoId), ...sameVersion(version) } }, onConditionFailed: staleOrGone },
    ...referenceWrites(storeId, references, []),
    countMove(storeId, PROMO, -1),
  ]);
}
