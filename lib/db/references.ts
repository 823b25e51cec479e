import { entitySk, storePk } from '#lib/db/keys.ts';
import { update, type GuardedWrite } from '#lib/db/transact.ts';
import { unprocessable } from '#lib/errors.ts';
import type { ReferableKind, Reference } from '#lib/schemas/common.ts';

export type { ReferableKind, Reference };

/**
 * Referential integrity inside the catalog. Promos refer to packages and categories (targets),
 * variables refer to packages (`applies_to`). Every referable item carries `ref_count`:
 *
 * - a write that adds references runs, in the same TransactWrite as the referencing item, one
 *   `ADD ref_count :n` per distinct referenced item, conditioned on `attribute_exists(pk)`. A
 *   missing item (or one of another store: the key holds the caller's store) fails that
 *   condition, and the caller answers 422 naming the offending input field;
 * - a write that drops references adds a negative count the same way;
 * - deleting a referable item is conditioned on `ref_count` being 0 (409 otherwise), so a
 *   reference can never dangle, even when a delete races a promo creation.
 */
export const referableKey = (storeId: number, kind: ReferableKind, id: number) => ({ pk: storePk(storeId), sk: entitySk(kind, id) });

const refId = (ref: { kind: ReferableKind; id: number }) => `${ref.kind}#${ref.id}`;

/** Condition for deleting a referable item: nothing refers to it. */
export const unreferencedCondition = {
  ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(ref_count) OR ref_count <= :zero)',
  ExpressionAttributeValues: { ':zero': 0 },
};

const KIND_NAMES: Record<ReferableKind, string> = { PACKAGE: 'Package', CATEGORY: 'Category' };

export const missingReference = (ref: { kind: ReferableKind; id: number; field: string }) =>
  unprocessable(`${KIND_NAMES[ref.kind]} ${ref.id} does not exist in this store`, ref.field);

/**
 * Which promos or variables refer to a referable item: the set attribute its referrers keep on it
 * (lib/db/cart-index.ts), so that a cart finds the promos and variables of its packages from the
 * packages (and their categories) it reads anyway.
 */
export type ReferrerSet = 'promo_ids' | 'variable_ids';

/**
 * The writes that move reference counts from `before` to `after`, each failing as a 422 that
 * names the input field of its own reference. Items whose count does not change are left out.
 * With `referrer`, the same write adds the referrer's id to the item's set when the item starts
 * being referred to by it, and deletes it when it stops.
 */
export function referenceWrites(storeId: number, before: readonly Reference[], after: readonly Reference[], referrer?: { set: ReferrerSet; id: number }): GuardedWrite[] {
  const delta = new Map<string, { ref: Reference; change: number; was: boolean; is: boolean }>();
  for (const ref of before) {
    const entry = delta.get(refId(ref)) ?? { ref, change: 0, was: true, is: false };
    entry.change -= 1;
    delta.set(refId(ref), entry);
  }
  for (const ref of after) {
    const entry = delta.get(refId(ref));
    // Prefer the new input's field name for the error message.
    delta.set(refId(ref), { ref, change: (entry?.change ?? 0) + 1, was: entry?.was ?? false, is: true });
  }
  return [...delta.values()]
    .filter(({ change, was, is }) => change !== 0 || (referrer !== undefined && was !== is))
    .map(({ ref, change, was, is }) => {
      const joins = referrer !== undefined && is && !was;
      const leaves = referrer !== undefined && was && !is;
      const adds = [...(change === 0 ? [] : ['ref_count :change']), ...(joins ? ['#referrers :me'] : [])];
      const expression = [adds.length > 0 ? `ADD ${adds.join(', ')}` : '', leaves ? 'DELETE #referrers :me' : ''].filter(Boolean).join(' ');
      return {
        item: update({
          Key: referableKey(storeId, ref.kind, ref.id),
          UpdateExpression: expression,
          // Only a new reference needs its target to exist; dropping one from a since-deleted
          // item cannot happen (deletes wait for ref_count 0), but must not resurrect it either.
          ConditionExpression: 'attribute_exists(pk)',
          ...(joins || leaves ? { ExpressionAttributeNames: { '#referrers': referrer!.set } } : {}),
          ExpressionAttributeValues: { ...(change === 0 ? {} : { ':change': change }), ...(joins || leaves ? { ':me': new Set([referrer!.id]) } : {}) },
        }),
        onConditionFailed: () => missingReference(ref),
      };
    });
}

/** "1 variation", "2 promos": for the 409 that says what still refers to an item. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
