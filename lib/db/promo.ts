import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { getOne } from '#lib/db/entity.ts';
import { entitySk, nowIso, storePk, stripKeys } from '#lib/db/keys.ts';
import { referenceWrites } from '#lib/db/references.ts';
import { retrying, StaleRead, transactGuarded } from '#lib/db/transact.ts';
import { queryAll } from '#lib/db/query.ts';
import { normalTarget, promoReferences, promoRuleViolations, type PromoDraft } from '#lib/domain/promo.ts';
import { HttpError, notFound } from '#lib/errors.ts';
import type { Promo, PromoCreate, PromoPatch, PromoTier, TierInput } from '#lib/schemas/promo.ts';

/**
 * Promos. A promo and its tiers (at most 10) are one item, so reading a promo is one GetItem.
 *
 * | access pattern  | key / calls                                                                          | calls    |
 * |-----------------|--------------------------------------------------------------------------------------|----------|
 * | create          | ids: one ADD on `STORE#<s> / #SEQ#PROMO` (promo id and n tier ids together)           | 2        |
 * |                 | + TransactWrite(Put `STORE#<s> / PROMO#<id>` + one ref_count ADD per target)         |          |
 * | get             | GetItem `STORE#<s> / PROMO#<id>`                                                     | 1        |
 * | list (id order) | Query `STORE#<s>`, sk begins_with `PROMO#`                                           | 1 per MB |
 * | update          | GetItem + [ADD of tier ids, only when new tiers appear] + TransactWrite(Put          | 2 or 3   |
 * |                 | conditioned on `version` + ref_count deltas)                                         |          |
 * | delete          | GetItem + TransactWrite(Delete conditioned on `version` + negative ref_count deltas) | 2        |
 *
 * Targets (PRODUCT -> package, CATEGORY -> category, tier targets -> package) are counted
 * references (lib/db/references.ts), written in the promo's own transaction: a target missing
 * from the caller's store fails its condition and the promo is refused with a 422 naming the
 * input field, and a package or category a promo targets cannot be deleted (409). A delete
 * racing a creation therefore ends one way or the other, never with a dangling target.
 *
 * Tier ids come from the same counter item as promo ids (attribute `tier_value`), so creating a
 * promo allocates all its ids in one call. A PATCH that sends `tiers` replaces them; a tier whose
 * `min_amount` matches a current tier keeps that tier's id and created_at.
 */
const PROMO = 'PROMO';
export const promoKey = (storeId: number, promoId: number) => ({ pk: storePk(storeId), sk: entitySk(PROMO, promoId) });
const sequenceKey = (storeId: number) => ({ pk: storePk(storeId), sk: `#SEQ#${PROMO}` });

type StoredPromo = Promo & { version: number };

