import { customerFromItem, customerKey } from '#lib/db/customer.ts';
import { fieldsOf, getMany, patchOne, readItem, type Fields, type Key, type PatchCondition, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import { queryAll, queryPage } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { storeFromItem, storeKey, type Store } from '#lib/db/store.ts';
import { countedPage, countMove } from '#lib/db/list-count.ts';
import { putNewItem, retrying, StaleRead, update, writeGuarded, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { HttpError } from '#lib/errors.ts';
import { AFFILIATE_STATUSES, affiliateTransaction, PIX_KEY_TYPES, type AffiliateTransaction, type OperatorAffiliatePatch, type WithdrawSettings } from '#lib/schemas/affiliate.ts';
import type { Customer } from '#lib/schemas/buyer.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Affiliates (at most one per customer), their statement, and the commission credit. Links and
 * visit counters: lib/db/affiliate-link.ts; withdrawals: lib/db/withdrawal.ts.
 *
 * | access pattern                      | key                                                       | calls |
 * |-------------------------------------|-----------------------------------------------------------|-------|
 * | affiliate of a customer (panel)     | `STORE#<s> / AFFILIATE#<customer>`, in one BatchGet with the customer, the store or a code's sentinel, and the 7 daily visit counters | 1 |
 * | affiliate by id (operator)          | `STORE#<s> / AFFILIATE_ID#<id>` -> customer, then the BatchGet above (with the store, for its domain) | 2 |
 * | a page's panels (operator)          | one BatchGet: the store, and each affiliate's customer and 7 daily visit counters (per 100 keys) | 1 |
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
export const refCodeKey = (storeId: number, refCode: string) => ({ pk: storePk(storeId), sk: `${ENTITY.AFFILIATE_REF}#${refCode.toLowerCase()}` });
const affiliateIdKey = (storeId: number, affiliateId: number) => ({ pk: storePk(storeId), sk: entitySk(ENTITY.AFFILIATE_ID, affiliateId) });
export const commissionKey = (storeId: number, orderId: number) => ({ pk: storePk(storeId), sk: entitySk(ENTITY.AFFILIATE_COMMISSION, orderId) });
/** One item per affiliate per UTC day; one attribute per code counts its visits (lib/db/affiliate-link.ts). */
export const visitCounterKey = (storeId: number, customerId: number, day: string) => ({ pk: storePk(storeId), sk: `AFFILIATE_VISITS#${padId(customerId)}#${day}` });
const codeIndexPk = (storeId: number) => `${storePk(storeId)}#AFFILIATE_CODE`;
const emailIndexPk = (storeId: number, email: string) => `${storePk(storeId)}#AFFILIATE_EMAIL#${email.toLowerCase()}`;

/** The spec's statement and panel errors carry a message only. */
export const affiliateNotFound = () => new HttpError(404, { message: 'Affiliate not found' });
export const refCodeInUse = () => new HttpError(409, { message: 'This ref_code is already in use in this store' });

const linkFromFields = (field: Fields): StoredLink => ({
  id: field.number('id'),
  name: field.string('name'),
  ref_code: field.string('ref_code'),
  sales: field.number('sales'),
  revenue: field.number('revenue'),
  created_at: field.string('created_at'),
});

/** Affiliates written before links and the main code's own stats have none: no links, nothing sold through the main code yet counted apart. */
export function affiliateFromItem(item: StoredItem): Affiliate {
  const field = fieldsOf(item, AFFILIATE);
  const linkIds = typeof item.links === 'object' && item.links !== null ? Object.keys(item.links) : [];
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    customer_id: field.number('customer_id'),
    ref_code: field.string('ref_code'),
    email: field.string('email'),
    status: field.oneOf('status', AFFILIATE_STATUSES),
    percent_commission: field.number('percent_commission'),
    balance: field.number('balance'),
    min_withdraw: field.numberOrNull('min_withdraw'),
    withdraw_settings:
      item.withdraw_settings == null
        ? null
        : field.object('withdraw_settings', (settings) => ({
            full_name: settings.string('full_name'),
            pix_key: settings.string('pix_key'),
            pix_key_type: settings.oneOf('pix_key_type', PIX_KEY_TYPES),
            cpf_cnpj: settings.string('cpf_cnpj'),
          })),
    total_sales: field.number('total_sales'),
    total_amount: field.number('total_amount'),
    main_sales: field.number('main_sales', 0),
    main_revenue: field.number('main_revenue', 0),
    links: linkIds.length === 0 ? {} : field.object('links', (links) => Object.fromEntries(linkIds.map((id) => [id, links.object(id, linkFromFields)]))),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

const OPERATIONS = affiliateTransaction.entries.operation.options;

/** A line of the statement. The item also holds store_id and index keys; only the affiliate's id is read besides the line. */
export function transactionFromItem(item: StoredItem): AffiliateTransaction & { affiliate_id: number } {
  const field = fieldsOf(item, ENTITY.AFFILIATE_TRANSACTION);
  const orderPackage = (line: Fields) => ({ package_id: line.number('package_id'), name: line.string('name'), quantity: line.number('quantity') });
  return {
    id: field.number('id'),
    operation: field.oneOf('operation', OPERATIONS),
    amount: field.number('amount'),
    message: field.stringOrNull('message'),
    order_id: field.numberOrNull('order_id'),
    ...(item.order_packages === undefined ? {} : { order_packages: field.objects('order_packages', orderPackage) }),
    ...(item.withdraw_info === undefined
      ? {}
      : {
          withdraw_info: field.object('withdraw_info', (info) => ({
            full_name: info.string('full_name'),
            pix_key: info.string('pix_key'),
            pix_key_type: info.string('pix_key_type'),
            cpf_cnpj: info.string('cpf_cnpj'),
          })),
        }),
    created_at: field.string('created_at'),
    affiliate_id: field.number('affiliate_id'),
  };
}

const customerOf = (item: StoredItem | undefined): Customer | undefined => (item ? customerFromItem(item) : undefined);

/** What the holder of a code is: an affiliate's main code (`linkId` undefined) or one of its links. */
export interface RefHolder {
  customerId: number;
  linkId?: number;
}

/** A ref code's sentinel: the affiliate holding it, and the link when it is not the main code. */
export function refHolderFromItem(item: StoredItem): RefHolder {
  const field = fieldsOf(item, ENTITY.AFFILIATE_REF);
  const linkId = field.optionalNumber('link_id');
  return { customerId: field.number('customer_id'), ...(linkId === undefined ? {} : { linkId }) };
}

const holderOf = (item: StoredItem | undefined): RefHolder | undefined => (item ? refHolderFromItem(item) : undefined);

/** Per code id, the visits the counters of the days asked for hold. */
export type VisitCounters = StoredItem[];

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
    affiliate: items[0] ? affiliateFromItem(items[0]) : undefined,
    customer: customerOf(items[1]),
    store: extra.store ? storeOf(itemOf(storeKeyValue)) : undefined,
    refHolder: holderOf(itemOf(refKey)),
    visits: dayKeys.flatMap((key) => {
      const item = itemOf(key);
      return item ? [item] : [];
    }),
  };
}

const storeOf = (item: StoredItem | undefined): Store | undefined => (item ? storeFromItem(item) : undefined);

/** The customer behind an affiliate id; undefined when the store has no such affiliate. */
export async function customerOfAffiliate(storeId: number, affiliateId: number): Promise<number | undefined> {
  const found = await readItem(affiliateIdKey(storeId, affiliateId));
  return found ? fieldsOf(found, ENTITY.AFFILIATE_ID).number('customer_id') : undefined;
}

/** Who holds a code (1 Get); undefined for a code no affiliate or link of the store holds. */
export async function findRefHolder(storeId: number, refCode: string): Promise<RefHolder | undefined> {
  return holderOf(await readItem(refCodeKey(storeId, refCode)));
}

/** The affiliate item (consistent), or undefined. */
export async function findAffiliate(storeId: number, customerId: number): Promise<Affiliate | undefined> {
  const found = await readItem(affiliateKey(storeId, customerId), true);
  return found ? affiliateFromItem(found) : undefined;
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
        { item: putNewItem({ ...affiliateKey(storeId, customer.id), entity: AFFILIATE, ...indexes, ...affiliate }), onConditionFailed: () => new WrittenConcurrently() },
        {
          item: putNewItem({ ...refCodeKey(storeId, refCode), entity: ENTITY.AFFILIATE_REF, store_id: storeId, customer_id: customer.id, ref_code: refCode }),
          onConditionFailed: refCodeInUse,
        },
        {
          item: putNewItem({ ...affiliateIdKey(storeId, id), entity: ENTITY.AFFILIATE_ID, store_id: storeId, customer_id: customer.id }),
          onConditionFailed: () => new Error(`affiliate id ${id} allocated twice in store ${storeId}`),
        },
        countMove(storeId, AFFILIATE, 1),
      ]),
    );
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return affiliate;
}

