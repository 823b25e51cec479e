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
 * The writes that move reference counts from `before` to `after`, each failing as a 422 that
 * names the input field of its own reference. Items whose count does not change are left out.
 */
export function referenceWrites(storeId: number, before: readonly Reference[], after: readonly Reference[]): GuardedWrite[] {
  const delta = new Map<string, { ref: Reference; change: number }>();
  for (const ref of before) {
    const entry = delta.get(refId(ref)) ?? { ref, change: 0 };
    entry.change -= 1;
    delta.set(refId(ref), entry);
  }
  for (const ref of after) {
    const entry = delta.get(refId(ref));
    // Prefer the new input's field name for the error message.
    delta.set(refId(ref), { ref, change: (entry?.change ?? 0) + 1 });
  }
  return [...delta.values()]
    .filter(({ change }) => change !== 0)
    .map(({ ref, change }) => ({
      item: update({
        Key: referableKey(storeId, ref.kind, ref.id),
        UpdateExpression: 'ADD ref_count :change',
        // Only a new reference needs its target to exist; dropping one from a since-deleted
        // item cannot happen (deletes wait for ref_count 0), but must not resurrect it either.
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':change': change },
      }),
      onConditionFailed: () => missingReference(ref),
    }));
}

/** "1 variation", "2 promos": for the 409 that says what still refers to an item. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
