import { storePk } from '#lib/db/keys.ts';
import { update, writeReturning } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Id sequences: one counter item per store and resource type (`STORE#1 / #SEQ#TAG`), and one
 * global counter for store ids (`#SEQ / STORE`). `ADD` is atomic, so parallel creations never
 * share an id.
 *
 * | access pattern                    | key                          | calls |
 * |-----------------------------------|------------------------------|-------|
 * | n consecutive ids of a resource   | `STORE#<s> / #SEQ#<RESOURCE>`, `ADD n` (UPDATED_NEW) | 1 |
 * | next store id                     | `#SEQ / STORE`, `ADD 1`      | 1     |
 *
 * (Promos allocate their tier ids from a second attribute of their own counter, in the same
 * call as the promo id: lib/db/promo.ts.)
 */
async function increment(pk: string, sk: string, storeId: number | undefined, count: number): Promise<number> {
  const counter = await writeReturning(
    {
      item: update({
        Key: { pk, sk },
        UpdateExpression: storeId === undefined ? 'ADD #value :count' : 'ADD #value :count SET store_id = :store',
        ExpressionAttributeNames: { '#value': 'value' },
        ExpressionAttributeValues: storeId === undefined ? { ':count': count } : { ':count': count, ':store': storeId },
      }),
    },
    'UPDATED_NEW',
  );
  return Number(counter?.value);
}

/** Allocates `count` consecutive ids of `resource` in the store with one ADD; returns the first. */
export async function allocateIds(storeId: number, resource: string, count: number): Promise<number> {
  return (await increment(storePk(storeId), `#SEQ#${resource}`, storeId, count)) - count + 1;
}

export function nextId(storeId: number, resource: string): Promise<number> {
  return allocateIds(storeId, resource, 1);
}

export function nextStoreId(): Promise<number> {
  return increment('#SEQ', ENTITY.STORE, undefined, 1);
}