/** The affiliate must exist; its 404 is the spec's, a message only. */
const affiliateExists: PatchCondition = { expression: 'attribute_exists(pk)', failure: affiliateNotFound };

export const saveWithdrawSettings = (storeId: number, customerId: number, settings: WithdrawSettings) =>
  patchOne(affiliateKey(storeId, customerId), 'Affiliate', { withdraw_settings: settings }, ['withdraw_settings'], affiliateFromItem, { condition: affiliateExists });

/** The operator's change of an affiliate's terms or status (only the fields sent). */
export const patchAffiliate = (storeId: number, customerId: number, patch: OperatorAffiliatePatch): Promise<Affiliate> =>
  patchOne(affiliateKey(storeId, customerId), 'Affiliate', patch, ['percent_commission', 'min_withdraw', 'status'], affiliateFromItem, { condition: affiliateExists });

/**
 * A page of the store's affiliates in code order, and their total: counted with the creations
 * (affiliates are never deleted); a store older than the counter counts its affiliate items once
 * (their code index entry tells them from the statements filed under them).
 */
export const affiliatePage = (storeId: number, page: number, limit: number) =>
  countedPage(
    storeId,
    {
      counter: AFFILIATE,
      page: { index: 'gsi1', pk: codeIndexPk(storeId), skPrefix: 'REF#' },
      count: {
        pk: storePk(storeId),
        skPrefix: `${AFFILIATE}#`,
        filter: { FilterExpression: 'gsi1pk = :code_index', ExpressionAttributeValues: { ':code_index': codeIndexPk(storeId) } },
      },
    },
    page,
    limit,
    affiliateFromItem,
  );