/** Allocates `promos` (0 or 1) promo ids and `tiers` tier ids in one ADD; returns the first of each. */
async function allocateIds(storeId: number, promos: 0 | 1, tiers: number): Promise<{ promoId: number; firstTierId: number }> {
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

function assertRules(draft: PromoDraft): void {
  const violations = promoRuleViolations(draft);
  if (violations.length > 0) throw new HttpError(422, violations);
}

const tierContent = (tier: TierInput) => ({
  min_amount: tier.min_amount,
  reward_type: tier.reward_type,
  reward_value: tier.reward_type === 'FREE' ? null : (tier.reward_value ?? null),
  reward_quantity: tier.reward_quantity ?? null,
  targets: (tier.targets ?? []).map(normalTarget),
});

const sameContent = (a: ReturnType<typeof tierContent>, b: PromoTier) => JSON.stringify(a) === JSON.stringify(tierContent(b));

/**
 * The stored tiers for `inputs`, smallest minimum first. Tiers whose minimum matches one of
 * `current` keep its id and created_at (and its updated_at when nothing else changed).
 */
async function buildTiers(storeId: number, promoId: number, inputs: readonly TierInput[], current: readonly PromoTier[], now: string, firstTierId?: number) {
  const kept = new Map(current.map((tier) => [tier.min_amount, tier]));
  const fresh = inputs.filter((tier) => !kept.has(tier.min_amount)).length;
  let nextTierId = firstTierId ?? (fresh > 0 ? (await allocateIds(storeId, 0, fresh)).firstTierId : 0);
  const tiers = inputs.map((input): PromoTier => {
    const content = tierContent(input);
    const previous = kept.get(input.min_amount);
    return {
      id: previous?.id ?? nextTierId++,
      store_id: storeId,
      promo_id: promoId,
      ...content,
      created_at: previous?.created_at ?? now,
      updated_at: previous && sameContent(content, previous) ? previous.updated_at : now,
    };
  });
  return tiers.sort((a, b) => a.min_amount - b.min_amount);
}

/** The shape the rules and reference counting read, from a stored promo. */
const draftOf = (promo: Promo): PromoDraft => ({ ...promo, tiers: promo.tiers.map(tierContent) });

const promoItem = (storeId: number, promo: Promo, version: number) => ({ ...promoKey(storeId, promo.id), entity: PROMO, ...promo, version });

export async function createPromo(storeId: number, input: PromoCreate): Promise<Promo> {
  assertRules(input);
  const { promoId, firstTierId } = await allocateIds(storeId, 1, input.tiers.length);
  const now = nowIso();
  const promo: Promo = {
    id: promoId,
    store_id: storeId,
    name: input.name,
    type: input.type,
    condition_mode: input.condition_mode,
    enabled: input.enabled,
    starts_at: input.starts_at,
    ends_at: input.ends_at,
    created_at: now,
    updated_at: now,
    targets: input.targets.map(normalTarget),
    tiers: await buildTiers(storeId, promoId, input.tiers, [], now, firstTierId),
  };
  await retrying(() =>
    transactGuarded([
      {
        item: { Put: { TableName: TABLE, Item: promoItem(storeId, promo, 1), ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`promo id ${promoId} allocated twice in store ${storeId}`),
      },
      ...referenceWrites(storeId, [], promoReferences(input)),
    ]),
  );
  return promo;
}

const getStoredPromo = (storeId: number, promoId: number) => getOne<StoredPromo>(promoKey(storeId, promoId), 'Promo');

export const getPromo = (storeId: number, promoId: number): Promise<Promo> => getStoredPromo(storeId, promoId);

export async function listPromos(storeId: number): Promise<Promo[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${PROMO}#` })).map((item) => stripKeys(item) as Promo);
}

/** The write only lands on the version we read; otherwise read again (or 404 when it is gone). */
const sameVersion = (version: number) => ({
  ConditionExpression: 'version = :version',
  ExpressionAttributeValues: { ':version': version },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});
const staleOrGone = (stored: unknown) => (stored ? new StaleRead() : notFound('Promo'));

export async function updatePromo(storeId: number, promoId: number, patch: PromoPatch): Promise<Promo> {
  return retrying(async () => {
    const { version, ...current } = await getStoredPromo(storeId, promoId);
    const before = draftOf(current);
    const draft: PromoDraft = {
      type: patch.type ?? before.type,
      condition_mode: patch.condition_mode ?? before.condition_mode,
      starts_at: patch.starts_at ?? before.starts_at,
      ends_at: patch.ends_at === undefined ? before.ends_at : patch.ends_at,
      targets: patch.targets ?? before.targets,
      tiers: patch.tiers ?? before.tiers,
    };
    assertRules(draft);
    const now = nowIso();
    const promo: Promo = {
      ...current,
      ...draft,
      name: patch.name ?? current.name,
      enabled: patch.enabled ?? current.enabled,
      updated_at: now,
      targets: draft.targets.map(normalTarget),
      tiers: await buildTiers(storeId, promoId, draft.tiers, current.tiers, now),
    };
    await transactGuarded([
      { item: { Put: { TableName: TABLE, Item: promoItem(storeId, promo, version + 1), ...sameVersion(version) } }, onConditionFailed: staleOrGone },
      ...referenceWrites(storeId, promoReferences(before), promoReferences(draft)),
    ]);
    return promo;
  });
}

export async function deletePromo(storeId: number, promoId: number): Promise<void> {
  await retrying(async () => {
    const { version, ...current } = await getStoredPromo(storeId, promoId);
    await transactGuarded([
      { item: { Delete: { TableName: TABLE, Key: promoKey(storeId, promoId), ...sameVersion(version) } }, onConditionFailed: staleOrGone },
      ...referenceWrites(storeId, promoReferences(draftOf(current)), []),
    ]);
  });
}
