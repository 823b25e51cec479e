import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { customerKey } from '#lib/db/customer.ts';
import type { Key } from '#lib/db/entity.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { entitySk, nowIso, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { retrying, transactGuarded, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { nextId } from '#lib/db/sequence.ts';
import { storeKey, type Store } from '#lib/db/store.ts';
import { HttpError, unprocessable } from '#lib/errors.ts';
import type { AffiliateTransaction, OrderPackage, WithdrawSettings } from '#lib/schemas/affiliate.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import { getMany } from '#lib/db/entity.ts';

/**
 * Affiliates (at most one per customer), their statement, and their referral codes.
 *
 * | access pattern                      | key                                                       | calls |
 * |-------------------------------------|-----------------------------------------------------------|-------|
 * | affiliate of a customer             | `STORE#<s> / AFFILIATE#<customer>`                        | in a BatchGet with the customer (and the store) |
 * | join                                | BatchGet (store, affiliate, customer, ref sentinel) + sequence ADD + TransactWrite (affiliate + ref sentinel); a code in use: the BatchGet only | 3 (1) |
 * | ref code -> affiliate (commission)  | `STORE#<s> / AFFILIATE_REF#<lower-case code>` (the uniqueness sentinel) | 1 Get |
 * | statement, newest first             | Query `STORE#<s>`, sk begins_with `AFFILIATE#<customer>`, descending: the transactions (`AFFILIATE#<customer>#TX#<id>`) and, last, the affiliate item itself, which proves membership in the same call | 1 per MB |
 * | save withdraw settings              | conditional UpdateItem                                    | 1     |
 * | withdraw                            | BatchGet (affiliate, customer, store) + sequence ADD + TransactWrite (Update `balance >= :amount` + Put transaction) | 3 |
 * | credit a commission (orders)        | Get ref + Get affiliate + sequence ADD + TransactWrite (order sentinel `AFFILIATE_COMMISSION#<order>` + Update balance/stats + Put transaction) | 4 |
 *
 * Balances change only by `ADD` in a transaction with the statement line that explains them,
 * so the two never disagree; DynamoDB numbers are decimal, so cents add up exactly.
 */
export interface Affiliate {
  id: number;
  store_id: number;
  customer_id: number;
  ref_code: string;
  percent_commission: number;
  balance: number;
  min_withdraw: number | null;
  withdraw_settings: WithdrawSettings | null;
  total_sales: number;
  total_amount: number;
  created_at: string;
  updated_at: string;
}

const AFFILIATE = 'AFFILIATE';

export const affiliateKey = (storeId: number, customerId: number) => ({ pk: storePk(storeId), sk: entitySk(AFFILIATE, customerId) });
const transactionKey = (storeId: number, customerId: number, transactionId: number) => ({
  pk: storePk(storeId),
  sk: `${entitySk(AFFILIATE, customerId)}#TX#${padId(transactionId)}`,
});
const refCodeKey = (storeId: number, refCode: string) => ({ pk: storePk(storeId), sk: `AFFILIATE_REF#${refCode.toLowerCase()}` });
const commissionKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: `AFFILIATE_COMMISSION#${padId(orderId)}` });

/** The spec's statement and panel errors carry a message only. */
export const affiliateNotFound = () => new HttpError(404, { message: 'Affiliate not found' });
export const refCodeInUse = () => new HttpError(409, { message: 'This ref_code is already in use in this store' });

const pick = <T>(item: Record<string, unknown> | undefined) => (item ? (stripKeys(item) as T) : undefined);

/**
 * The customer and its affiliate item, with the store and the sentinel of a ref code when
 * asked, in one BatchGet. The join reads the sentinel so that a code already in use is refused
 * before an id is allocated (the transaction still decides a race). A BatchGet is not isolated
 * from a transaction in progress, so a sentinel of the caller's own concurrent join may show
 * without its affiliate item: that one does not count as taken.
 */
