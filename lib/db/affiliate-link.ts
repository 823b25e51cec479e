import { affiliateKey, affiliateNotFound, refCodeInUse, refCodeKey, visitCounterKey, type Affiliate, type RefHolder, type StoredLink } from '#lib/db/affiliate.ts';
import { nowIso } from '#lib/db/keys.ts';
import type { RateWindow } from '#lib/db/rate-limit.ts';
import { nextId } from '#lib/db/sequence.ts';
import { putNewItem, remove, retrying, update, writeGuarded, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { forbidden, notFound, unprocessable } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * An affiliate's extra links and the visits of its codes.
 *
 * | access pattern       | key                                                                    | calls |
 * |----------------------|------------------------------------------------------------------------|-------|
 * | add a link           | sequence ADD (the AFFILIATE sequence, so a link id never equals a main link's) + TransactWrite (SET `links.<id>` on the affiliate, guarded by its existence, the count and the status, + Put the code's sentinel); nothing is read first | 2 |
 * | delete a link        | TransactWrite (REMOVE `links.<id>` + Delete the code's sentinel)        | 1     |
 * | count a visit        | TransactWrite (the visitor's rate window + ADD `main` or `c<link id>` on `STORE#<s> / AFFILIATE_VISITS#<customer>#<day>`, TTL 8 days) | 1 |
 * | d7 visits            | the 7 day counters, by key, inside the panel's BatchGet (lib/db/affiliate.ts) | 0 |
 */

/** The counter attribute of a code: `main` for the main code, `c<link id>` for a link. */
export const visitAttribute = (linkId: number | undefined) => (linkId === undefined ? 'main' : `c${linkId}`);

/**
 * A new link of the customer's affiliate, with its code claimed in the store, guarded only by the
 * write's conditions: no affiliate 404, a blocked one 403, the code held by any affiliate or link
 * 409, `linksMax` links already 422 (the first of these that failed, in that order).
 */
export async function addLink(
  storeId: number,
  customerId: number,
  name: string,
  refCode: string,
  linksMax: number,
  recordOnKey: (linkId: number) => GuardedWrite[],
): Promise<StoredLink> {
  const id = await nextId(storeId, ENTITY.AFFILIATE);
  const link: StoredLink = { id, name, ref_code: refCode, sales: 0, revenue: 0, created_at: nowIso() };
  await retrying(() =>
    writeGuarded([
      {
        item: update({
          Key: affiliateKey(storeId, customerId),
          UpdateExpression: 'SET #links.#link = :link, updated_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND size(#links) < :max AND #status <> :blocked',
          ExpressionAttributeNames: { '#links': 'links', '#link': String(id), '#status': 'status' },
          ExpressionAttributeValues: { ':link': link, ':now': link.created_at, ':max': linksMax, ':blocked': 'blocked' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        onConditionFailed: (current) =>
          current === undefined
            ? affiliateNotFound()
            : current.status?.S === 'blocked'
              ? forbidden('This affiliate is blocked and cannot add links', 'AFFILIATE_BLOCKED')
              : unprocessable(`An affiliate has at most ${linksMax} links besides the main code`, 'ref_code', 'LINK_LIMIT_REACHED'),
      },
      {
        item: putNewItem({ ...refCodeKey(storeId, refCode), entity: ENTITY.AFFILIATE_REF, store_id: storeId, customer_id: customerId, link_id: id, ref_code: refCode }),
        onConditionFailed: refCodeInUse,
      },
      ...recordOnKey(id),
    ]),
  );
  return link;
}

/** Deletes a link and frees its code (it becomes unknown to orders and visits). */
export async function removeLink(affiliate: Affiliate, link: StoredLink): Promise<void> {
  const { store_id: storeId, customer_id: customerId } = affiliate;
  try {
    await writeGuarded([
      {
        item: update({
          Key: affiliateKey(storeId, customerId),
          UpdateExpression: 'REMOVE #links.#link SET updated_at = :now',
          ConditionExpression: 'attribute_exists(#links.#link)',
          ExpressionAttributeNames: { '#links': 'links', '#link': String(link.id) },
          ExpressionAttributeValues: { ':now': nowIso() },
        }),
        onConditionFailed: () => new WrittenConcurrently(),
      },
      {
        item: remove({ Key: refCodeKey(storeId, link.ref_code), ConditionExpression: 'link_id = :id', ExpressionAttributeValues: { ':id': link.id } }),
        onConditionFailed: () => new WrittenConcurrently(),
      },
    ]);
  } catch (error) {
    // A concurrent delete of the same link won: the link is gone, as asked.
    if (error instanceof WrittenConcurrently) throw notFound('Link');
    throw error;
  }
}

/**
 * Counts one visit of a code on its day's counter, unless the visitor's window has already
 * counted one (then nothing is written; false). The counter expires after `expiresEpoch`.
 */
export async function countVisit(storeId: number, holder: RefHolder, day: string, expiresEpoch: number, window: RateWindow): Promise<boolean> {
  try {
    await writeGuarded([
      { ...window.write, onConditionFailed: () => new WrittenConcurrently() },
      {
        item: update({
          Key: visitCounterKey(storeId, holder.customerId, day),
          UpdateExpression: 'ADD #code :one SET store_id = :store, expires_epoch = :expires',
          ExpressionAttributeNames: { '#code': visitAttribute(holder.linkId) },
          ExpressionAttributeValues: { ':one': 1, ':store': storeId, ':expires': expiresEpoch },
        }),
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof WrittenConcurrently) return false;
    throw error;
  }
}