/** Affiliates whose main code begins with `prefix` (ignoring case), in code order. */
export async function listAffiliatesByCode(storeId: number, prefix: string): Promise<Affiliate[]> {
  const items = await queryAll({ pk: codeIndexPk(storeId), skPrefix: `REF#${prefix.toLowerCase()}`, index: 'gsi1' });
  return items.map(affiliateFromItem);
}

/** The affiliate of one e-mail (ignoring case), if any. */
export async function listAffiliatesByEmail(storeId: number, email: string): Promise<Affiliate[]> {
  const result = await queryPage({ IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': emailIndexPk(storeId, email) } });
  return (result.Items ?? []).map(affiliateFromItem);
}

/**
 * Customers and visit counters for a page of affiliates, and the store (its domain, for the links'
 * URLs): one BatchGet per 100 keys.
 */
export async function loadPanelsOf(storeId: number, affiliates: readonly Affiliate[], visitDays: readonly string[]) {
  const perAffiliate = 1 + visitDays.length;
  const keys = [
    storeKey(storeId),
    ...affiliates.flatMap((affiliate) => [customerKey(storeId, affiliate.customer_id), ...visitDays.map((day) => visitCounterKey(storeId, affiliate.customer_id, day))]),
  ];
  const [storeItem, ...items] = await getMany(keys);
  const panels = affiliates.map((affiliate, index) => {
    const own = items.slice(index * perAffiliate, (index + 1) * perAffiliate);
    return { affiliate, customer: customerOf(own[0]), visits: own.slice(1).flatMap((item) => (item ? [item] : [])) };
  });
  return { store: storeOf(storeItem), panels };
}

/** The Put of a new line of the affiliate's statement, for the transaction that moves the balance. */
export function statementEntry(storeId: number, customerId: number, affiliateId: number, transaction: AffiliateTransaction, indexes: Record<string, string> = {}): GuardedWrite {
  return {
    item: putNewItem({
      ...transactionKey(storeId, customerId, transaction.id),
      entity: ENTITY.AFFILIATE_TRANSACTION,
      store_id: storeId,
      affiliate_id: affiliateId,
      ...indexes,
      ...transaction,
    }),
    onConditionFailed: () => new Error(`affiliate transaction id ${transaction.id} allocated twice in store ${storeId}`),
  };
}

/** The statement, newest first; 404 when the customer is not an affiliate. One Query per MB. */
export async function listTransactions(storeId: number, customerId: number): Promise<AffiliateTransaction[]> {
  const own = affiliateKey(storeId, customerId);
  const items = await queryAll({ pk: own.pk, skPrefix: own.sk, descending: true });
  if (!items.some((item) => item.sk === own.sk)) throw affiliateNotFound();
  return items.filter((item) => item.sk !== own.sk).map(transactionFromItem);
}

export const nextTransactionId = (storeId: number) => nextId(storeId, ENTITY.AFFILIATE_TRANSACTION);

/**
 * Credits a decided commission: balance, stats (the link's, or the main code's) and the
 * COMMISSION line in one transaction with a sentinel for the order, so a repeated or concurrent
 * call for the same order credits once. Undefined when the order was already credited; a link
 * deleted since it was read is a StaleRead (the caller reads again and finds the code unknown).
 */
export async function recordCommission(
  affiliate: Affiliate,
  linkId: number | undefined,
  orderTotal: number,
  transaction: AffiliateTransaction & { order_id: number },
): Promise<AffiliateTransaction | undefined> {
  const { store_id: storeId, customer_id: customerId } = affiliate;
  const stats = linkId === undefined ? 'main_sales :one, main_revenue :total' : '#links.#link.sales :one, #links.#link.revenue :total';
  const linkNames = linkId === undefined ? {} : { ExpressionAttributeNames: { '#links': 'links', '#link': String(linkId) } };
  try {
    await writeGuarded([
      {
        // customer_id: a reversal finds the credited affiliate here, even after the code was deleted or moved.
        item: putNewItem({
          ...commissionKey(storeId, transaction.order_id),
          entity: ENTITY.AFFILIATE_COMMISSION,
          store_id: storeId,
          order_id: transaction.order_id,
          transaction_id: transaction.id,
          customer_id: customerId,
        }),
        // This order's commission is already credited (a repeated approval): nothing to do.
        onConditionFailed: () => new WrittenConcurrently(),
      },
      {
        item: update({
          Key: affiliateKey(storeId, customerId),
          UpdateExpression: `ADD balance :amount, total_sales :one, total_amount :total, ${stats} SET updated_at = :now`,
          ConditionExpression: linkId === undefined ? 'attribute_exists(pk)' : 'attribute_exists(#links.#link)',
          ...linkNames,
          ExpressionAttributeValues: { ':amount': transaction.amount, ':one': 1, ':total': orderTotal, ':now': transaction.created_at },
        }),
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
