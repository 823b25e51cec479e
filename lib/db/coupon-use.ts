import { discountFromItem, discountKey, discountStatusBump, type StoredDiscount } from '#lib/db/discount.ts';
import { fieldsOf, type Key, type StoredItem } from '#lib/db/entity.ts';
import { padId, storePk } from '#lib/db/keys.ts';
import { rawNumber, StaleRead, update, type GuardedWrite } from '#lib/db/transact.ts';
import { couponClientLimit, couponNotFound, couponSoldOut } from '#lib/errors.ts';
import type { LIMIT_CRITERIA } from '#lib/schemas/discount.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { OrderCreate } from '#lib/schemas/order.ts';

/**
 * A coupon's use by orders: the read before an order, the reservation in the order's own
 * transaction, and the release when the order is canceled. Calls exclude the credential lookup.
 *
 * | access pattern                   | key                                                                        | calls   |
 * |----------------------------------|----------------------------------------------------------------------------|---------|
 * | coupon and this client's uses    | `STORE#<s> / DISCOUNT#<id>` + both per-client counters, in the cart's      | 0 extra |
 * |                                  | second BatchGet (lib/db/cart.ts)                                           |         |
 * | reserve a use (order creation)   | in the order's TransactWrite: `ADD uses 1` on the discount (conditioned on  | 0 extra |
 * |                                  | max_uses and on the revision read), `ADD uses 1` on both counters (the      |         |
 * |                                  | limit_criteria one conditioned on max_uses_per_client); the last use of a   |         |
 * |                                  | limited coupon also bumps the status snapshot (lib/db/discount.ts)          |         |
 * | release (order canceled)         | in the cancel's TransactWrite: `ADD uses -1` on the discount and both       | 0 extra |
 * |                                  | counters, each conditioned on existence; the discount's also on not being   |         |
 * |                                  | at max_uses: a release from there (no longer sold out) bumps the snapshot,  | (+2)    |
 * |                                  | in a second round of the cancel (its order read and transaction again)      |         |
 *
 * The coupon is found by its sentinel (case-insensitive code -> discount_id, read with the
 * order's packages), judged by the coupon rules (lib/domain/coupon.ts), and its use reserved
 * atomically: `uses < max_uses` holds however many orders race, and a coupon PATCHed meanwhile
 * fails the revision condition and is read again. Uses are counted per client under both
 * criteria (`COUPON_CLIENT#<discount>#<CLIENT_EMAIL|CLIENT_IDENTIFIER>#<lower value>`), so a later
 * change of `limit_criteria` counts history too. The release is conditioned on existence so that
 * a deleted coupon is not brought back as a bare counter.
 *
 * Whether a coupon is sold out is part of its status, which the status list keeps as a snapshot
 * (lib/db/discount.ts): exactly the writes that cross `max_uses` bump it, and only those, so an
 * ordinary order never touches that per-store item. A use is the last one when it takes `uses`
 * to `max_uses`: a use read short of that is conditioned on `uses < max_uses - 1`, so if other
 * orders took the uses in between it fails, is read again (StaleRead) and is written as the last
 * one, with the bump. A release from `max_uses` is the one that makes the coupon usable again:
 * the release is conditioned on `uses <> max_uses`, and when that fails the next round (the
 * caller's retry, told by `gone`) writes it with the bump.
 */
type Criteria = (typeof LIMIT_CRITERIA)[number];
const CRITERIA: readonly Criteria[] = ['CLIENT_EMAIL', 'CLIENT_IDENTIFIER'];
type Client = Pick<OrderCreate, 'client_email' | 'client_identifier'>;

const clientCounterKey = (storeId: number, discountId: number, criteria: Criteria, client: Client) => ({
  pk: storePk(storeId),
  sk: `${ENTITY.COUPON_CLIENT}#${padId(discountId)}#${criteria}#${(criteria === 'CLIENT_EMAIL' ? client.client_email : client.client_identifier).toLowerCase()}`,
});

/** What a reservation needs of the coupon: the revision it is conditioned on, the limits it re-checks and the uses it read. */
type ReservedCoupon = Pick<StoredDiscount, 'id' | 'coupon' | 'revision' | 'max_uses_per_client' | 'limit_criteria' | 'max_uses' | 'uses'>;

/** The keys of the coupon and this client's two use counters, read in the cart's BatchGet (lib/db/cart.ts). */
export const couponUseKeys = (storeId: number, discountId: number, client: Client): Key[] => [
  discountKey(storeId, discountId),
  clientCounterKey(storeId, discountId, 'CLIENT_EMAIL', client),
  clientCounterKey(storeId, discountId, 'CLIENT_IDENTIFIER', client),
];

/** The coupon and this client's use counts from the items of `couponUseKeys`; undefined when the coupon was deleted after its sentinel was read. */
export function couponUseOf([couponItem, emailCounter, identifierCounter]: readonly (StoredItem | undefined)[]):
  | { record: StoredDiscount; clientUses: Record<Criteria, number> }
  | undefined {
  if (!couponItem) return undefined;
  const uses = (counter: StoredItem | undefined) => (counter ? fieldsOf(counter, ENTITY.COUPON_CLIENT).number('uses', 0) : 0);
  return { record: discountFromItem(couponItem), clientUses: { CLIENT_EMAIL: uses(emailCounter), CLIENT_IDENTIFIER: uses(identifierCounter) } };
}

