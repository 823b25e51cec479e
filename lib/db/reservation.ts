import { fieldsOf, type StoredItem } from '#lib/db/entity.ts';
import { padId, storePk } from '#lib/db/keys.ts';
import { packageKey } from '#lib/db/package.ts';
import { check, StaleRead, update, type GuardedWrite, type RawItem } from '#lib/db/transact.ts';
import { unprocessable } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { Reserved } from '#lib/schemas/order.ts';

/**
 * What an order holds of its packages: units of a limited `stock`, and units counted against a
 * package's `per_customer_limit`. Both are taken in the order's own TransactWrite and given back
 * in the cancel's (a refund will call the same release). The order item keeps what it took
 * (`stock_reserved`, `limit_reserved`), so a release gives back exactly that, whatever the
 * package says by then. Calls exclude the credential lookup.
 *
 * | access pattern                    | key                                                                      | calls   |
 * |-----------------------------------|--------------------------------------------------------------------------|---------|
 * | units this customer holds         | `STORE#<s> / CUSTOMER_LIMIT#<package>#<lower email>` (`units`), read in   | 0 extra |
 * |                                   | the cart's BatchGet (lib/db/cart.ts)                                     |         |
 * | take stock (order placed)         | in the order's TransactWrite: `ADD stock -n` on the package, conditioned | 0 extra |
 * |                                   | on `stock >= n` and `enabled`; a package with unlimited stock gets a     |         |
 * |                                   | ConditionCheck that it still exists, is enabled and is still unlimited   |         |
 * | count against the limit           | same transaction: `ADD units n` on the counter, conditioned on           | 0 extra |
 * |                                   | `units <= limit - n`                                                     |         |
 * | give back (cancel)                | in the cancel's TransactWrite: `ADD stock n` conditioned on stock being a | 0 extra |
 * |                                   | number, `ADD units -n` on the counter                                    |         |
 *
 * Stock never goes below 0 and a customer never holds more than the limit, however many orders
 * race: each condition is checked atomically with its ADD. A package made unlimited (stock
 * NULL) or deleted in between is skipped by the release (`gone`), not turned back into a number.
 */
export const limitCounterKey = (storeId: number, packageId: number, email: string) => ({
  pk: storePk(storeId),
  sk: `${ENTITY.CUSTOMER_LIMIT}#${padId(packageId)}#${email.toLowerCase()}`,
});

/** The units a customer holds of a limited package (no counter yet: none). */
export const heldUnits = (counter: StoredItem | undefined): number => (counter ? fieldsOf(counter, ENTITY.CUSTOMER_LIMIT).number('units', 0) : 0);

export interface PackageReservation {
  /** Every line's package: each gets exactly one write (a package cannot appear twice in one transaction). */
  packageIds: readonly number[];
  stock: readonly Reserved[];
  limits: readonly (Reserved & { limit: number })[];
  email: string;
  /** The input path of a package's line, for the 422 of a condition the race lost. */
  fieldOf: (packageId: number) => string;
  now: string;
}

const ENABLED = '(attribute_not_exists(enabled) OR enabled = :true)';