export async function loadMembership(storeId: number, customerId: number, extra: { store?: boolean; refCode?: string } = {}) {
  const storeKeyValue = storeKey(storeId);
  const refKey = extra.refCode === undefined ? undefined : refCodeKey(storeId, extra.refCode);
  const keys = [affiliateKey(storeId, customerId), customerKey(storeId, customerId), ...(extra.store ? [storeKeyValue] : []), ...(refKey ? [refKey] : [])];
  const items = await getMany(keys);
  const itemOf = (key: Key | undefined) => (key ? items[keys.indexOf(key)] : undefined);
  const refOwner = itemOf(refKey)?.customer_id;
  return {
    affiliate: pick<Affiliate>(items[0]),
    customer: pick<Customer>(items[1]),
    store: extra.store ? pick<Store>(itemOf(storeKeyValue)) : undefined,
    refCodeTaken: refOwner !== undefined && refOwner !== customerId,
  };
}

/**
 * Creates the affiliate and claims its ref code in one transaction. Undefined when the customer
 * became an affiliate meanwhile (the caller shows that one).
 */
export async function createAffiliate(storeId: number, customerId: number, refCode: string, percentCommission: number): Promise<Affiliate | undefined> {
  const id = await nextId(storeId, AFFILIATE);
  const now = nowIso();
  const affiliate: Affiliate = {
    id,
    store_id: storeId,
    customer_id: customerId,
    ref_code: refCode,
    percent_commission: percentCommission,
    balance: 0,
    min_withdraw: null,
    withdraw_settings: null,
    total_sales: 0,
    total_amount: 0,
    created_at: now,
    updated_at: now,
  };
  try {
    await retrying(() =>
      transactGuarded([
        {
          item: { Put: { TableName: TABLE, Item: { ...affiliateKey(storeId, customerId), entity: AFFILIATE, ...affiliate }, ConditionExpression: 'attribute_not_exists(pk)' } },
          onConditionFailed: () => new WrittenConcurrently(),
        },
        {
          item: {
            Put: {
              TableName: TABLE,
              Item: { ...refCodeKey(storeId, refCode), entity: 'affiliate_ref', store_id: storeId, customer_id: customerId, ref_code: refCode },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: refCodeInUse,
        },
      ]),
    );
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return affiliate;
}

export async function saveWithdrawSettings(storeId: number, customerId: number, settings: WithdrawSettings): Promise<Affiliate> {
  try {
    const result = await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: affiliateKey(storeId, customerId),
        UpdateExpression: 'SET withdraw_settings = :settings, updated_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':settings': settings, ':now': nowIso() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys(result.Attributes ?? {}) as unknown as Affiliate;
  } catch (error) {
    if (isConditionalFailure(error)) throw affiliateNotFound();
    throw error;
  }
}

// The items also hold store_id and affiliate_id; the response schema leaves them out.
const toTransaction = (item: Record<string, unknown>) => stripKeys(item) as unknown as AffiliateTransaction;

/** The Put of a new line of the affiliate's statement, for the transaction that moves the balance. */
function statementEntry(storeId: number, customerId: number, affiliateId: number, transaction: AffiliateTransaction): GuardedWrite {
  return {
    item: {
      Put: {
        TableName: TABLE,
        Item: { ...transactionKey(storeId, customerId, transaction.id), entity: 'affiliate_transaction', store_id: storeId, affiliate_id: affiliateId, ...transaction },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new Error(`affiliate transaction id ${transaction.id} allocated twice in store ${storeId}`),
  };
}

/** Debits the balance and records the request, never letting the balance go below zero. */
export async function recordWithdrawal(affiliate: Affiliate, amount: number, settings: WithdrawSettings): Promise<AffiliateTransaction> {
  const { store_id: storeId, customer_id: customerId } = affiliate;
  const id = await nextId(storeId, 'AFFILIATE_TRANSACTION');
  const now = nowIso();
  const transaction: AffiliateTransaction = {
    id,
    operation: 'WITHDRAW_PENDING',
    amount,
    message: null,
    order_id: null,
    withdraw_info: settings,
    created_at: now,
  };
  await retrying(() =>
    transactGuarded([
      {
        item: {
          Update: {
            TableName: TABLE,
            Key: affiliateKey(storeId, customerId),
            UpdateExpression: 'ADD balance :debit SET updated_at = :now',
            ConditionExpression: 'attribute_exists(pk) AND balance >= :amount',
            ExpressionAttributeValues: { ':debit': -amount, ':amount': amount, ':now': now },
          },
        },
        onConditionFailed: () => unprocessable('amount is larger than the balance', 'amount', 'INSUFFICIENT_BALANCE'),
      },
      statementEntry(storeId, customerId, affiliate.id, transaction),
    ]),
  );
  return transaction;
}

/** The statement, newest first; 404 when the customer is not an affiliate. One Query per MB. */
export async function listTransactions(storeId: number, customerId: number): Promise<AffiliateTransaction[]> {
  const own = affiliateKey(storeId, customerId);
  const items = await queryAll({ pk: own.pk, skPrefix: own.sk, descending: true });
  if (!items.some((item) => item.sk === own.sk)) throw affiliateNotFound();
  return items.filter((item) => item.sk !== own.sk).map(toTransaction);
}

const roundCents = (value: number) => Math.round((value + Number.EPSILON) * 100) / 100;

/**
 * Credits the affiliate owning `refCode` its `percent_commission` of an order's `total`
 * (extensions section 4: called when an order is approved). Atomic and idempotent per order:
 * the balance, the stats and the COMMISSION line are written in one transaction with a
 * sentinel for the order, so a repeated or concurrent call for the same order credits once.
 * Undefined when no affiliate owns the code or the order was already credited.
 */
export async function creditCommission(
  storeId: number,
  refCode: string,
  orderId: number,
  total: number,
  packages: OrderPackage[],
): Promise<AffiliateTransaction | undefined> {
  const ref = await db.send(new GetCommand({ TableName: TABLE, Key: refCodeKey(storeId, refCode) }));
  const customerId = ref.Item?.customer_id as number | undefined;
  if (customerId === undefined) return undefined;
  const found = await db.send(new GetCommand({ TableName: TABLE, Key: affiliateKey(storeId, customerId) }));
  if (!found.Item) return undefined;
  const affiliate = stripKeys(found.Item) as unknown as Affiliate;

  const id = await nextId(storeId, 'AFFILIATE_TRANSACTION');
  const now = nowIso();
  const amount = roundCents((total * affiliate.percent_commission) / 100);
  const transaction: AffiliateTransaction = {
    id,
    operation: 'COMMISSION',
    amount,
    message: null,
    order_id: orderId,
    order_packages: packages.map(({ package_id, name, quantity }) => ({ package_id, name, quantity })),
    created_at: now,
  };
  try {
    await retrying(() =>
      transactGuarded([
        {
          item: {
            Put: {
              TableName: TABLE,
              Item: { ...commissionKey(storeId, orderId), entity: 'affiliate_commission', store_id: storeId, order_id: orderId, transaction_id: id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          // This order's commission is already credited (a repeated approval): nothing to do.
          onConditionFailed: () => new WrittenConcurrently(),
        },
        {
          item: {
            Update: {
              TableName: TABLE,
              Key: affiliateKey(storeId, customerId),
              UpdateExpression: 'ADD balance :amount, total_sales :one, total_amount :total SET updated_at = :now',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':amount': amount, ':one': 1, ':total': total, ':now': now },
            },
          },
          onConditionFailed: () => new Error(`affiliate ${customerId} of store ${storeId} vanished while credited`),
        },
        statementEntry(storeId, customerId, affiliate.id, transaction),
      ]),
    );
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return transaction;
}
