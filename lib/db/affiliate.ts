import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { customerKey } from '#lib/db/customer.ts';
import { getMany, type Key } from '#lib/db/entity.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { entitySk, nowIso, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { storeKey, type Store } from '#lib/db/store.ts';
import { retrying, StaleRead, writeGuarded, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { HttpError } from '#lib/errors.ts';
import type { AffiliateTransaction, OperatorAffiliatePatch, WithdrawSettings } from '#lib/schemas/affiliate.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Affiliates (at most one per customer), their statement, and the commission credit. Links and
 * visit counters: lib/db/affiliate-link.ts; withdrawals: lib/db/withdrawal.ts.
 *
 * | access pattern                      | key                                                       | calls |
 * |-------------------------------------|-----------------------------------------------------------|-------|
 * | affiliate of a customer (panel)     | `STORE#<s> / AFFILIATE#<customer>`, in one BatchGet with the customer, the store or a code's sentinel, and the 7 daily visit counters | 1 |
 * | affiliate by id (operator)          | `STORE#<s> / AFFILIATE_ID#<id>` -> customer, then the BatchGet above | 2 |
 * | list by main code prefix (operator) | GSI1 `STORE#<s>#AFFILIATE_CODE`, gsi1sk `REF#<lower-case main code>`, begins_with | 1 per MB |
 * | list by e-mail (operator)           | GSI2 `STORE#<s>#AFFILIATE_EMAIL#<lower-case e-mail>`      | 1     |
 * | join                                | BatchGet (store, affiliate, customer, ref sentinel) + sequence ADD + TransactWrite (affiliate + ref sentinel + id sentinel); a code in use: the BatchGet only | 3 (1) |
 * | ref code -> affiliate or link       | `STORE#<s> / AFFILIATE_REF#<lower-case code>` (the uniqueness sentinel, across affiliates and links) | 1 Get |
 * | statement, newest first             | Query `STORE#<s>`, sk begins_with `AFFILIATE#<customer>`, descending: the transactions (`AFFILIATE#<customer>#TX#<id>`) and, last, the affiliate item itself, which proves membership in the same call | 1 per MB |
 * | save withdraw settings / operator patch | conditional UpdateItem                                | 1     |
 * | credit a commission (orders)        | TransactWrite (order sentinel `AFFILIATE_COMMISSION#<order>` + Update balance/stats (and the link's) + Put transaction) | 1 |
 *
 * Balances change only by `ADD` in a transaction with the statement line that explains them,
 * so the two never disagree; DynamoDB numbers are decimal, so cents add up exactly.
 * Links live in the affiliate item (`links`, a map by id, at most 20) so that the panel, its
 * list and the commission need no further read; the item stays far below 400 KB.
 */
export interface StoredLink {
  id: number;
  name: string;
  ref_code: string;
  sales: number;
  revenue: number;
  created_at: string;
}

export interface Affiliate {
  id: number;
  store_id: number;
  customer_id: number;
  ref_code: string;
  /** The customer's e-mail (lower case), for the self-referral rule and the operator's filter. */
  email: string;
  status: 'affiliate' | 'blocked';
  percent_commission: number;
  balance: number;
  min_withdraw: number | null;
  withdraw_settings: WithdrawSettings | null;
  total_sales: number;
  total_amount: number;
  /** Sales and revenue through the main code (the totals also count the links'). */
  main_sales: number;
  main_revenue: number;
  links: Record<string, StoredLink>;
  created_at: string;
  updated_at: string;
}

const AFFILIATE = ENTITY.AFFILIATE;

export const affiliateKey = (storeId: number, customerId: number) => ({ pk: storePk(storeId), sk: entitySk(AFFILIATE, customerId) });
export const transactionKey = (storeId: number, customerId: number, transactionId: number) => ({
  pk: storePk(storeId),
  sk: `${entitySk(AFFILIATE, customerId)}#TX#${padId(transactionId)}`,
});
export const refCodeKey = (storeId: number, refCode: string) => ({ pk: storePk(storeId), sk: `AFFILIATE_REF#${refCode.toLowerCase()}` });
const affiliateIdKey = (storeId: number, affiliateId: number) => ({ pk: storePk(storeId), sk: `AFFILIATE_ID#${padId(affiliateId)}` });
export const commissionKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: `AFFILIATE_COMMISSION#${padId(orderId)}` });
/** One item per affiliate per UTC day; one attribute per code counts its visits (lib/db/affiliate-link.ts). */
export const visitCounterKey = (storeId: number, customerId: number, day: string) => ({ pk: storePk(storeId), sk: `AFFILIATE_VISITS#${padId(customerId)}#${day}` });
const codeIndexPk = (storeId: number) => `${storePk(storeId)}#AFFILIATE_CODE`;
const emailIndexPk = (storeId: number, email: string) => `${storePk(storeId)}#AFFILIATE_EMAIL#${email.toLowerCase()}`;

/** The spec's statement and panel errors carry a message only. */
export const affiliateNotFound = () => new HttpError(404, { message: 'Affiliate not found' });
export const refCodeInUse = () => new HttpError(409, { message: 'This ref_code is already in use in this store' });

const pick = <T>(item: Record<string, unknown> | undefined) => (item ? (stripKeys(item) as T) : undefined);

/** What the holder of a code is: an affiliate's main code (`linkId` undefined) or one of its links. */
export interface RefHolder {
  customerId: number;
  linkId?: number;
}

const holderOf = (item: Record<string, unknown> | undefined): RefHolder | undefined =>
  item ? { customerId: item.customer_id as number, ...(item.link_id === undefined ? {} : { linkId: item.link_id as number }) } : undefined;

/** Per code id, the visits the counters of the days asked for hold. */
export type VisitCounters = Record<string, unknown>[];

export interface Membership {
  affiliate: Affiliate | undefined;
  customer: Customer | undefined;
  store: Store | undefined;
  /** Who holds the code asked for, if anyone. */
  refHolder: RefHolder | undefined;
  visits: VisitCounters;
}

/**
 * The customer and its affiliate item, with the store, the sentinel of a ref code and the
 * visit counters of some days when asked, in one BatchGet (two past 100 keys).
 */
export async function loadMembership(storeId: number, customerId: number, extra: { store?: boolean; refCode?: string; visitDays?: readonly string[] } = {}): Promise<Membership> {
  const storeKeyValue = storeKey(storeId);
  const refKey = extra.refCode === undefined ? undefined : refCodeKey(storeId, extra.refCode);
  const dayKeys = (extra.visitDays ?? []).map((day) => visitCounterKey(storeId, customerId, day));
  const keys = [affiliateKey(storeId, customerId), customerKey(storeId, customerId), ...(extra.store ? [storeKeyValue] : []), ...(refKey ? [refKey] : []), ...dayKeys];
  const items = await getMany(keys);
  const itemOf = (key: Key | undefined) => (key ? items[keys.indexOf(key)] : undefined);
  return {
    affiliate: pick<Affiliate>(items[0]),
    customer: pick<Customer>(items[1]),
    store: extra.store ? pick<Store>(itemOf(storeKeyValue)) : undefined,
    refHolder: holderOf(itemOf(refKey)),
    visits: dayKeys.flatMap((key) => {
      const item = itemOf(key);
      return item ? [item] : [];
    }),
  };
}

/** The customer behind an affiliate id; undefined when the store has no such affiliate. */
export async function customerOfAffiliate(storeId: number, affiliateId: number): Promise<number | undefined> {
  const found = await db.send(new GetCommand({ TableName: TABLE, Key: affiliateIdKey(storeId, affiliateId) }));
  return found.Item?.customer_id as number | undefined;
}

/** Who holds a code (1 Get); undefined for a code no affiliate or link of the store holds. */
export async function findRefHolder(storeId: number, refCode: string): Promise<RefHolder | undefined> {
  const found = await db.send(new GetCommand({ TableName: TABLE, Key: refCodeKey(storeId, refCode) }));
  return holderOf(found.Item);
}

/** The affiliate item (consistent), or undefined. */
export async function findAffiliate(storeId: number, customerId: number): Promise<Affiliate | undefined> {
  const found = await db.send(new GetCommand({ TableName: TABLE, Key: affiliateKey(storeId, customerId), ConsistentRead: true }));
  return pick<Affiliate>(found.Item);
}

/**
 * Creates the affiliate and claims its ref code and its id in one transaction. Undefined when
 * the customer became an affiliate meanwhile (the caller shows that one).
 */
export async function createAffiliate(storeId: number, customer: Customer, refCode: string, percentCommission: number): Promise<Affiliate | undefined> {
  const id = await nextId(storeId, AFFILIATE);
  const now = nowIso();
  const affiliate: Affiliate = {
    id,
    store_id: storeId,
    customer_id: customer.id,
    ref_code: refCode,
    email: customer.email.toLowerCase(),
    status: 'affiliate',
    percent_commission: percentCommission,
    balance: 0,
    min_withdraw: null,
    withdraw_settings: null,
    total_sales: 0,
    total_amount: 0,
    main_sales: 0,
    main_revenue: 0,
    links: {},
    created_at: now,
    updated_at: now,
  };
  const indexes = { gsi1pk: codeIndexPk(storeId), gsi1sk: `REF#${refCode.toLowerCase()}`, gsi2pk: emailIndexPk(storeId, customer.email), gsi2sk: entitySk(AFFILIATE, customer.id) };
  try {
    await retrying(() =>
      writeGuarded([
        {
          item: { Put: { TableName: TABLE, Item: { ...affiliateKey(storeId, customer.id), entity: AFFILIATE, ...indexes, ...affiliate }, ConditionExpression: 'attribute_not_exists(pk)' } },
          onConditionFailed: () => new WrittenConcurrently(),
        },
        {
          item: {
            Put: {
              TableName: TABLE,
              Item: { ...refCodeKey(storeId, refCode), entity: ENTITY.AFFILIATE_REF, store_id: storeId, customer_id: customer.id, ref_code: refCode },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: refCodeInUse,
        },
        {
          item: {
            Put: { TableName: TABLE, Item: { ...affiliateIdKey(storeId, id), entity: ENTITY.AFFILIATE_ID, store_id: storeId, customer_id: customer.id }, ConditionExpression: 'attribute_not_exists(pk)' },
          },
          onConditionFailed: () => new Error(`affiliate id ${id} allocated twice in store ${storeId}`),
        },
      ]),
    );
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return affiliate;
}

async function updateAffiliate(key: Key, sets: string[], names: Record<string, string>, values: Record<string, unknown>): Promise<Affiliate> {
  try {
    const result = await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys(result.Attributes ?? {}) as unknown as Affiliate;
  } catch (error) {
    if (isConditionalFailure(error)) throw affiliateNotFound();
    throw error;
  }
}

export const saveWithdrawSettings = (storeId: number, customerId: number, settings: WithdrawSettings) =>
  updateAffiliate(affiliateKey(storeId, customerId), ['withdraw_settings = :settings', 'updated_at = :now'], {}, { ':settings': settings, ':now': nowIso() });

/** The operator's change of an affiliate's terms or status (only the fields sent). */
export function patchAffiliate(storeId: number, customerId: number, patch: OperatorAffiliatePatch): Promise<Affiliate> {
  const update = setExpression({ ...patch, updated_at: nowIso() }, ['percent_commission', 'min_withdraw', 'status', 'updated_at']);
  return updateAffiliate(affiliateKey(storeId, customerId), update.sets, update.names, update.values);
}

/** Affiliates whose main code begins with `prefix` (ignoring case), in code order. */
export async function listAffiliatesByCode(storeId: number, prefix: string): Promise<Affiliate[]> {
  const items = await queryAll({ pk: codeIndexPk(storeId), skPrefix: `REF#${prefix.toLowerCase()}`, index: 'gsi1' });
  return items.map((item) => stripKeys(item) as unknown as Affiliate);
}

/** The affiliate of one e-mail (ignoring case), if any. */
export async function listAffiliatesByEmail(storeId: number, email: string): Promise<Affiliate[]> {
  const result = await db.send(
    new QueryCommand({ TableName: TABLE, IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': emailIndexPk(storeId, email) } }),
  );
  return (result.Items ?? []).map((item) => stripKeys(item) as unknown as Affiliate);
}

/** Customers and visit counters for a page of affiliates: one BatchGet per 100 keys. */
export async function loadPanelsOf(storeId: number, affiliates: readonly Affiliate[], visitDays: readonly string[]) {
  const perAffiliate = 1 + visitDays.length;
  const keys = affiliates.flatMap((affiliate) => [customerKey(storeId, affiliate.customer_id), ...visitDays.map((day) => visitCounterKey(storeId, affiliate.customer_id, day))]);
  const items = await getMany(keys);
  return affiliates.map((affiliate, index) => {
    const own = items.slice(index * perAffiliate, (index + 1) * perAffiliate);
    return { affiliate, customer: pick<Customer>(own[0]), visits: own.slice(1).flatMap((item) => (item ? [item] : [])) };
  });
}

// The items also hold store_id, affiliate_id and index keys; the response schemas leave them out.
export const toTransaction = (item: Record<string, unknown>) => stripKeys(item) as unknown as AffiliateTransaction & { affiliate_id: number };

/** The Put of a new line of the affiliate's statement, for the transaction that moves the balance. */
export function statementEntry(storeId: number, customerId: number, affiliateId: number, transaction: AffiliateTransaction, indexes: Record<string, string> = {}): GuardedWrite {
  return {
    item: {
      Put: {
        TableName: TABLE,
        Item: { ...transactionKey(storeId, customerId, transaction.id), entity: ENTITY.AFFILIATE_TRANSACTION, store_id: storeId, affiliate_id: affiliateId, ...indexes, ...transaction },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new Error(`affiliate transaction id ${transaction.id} allocated twice in store ${storeId}`),
  };
}

/** The statement, newest first; 404 when the customer is not an affiliate. One Query per MB. */
export async function listTransactions(storeId: number, customerId: number): Promise<AffiliateTransaction[]> {
  const own = affiliateKey(storeId, customerId);
  const items = await queryAll({ pk: own.pk, skPrefix: own.sk, descending: true });
  if (!items.some((item) => item.sk === own.sk)) throw affiliateNotFound();
  return items.filter((item) => item.sk !== own.sk).map(toTransaction);
}

export const nextTransactionId = (storeId: number) => nextId(storeId, ENTITY.AFFILIATE_TRANSACTION);

/**
 * Credits a decided commission: balance, stats (the link's, or the main code's) and the
 * COMMISSION line in one transaction with a sentinel for the order, so a repeated or concurrent
 * call for the same order credits once. Undefined when the order was already credited; a link
 * deleted since it was read is a StaleRead (the caller reads again and finds the code unknown).
 */
export async function recordCommission(affiliate: Affiliate, linkId: number | undefined, orderTotal: number, transaction: AffiliateTransaction & { order_id: number }): Promise<AffiliateTransaction | undefined> {
  const { store_id: storeId, customer_id: customerId } = affiliate;
  const stats = linkId === undefined ? 'main_sales :one, main_revenue :total' : '#links.#link.sales :one, #links.#link.revenue :total';
  const linkNames = linkId === undefined ? {} : { ExpressionAttributeNames: { '#links': 'links', '#link': String(linkId) } };
  try {
    await writeGuarded([
      {
        item: {
          Put: {
            TableName: TABLE,
            // customer_id: a reversal finds the credited affiliate here, even after the code was deleted or moved.
            Item: {
              ...commissionKey(storeId, transaction.order_id), entity: ENTITY.AFFILIATE_COMMISSION, store_id: storeId,
              order_id: transaction.order_id, transaction_id: transaction.id, customer_id: customerId,
            },
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
            UpdateExpression: `ADD balance :amount, total_sales :one, total_amount :total, ${stats} SET updated_at = :now`,
            ConditionExpression: linkId === undefined ? 'attribute_exists(pk)' : 'attribute_exists(#links.#link)',
            ...linkNames,
            ExpressionAttributeValues: { ':amount': transaction.amount, ':one': 1, ':total': orderTotal, ':now': transaction.created_at },
          },
        },
        onConditionFailed: () => new StaleRead(),
      },
      statementEntry(storeId, customerId, affiliate.id, transaction),
    ]);
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return transaction;
}
