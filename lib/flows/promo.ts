import { nowIso } from '#lib/db/keys.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { allocatePromoIds, deletePromoItem, getPromo, getStoredPromo, insertPromo, replacePromo } from '#lib/db/promo.ts';
import { retrying } from '#lib/db/transact.ts';
import { assertPromoRules, buildTiers, draftOf, newTierCount, normalTarget, promoReferences, type PromoDraft } from '#lib/domain/promo.ts';
import type { Promo, PromoCreate, PromoPatch } from '#lib/schemas/promo.ts';

/**
 * Promo writes: the rules (lib/domain/promo.ts) judge a creation and the promo a PATCH would
 * produce alike, then lib/db/promo.ts writes it with its reference counts. A write that finds
 * the promo changed since it was read reads again (`retrying`).
 */
export async function createPromo(storeId: number, input: PromoCreate): Promise<Promo> {
  return createOnce(
    (promoId: number) => getPromo(storeId, promoId),
    async (recordOnKey) => {
      assertPromoRules(input);
      const { promoId, firstTierId } = await allocatePromoIds(storeId, 1, input.tiers.length);
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
        tiers: buildTiers({ storeId, promoId, firstTierId }, input.tiers, [], now),
      };
      await insertPromo(storeId, promo, promoReferences(input), recordOnKey(promoId));
      return promo;
    },
  );
}

/** A PATCH replaces `targets` and `tiers` whole; a tier with the same `min_amount` keeps its id. */
export function updatePromo(storeId: number, promoId: number, patch: PromoPatch): Promise<Promo> {
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
    assertPromoRules(draft);
    const now = nowIso();
    const fresh = newTierCount(draft.tiers, current.tiers);
    const firstTierId = fresh > 0 ? (await allocatePromoIds(storeId, 0, fresh)).firstTierId : 0;
    const promo: Promo = {
      ...current,
      ...draft,
      name: patch.name ?? current.name,
      enabled: patch.enabled ?? current.enabled,
      updated_at: now,
      targets: draft.targets.map(normalTarget),
      tiers: buildTiers({ storeId, promoId, firstTierId }, draft.tiers, current.tiers, now),
    };
    await replacePromo(storeId, current, promo, version, promoReferences(before), promoReferences(draft));
    return promo;
  });
}

export async function deletePromo(storeId: number, promoId: number): Promise<void> {
  await retrying(async () => {
    const { version, ...current } = await getStoredPromo(storeId, promoId);
    await deletePromoItem(storeId, current, version, promoReferences(draftOf(current)));
  });
}