/** A reservation: the writes for the order's transaction and the counters' sort keys, kept on the order for the release. */
export interface CouponReservation {
  writes: GuardedWrite[];
  counterSks: string[];
}

/** The coupon's part of the order's transaction: the reserved use and the two per-client counts. */
export function reserveCouponUse(storeId: number, coupon: ReservedCoupon, client: Client, now: string): CouponReservation {
  // The revision holds max_uses as read; the last use (uses reaching max_uses) moves the coupon to SOLD_OUT.
  const lastUse = coupon.max_uses !== null && coupon.uses + 1 >= coupon.max_uses;
  const room = coupon.max_uses === null ? '' : lastUse ? ' AND uses < max_uses' : ' AND uses < :before_last';
  const use: GuardedWrite = {
    item: update({
      Key: discountKey(storeId, coupon.id),
      UpdateExpression: 'ADD uses :one',
      ConditionExpression: `attribute_exists(pk) AND revision = :revision${room}`,
      ExpressionAttributeValues: { ':one': 1, ':revision': coupon.revision, ...(coupon.max_uses !== null && !lastUse ? { ':before_last': coupon.max_uses - 1 } : {}) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
    onConditionFailed: (current) => {
      if (!current) return couponNotFound(coupon.coupon);
      if (rawNumber(current, 'revision') !== coupon.revision) return new StaleRead();
      // Sold out; or other orders took the uses up to the last one meanwhile: read again, and this becomes the last use.
      return coupon.max_uses !== null && rawNumber(current, 'uses') >= coupon.max_uses ? couponSoldOut(coupon.coupon) : new StaleRead();
    },
  };
  const counterKeys = CRITERIA.map((criteria) => ({ criteria, key: clientCounterKey(storeId, coupon.id, criteria, client) }));
  const counters = counterKeys.map(({ criteria, key }): GuardedWrite => {
    const limited = coupon.max_uses_per_client !== null && criteria === coupon.limit_criteria;
    return {
      item: update({
        Key: key,
        UpdateExpression: 'ADD uses :one SET store_id = :store, entity = :entity, updated_at = :now',
        ...(limited ? { ConditionExpression: 'attribute_not_exists(uses) OR uses < :max' } : {}),
        ExpressionAttributeValues: { ':one': 1, ':store': storeId, ':entity': ENTITY.COUPON_CLIENT, ':now': now, ...(limited ? { ':max': coupon.max_uses_per_client } : {}) },
      }),
      onConditionFailed: () => couponClientLimit(coupon),
    };
  });
  return { writes: [use, ...counters, ...(lastUse ? [discountStatusBump(storeId)] : [])], counterSks: counterKeys.map(({ key }) => key.sk) };
}

/** The mark in `gone` that the coupon was found at max_uses: its release makes it usable again. */
const soldOutMark = (discountSk: string) => `${discountSk}#AT_MAX_USES`;

/**
 * The release of an order's coupon use, for the cancel's transaction. A target found missing
 * (the coupon was deleted) is added to `gone` and answered StaleRead, so the retried cancel
 * leaves it out; a coupon found at max_uses is marked in `gone` the same way, so the retried
 * release bumps the status snapshot with it.
 */
export function releaseCouponUse(storeId: number, order: { discount_id: number | null; coupon_counters: readonly string[] }, gone: Set<string>): GuardedWrite[] {
  if (order.discount_id === null) return [];
  const discount = discountKey(storeId, order.discount_id);
  if (gone.has(discount.sk)) return releaseCounters(storeId, order.coupon_counters, gone);
  const atMaxUses = gone.has(soldOutMark(discount.sk));
  const use: GuardedWrite = {
    item: update({
      Key: discount,
      UpdateExpression: 'ADD uses :minus',
      ConditionExpression: atMaxUses ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND (attribute_not_exists(max_uses) OR attribute_type(max_uses, :null) OR uses <> max_uses)',
      ExpressionAttributeValues: { ':minus': -1, ...(atMaxUses ? {} : { ':null': 'NULL' }) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
    onConditionFailed: (current) => {
      gone.add(current ? soldOutMark(discount.sk) : discount.sk);
      return new StaleRead();
    },
  };
  return [use, ...(atMaxUses ? [discountStatusBump(storeId)] : []), ...releaseCounters(storeId, order.coupon_counters, gone)];
}

/** The per-client counters' releases (those found missing before left out). */
function releaseCounters(storeId: number, counterSks: readonly string[], gone: Set<string>): GuardedWrite[] {
  const targets: Key[] = counterSks.map((sk) => ({ pk: storePk(storeId), sk }));
  return targets
    .filter((key) => !gone.has(key.sk))
    .map((key) => ({
      item: update({
        Key: key,
        UpdateExpression: 'ADD uses :minus',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':minus': -1 },
      }),
      onConditionFailed: () => {
        gone.add(key.sk);
        return new StaleRead();
      },
    }));
}