function takeStock(storeId: number, taken: Reserved, field: string): GuardedWrite {
  return {
    item: update({
      Key: packageKey(storeId, taken.package_id),
      UpdateExpression: 'ADD stock :minus',
      ConditionExpression: `attribute_exists(pk) AND ${ENABLED} AND stock >= :units`,
      ExpressionAttributeValues: { ':minus': -taken.units, ':units': taken.units, ':true': true },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
    onConditionFailed: (current: RawItem | undefined) => {
      const stock = current?.stock?.N;
      // Deleted, disabled or made unlimited since the read: read again and decide again.
      if (!current || current.enabled?.BOOL === false || stock === undefined) return new StaleRead();
      return unprocessable(
        Number(stock) === 0 ? `Package ${taken.package_id} is out of stock` : `Package ${taken.package_id} has only ${stock} unit(s) left`,
        field,
        'OUT_OF_STOCK',
      );
    },
  };
}

function checkUnlimited(storeId: number, packageId: number): GuardedWrite {
  return {
    item: check({
      Key: packageKey(storeId, packageId),
      ConditionExpression: `attribute_exists(pk) AND ${ENABLED} AND (attribute_not_exists(stock) OR attribute_type(stock, :null))`,
      ExpressionAttributeValues: { ':true': true, ':null': 'NULL' },
    }),
    // Deleted, disabled or given a stock since the read: read again, and the cart answers 422 or reserves it.
    onConditionFailed: () => new StaleRead(),
  };
}

function countAgainstLimit(storeId: number, held: Reserved & { limit: number }, email: string, field: string, now: string): GuardedWrite {
  return {
    item: update({
      Key: limitCounterKey(storeId, held.package_id, email),
      UpdateExpression: 'ADD units :units SET store_id = :store, entity = :entity, updated_at = :now',
      ConditionExpression: 'attribute_not_exists(units) OR units <= :room',
      ExpressionAttributeValues: { ':units': held.units, ':room': held.limit - held.units, ':store': storeId, ':entity': ENTITY.CUSTOMER_LIMIT, ':now': now },
    }),
    onConditionFailed: () => unprocessable(`Package ${held.package_id} is limited to ${held.limit} unit(s) per customer`, field, 'LIMIT_REACHED'),
  };
}

/** The order's writes for its packages: stock taken or the package checked, and the limits counted. */
export function reservePackages(storeId: number, reservation: PackageReservation): GuardedWrite[] {
  const stockOf = new Map(reservation.stock.map((taken) => [taken.package_id, taken]));
  return [
    ...reservation.packageIds.map((packageId) => {
      const taken = stockOf.get(packageId);
      return taken ? takeStock(storeId, taken, reservation.fieldOf(packageId)) : checkUnlimited(storeId, packageId);
    }),
    ...reservation.limits.map((held) => countAgainstLimit(storeId, held, reservation.email, reservation.fieldOf(held.package_id), reservation.now)),
  ];
}

/** What a release needs of the order. */
export interface HeldByOrder {
  client_email: string;
  stock_reserved?: readonly Reserved[];
  limit_reserved?: readonly Reserved[];
}

/**
 * The writes that give an order's units back, for the cancel's (or a refund's) transaction. A
 * target found gone (package deleted or made unlimited, counter missing) is added to `gone` and
 * answered StaleRead, so the retried transaction leaves it out.
 */
export function releasePackages(storeId: number, order: HeldByOrder, gone: Set<string>): GuardedWrite[] {
  const skipIfGone = (sk: string) => () => {
    gone.add(sk);
    return new StaleRead();
  };
  const stock = (order.stock_reserved ?? []).map((taken) => ({ key: packageKey(storeId, taken.package_id), taken }));
  const limits = (order.limit_reserved ?? []).map((held) => ({ key: limitCounterKey(storeId, held.package_id, order.client_email), held }));
  return [
    ...stock
      .filter(({ key }) => !gone.has(key.sk))
      .map(
        ({ key, taken }): GuardedWrite => ({
          item: update({
            Key: key,
            UpdateExpression: 'ADD stock :units',
            ConditionExpression: 'attribute_exists(pk) AND attribute_type(stock, :number)',
            ExpressionAttributeValues: { ':units': taken.units, ':number': 'N' },
          }),
          onConditionFailed: skipIfGone(key.sk),
        }),
      ),
    ...limits
      .filter(({ key }) => !gone.has(key.sk))
      .map(
        ({ key, held }): GuardedWrite => ({
          item: update({ Key: key, UpdateExpression: 'ADD units :minus', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':minus': -held.units } }),
          onConditionFailed: skipIfGone(key.sk),
        }),
      ),
  ];
}
