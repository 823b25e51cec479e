import { discountFromItem, discountKey, type StoredDiscount } from '#lib/db/discount.ts';
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
 * |                                  | limit_criteria one conditioned on max_uses_per_client)                      |         |
 * | release (order canceled)         | in the cancel's TransactWrite: `ADD uses -1` on the discount and both       | 0 extra |
 * |                                  | counters, each conditioned on existence                                     |         |
 *
 * The coupon is found by its sentinel (case-insensitive code -> discount_id, read with the
 * order's packages), judged by the coupon rules (lib/domain/coupon.ts), and its use reserved
 * atomically: `uses < max_uses` holds however many orders race, and a coupon PATCHed meanwhile
 * fails the revision condition and is read again. Uses are counted per client under both
 * criteria (`COUPON_CLIENT#<discount>#<CLIENT_EMAIL|CLIENT_IDENTIFIER>#<lower value>`), so a later
 * change of `limit_criteria` counts history too. The release is conditioned on existence so that
 * a deleted coupon is not brought back as a bare counter.
 */
type Criteria = (typeof LIMIT_CRITERIA)[number];
const CRITERIA: readonly Criteria[] = ['CLIENT_EMAIL', 'CLIENT_IDENTIFIER'];
type Client = Pick<OrderCreate, 'client_email' | 'client_identifier'>;

const clientCounterKey = (storeId: number, discountId: number, criteria: Criteria, client: Client) => ({
  pk: storePk(storeId),
  sk: `${ENTITY.COUPON_CLIENT}#${padId(discountId)}#${criteria}#${(criteria === 'CLIENT_EMAIL' ? client.client_email : client.client_identifier).toLowerCase()}`,
});

/** What a reservation needs of the coupon: the revision it is conditioned on and the limits it re-checks. */
type ReservedCoupon = Pick<StoredDiscount, 'id' | 'coupon' | 'revision' | 'max_uses_per_client' | 'limit_criteria'>;

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
  const use: GuardedWrite = {
    item: update({
      Key: discountKey(storeId, coupon.id),
      UpdateExpression: 'ADD uses :one',
      ConditionExpression: 'attribute_exists(pk) AND revision = :revision AND (attribute_not_exists(max_uses) OR attribute_type(max_uses, :null) OR uses < max_uses)',
      ExpressionAttributeValues: { ':one': 1, ':revision': coupon.revision, ':null': 'NULL' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
    onConditionFailed: (current) => {
      if (!current) return couponNotFound(coupon.coupon);
      return rawNumber(current, 'revision') === coupon.revision ? couponSoldOut(coupon.coupon) : new StaleRead();
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
  return { writes: [use, ...counters], counterSks: counterKeys.map(({ key }) => key.sk) };
}

/**
 * The release of an order's coupon use, for the cancel's transaction. A target found missing
 * (the coupon was deleted) is added to `gone` and answered StaleRead, so the retried cancel
 * leaves it out.
 */
export function releaseCouponUse(storeId: number, order: { discount_id: number | null; coupon_counters: readonly string[] }, gone: Set<string>): GuardedWrite[] {
  if (order.discount_id === null) return [];
  const targets: Key[] = [discountKey(storeId, order.discount_id), ...order.coupon_counters.map((sk) => ({ pk: storePk(storeId), sk }))];
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
