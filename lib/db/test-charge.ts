import { fieldsOf, readItem, type StoredItem } from '#lib/db/entity.ts';
import { put, putNewItem, writeGuarded, writeIf } from '#lib/db/transact.ts';
import type { TestCharge, TestChargeStatus } from '#lib/schemas/payment.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * The TEST gateway's own book (lib/payments/test-gateway.ts `TestGatewayLedger`): the charges the
 * pretend provider holds, one item each, filed under the TEST account they belong to, as a real
 * provider keeps each account's payments to itself.
 *
 * | access pattern                | key                                                         | calls |
 * |-------------------------------|-------------------------------------------------------------|-------|
 * | create (idempotent)           | Put `TEST_CHARGE#<account> / TEST_CHARGE#<ref>` if new; else GetItem of the one stored | 1-2 |
 * | a charge of an account        | GetItem, consistent                                         | 1     |
 * | a button's or a call's change | Put if `updated_at` is the one read                         | 1     |
 * | create, on the stack          | TransactWrite: the charge if new + `TEST_CHARGE_REF#<ref> / TEST_CHARGE_REF` (its account and store) | 1-2 |
 * | the owner of a ref (the page) | GetItem `TEST_CHARGE_REF#<ref>`                             | 1     |
 *
 * Another account's ref is simply another key: as absent as a ref that was never made.
 */
const TEST_CHARGE = ENTITY.TEST_CHARGE;
const TEST_CHARGE_REF = ENTITY.TEST_CHARGE_REF;
const TEST_CHARGE_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELED', 'REFUNDED', 'CHARGEBACK'] as const satisfies readonly TestChargeStatus[];
const DISPUTE_STAGES = ['OPEN', 'WON', 'LOST'] as const;

export const testChargeKey = (account: string, ref: string) => ({ pk: `${TEST_CHARGE}#${account}`, sk: `${TEST_CHARGE}#${ref}` });

const testChargeItem = (charge: TestCharge) => ({ ...testChargeKey(charge.account, charge.ref), entity: TEST_CHARGE, ...charge });

export function testChargeFromItem(item: StoredItem): TestCharge {
  const field = fieldsOf(item, TEST_CHARGE);
  const dispute = field.stringOrNull('dispute');
  return {
    ref: field.string('ref'),
    reference: field.string('reference'),
    account: field.string('account'),
    amount_cents: field.number('amount_cents'),
    currency: field.string('currency'),
    status: field.oneOf('status', TEST_CHARGE_STATUSES),
    refunded_cents: field.number('refunded_cents'),
    dispute: dispute === null ? null : field.oneOf('dispute', DISPUTE_STAGES),
    paid_at: field.stringOrNull('paid_at'),
    expires_at: field.stringOrNull('expires_at'),
    notification_url: field.stringOrNull('notification_url'),
    return_url: field.stringOrNull('return_url'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

async function readTestCharge(account: string, ref: string): Promise<TestCharge | undefined> {
  const item = await readItem(testChargeKey(account, ref), true);
  return item ? testChargeFromItem(item) : undefined;
}

/** The ledger the TEST adapter is made with on the stack (it has the shape of lib/payments' `TestGatewayLedger`, which lib/db may not import). */
export const testChargeLedger = {
  async putIfAbsent(charge: TestCharge): Promise<TestCharge> {
    if (await writeIf(putNewItem(testChargeItem(charge)))) return charge;
    const stored = await readTestCharge(charge.account, charge.ref);
    if (!stored) throw new Error(`TEST charge ${charge.ref} refused as a duplicate, then not found`);
    return stored;
  },
  get: readTestCharge,
  replace: (charge: TestCharge, previous: TestCharge): Promise<boolean> =>
    writeIf(put({ Item: testChargeItem(charge), ConditionExpression: 'updated_at = :read', ExpressionAttributeValues: { ':read': previous.updated_at } })),
};

/** Who holds a TEST charge: its account (the ledger's key) and the store whose TEST account it is. */
export interface TestChargeOwner {
  account: string;
  store_id: number;
}

const testChargeRefKey = (ref: string) => ({ pk: `${TEST_CHARGE_REF}#${ref}`, sk: TEST_CHARGE_REF });

class ChargeExists extends Error {}

/**
 * The ledger of one store's TEST account, as the stack makes the adapter with it: a new charge is
 * filed with its ref's look-up (the TEST page is addressed by ref alone), in one transaction.
 */
export function testChargeLedgerOf(storeId: number): typeof testChargeLedger {
  return {
    ...testChargeLedger,
    async putIfAbsent(charge: TestCharge): Promise<TestCharge> {
      try {
        await writeGuarded([
          { item: putNewItem(testChargeItem(charge)), onConditionFailed: () => new ChargeExists() },
          {
            item: put({ Item: { ...testChargeRefKey(charge.ref), entity: TEST_CHARGE_REF, account: charge.account, store_id: storeId } }),
            onConditionFailed: () => new ChargeExists(),
          },
        ]);
        return charge;
      } catch (error) {
        if (!(error instanceof ChargeExists)) throw error;
      }
      const stored = await readTestCharge(charge.account, charge.ref);
      if (!stored) throw new Error(`TEST charge ${charge.ref} refused as a duplicate, then not found`);
      return stored;
    },
  };
}

/** The account and store of a TEST charge's ref, or undefined for a ref never made. */
export async function testChargeOwner(ref: string): Promise<TestChargeOwner | undefined> {
  const item = await readItem(testChargeRefKey(ref), true);
  if (!item) return undefined;
  const field = fieldsOf(item, TEST_CHARGE_REF);
  return { account: field.string('account'), store_id: field.number('store_id') };
}
