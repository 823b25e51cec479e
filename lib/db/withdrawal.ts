import { affiliateKey, nextTransactionId, statementEntry, transactionFromItem, transactionKey, type Affiliate } from '#lib/db/affiliate.ts';
import { fieldsOf, newItemWrite, readItem } from '#lib/db/entity.ts';
import { entitySk, nowIso, padId, storePk } from '#lib/db/keys.ts';
import { countedPage, countMove, type CountedList } from '#lib/db/list-count.ts';
import { retrying, StaleRead, update, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { forbidden, notFound, unprocessable } from '#lib/errors.ts';
import type { AffiliateTransaction, WithdrawalStatus, WithdrawSettings } from '#lib/schemas/affiliate.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Withdrawals: WITHDRAW_PENDING lines of an affiliate's statement, and their settlement by the
 * operator (WITHDRAW_PAID, or WITHDRAW_REJECTED giving the amount back).
 *
 * | access pattern                 | key                                                                 | calls |
 * |--------------------------------|---------------------------------------------------------------------|-------|
 * | request (buyer)                | sequence ADD + TransactWrite (Update `balance >= :amount` + Put the line + Put the id pointer + the counts, + the Idempotency-Key's record of it) | 2 |
 * | the request's line again (its answer lost, same key) | GetItem `AFFILIATE#<customer>#TX#<id>` (consistent)     | 1 |
 * | by transaction id (operator)   | `STORE#<s> / WITHDRAWAL#<id>` -> customer, then the line `AFFILIATE#<customer>#TX#<id>` (consistent) | 2 Get |
 * | pay                            | TransactWrite (the line, conditioned on WITHDRAW_PENDING, + the status counts moved) | 1 |
 * | reject                         | TransactWrite (the line, conditioned on WITHDRAW_PENDING, + ADD the amount to the balance, + the status counts moved) | 1 |
 * | a page, newest first           | counter `WITHDRAWAL[#<status>]` + Query with Limit of GSI1 `STORE#<s>#WITHDRAWAL`, or by status GSI2 `STORE#<s>#WITHDRAWAL#<PENDING|PAID|REJECTED>`; gsi*sk `TX#<padded id>` (lib/db/list-count.ts) | 2 (+ skip) |
 *
 * The request adds to the counts of the whole list and of PENDING; a settlement moves one from
 * PENDING to PAID or REJECTED, in the same transaction as the line. A first count (data older than
 * the counters) reads the table, consistently: the pointers for the whole list, the statement
 * lines of the store's affiliates filtered on `operation` for a status.
 *
 * The condition on the line's operation makes each settlement happen once however many
 * requests race: a loser reads again and finds it settled.
 */
export type Withdrawal = AffiliateTransaction & { affiliate_id: number; customer_id: number };

const WITHDRAWAL = ENTITY.WITHDRAWAL;

const pointerKey = (storeId: number, transactionId: number) => ({ pk: storePk(storeId), sk: entitySk(WITHDRAWAL, transactionId) });
const allPk = (storeId: number) => `${storePk(storeId)}#${WITHDRAWAL}`;
const statusPk = (storeId: number, status: WithdrawalStatus) => `${storePk(storeId)}#${WITHDRAWAL}#${status}`;

const OPERATION_OF: Record<WithdrawalStatus, AffiliateTransaction['operation']> = { PENDING: 'WITHDRAW_PENDING', PAID: 'WITHDRAW_PAID', REJECTED: 'WITHDRAW_REJECTED' };

/** The store's withdrawals, newest first, all or of one status. */
function withdrawalList(storeId: number, status: WithdrawalStatus | undefined): CountedList {
  if (!status) {
    return {
      counter: WITHDRAWAL,
      page: { index: 'gsi1', pk: allPk(storeId), skPrefix: 'TX#', descending: true },
      count: { pk: storePk(storeId), skPrefix: `${WITHDRAWAL}#` },
    };
  }
  return {
    counter: `${WITHDRAWAL}#${status}`,
    page: { index: 'gsi2', pk: statusPk(storeId, status), skPrefix: 'TX#', descending: true },
    count: {
      pk: storePk(storeId),
      skPrefix: `${ENTITY.AFFILIATE}#`,
      filter: {
        FilterExpression: '#operation = :operation',
        ExpressionAttributeNames: { '#operation': 'operation' },
        ExpressionAttributeValues: { ':operation': OPERATION_OF[status] },
      },
    },
  };
}

/** Debits the balance and records the request, never letting the balance go below zero; a blocked affiliate is refused (403). */
export async function recordWithdrawal(
  affiliate: Affiliate,
  amount: number,
  settings: WithdrawSettings,
  recordOnKey: (transactionId: number) => GuardedWrite[],
): Promise<AffiliateTransaction> {
  const { store_id: storeId, customer_id: customerId } = affiliate;
  const id = await nextTransactionId(storeId);
  const transaction: AffiliateTransaction = { id, operation: 'WITHDRAW_PENDING', amount, message: null, order_id: null, withdraw_info: settings, created_at: nowIso() };
  const indexes = { gsi1pk: allPk(storeId), gsi1sk: `TX#${padId(id)}`, gsi2pk: statusPk(storeId, 'PENDING'), gsi2sk: `TX#${padId(id)}` };
  await retrying(() =>
    writeGuarded([
      {
        item: update({
          Key: affiliateKey(storeId, customerId),
          UpdateExpression: 'ADD balance :debit SET updated_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND balance >= :amount AND #status <> :blocked',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':debit': -amount, ':amount': amount, ':now': transaction.created_at, ':blocked': 'blocked' },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        onConditionFailed: (current) =>
          current?.status?.S === 'blocked'
            ? forbidden('This affiliate is blocked and cannot withdraw', 'AFFILIATE_BLOCKED')
            : unprocessable('amount is larger than the balance', 'amount', 'INSUFFICIENT_BALANCE'),
      },
      statementEntry(storeId, customerId, affiliate.id, transaction, indexes),
      newItemWrite({ ...pointerKey(storeId, id), entity: WITHDRAWAL, store_id: storeId, customer_id: customerId }),
      countMove(storeId, withdrawalList(storeId, undefined).counter, 1),
      countMove(storeId, withdrawalList(storeId, 'PENDING').counter, 1),
      ...recordOnKey(id),
    ]),
  );
  return transaction;
}

/** The line a request of the affiliate wrote (consistent; 404 when it is not there), as the request answered it. */
export async function requestedWithdrawal(storeId: number, customerId: number, transactionId: number): Promise<AffiliateTransaction> {
  const line = await readItem(transactionKey(storeId, customerId, transactionId), true);
  if (!line) throw notFound('Withdrawal');
  const { affiliate_id: _affiliateId, ...transaction } = transactionFromItem(line);
  return transaction;
}

/** A withdrawal of the store by its transaction id; 404 for any other id (a commission, another store's). */
export async function getWithdrawal(storeId: number, transactionId: number): Promise<Withdrawal> {
  const pointer = await readItem(pointerKey(storeId, transactionId));
  if (!pointer) throw notFound('Withdrawal');
  const customerId = fieldsOf(pointer, WITHDRAWAL).number('customer_id');
  const line = await readItem(transactionKey(storeId, customerId, transactionId), true);
  if (!line) throw notFound('Withdrawal');
  return { ...transactionFromItem(line), customer_id: customerId };
}

/** The line's move out of WITHDRAW_PENDING; a line settled since it was read is a StaleRead. */
function settleLine(storeId: number, withdrawal: Withdrawal, operation: 'WITHDRAW_PAID' | 'WITHDRAW_REJECTED', message: string | null, now: string): GuardedWrite {
  return {
    item: update({
      Key: transactionKey(storeId, withdrawal.customer_id, withdrawal.id),
      UpdateExpression: 'SET #operation = :operation, message = :message, settled_at = :now, gsi2pk = :statusPk',
      ConditionExpression: '#operation = :pending',
      ExpressionAttributeNames: { '#operation': 'operation' },
      ExpressionAttributeValues: {
        ':operation': operation,
        ':message': message,
        ':now': now,
        ':statusPk': statusPk(storeId, operation === 'WITHDRAW_PAID' ? 'PAID' : 'REJECTED'),
        ':pending': 'WITHDRAW_PENDING',
      },
    }),
    onConditionFailed: () => new StaleRead(),
  };
}

/** The counts a settlement moves: one withdrawal from PENDING to `status`. */
const settledCounts = (storeId: number, status: 'PAID' | 'REJECTED'): GuardedWrite[] => [
  countMove(storeId, withdrawalList(storeId, 'PENDING').counter, -1),
  countMove(storeId, withdrawalList(storeId, status).counter, 1),
];

/** Pending -> WITHDRAW_PAID. */
export async function markPaid(storeId: number, withdrawal: Withdrawal, now: string): Promise<Withdrawal> {
  await writeGuarded([settleLine(storeId, withdrawal, 'WITHDRAW_PAID', null, now), ...settledCounts(storeId, 'PAID')]);
  return { ...withdrawal, operation: 'WITHDRAW_PAID' };
}

/** Pending -> WITHDRAW_REJECTED with the operator's message, and the amount back on the balance, in one transaction. */
export async function markRejected(storeId: number, withdrawal: Withdrawal, message: string, now: string): Promise<Withdrawal> {
  await writeGuarded([
    settleLine(storeId, withdrawal, 'WITHDRAW_REJECTED', message, now),
    ...settledCounts(storeId, 'REJECTED'),
    {
      item: update({
        Key: affiliateKey(storeId, withdrawal.customer_id),
        UpdateExpression: 'ADD balance :amount SET updated_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':amount': withdrawal.amount, ':now': now },
      }),
      onConditionFailed: () => new Error(`affiliate ${withdrawal.customer_id} of store ${storeId} vanished while its withdrawal was rejected`),
    },
  ]);
  return { ...withdrawal, operation: 'WITHDRAW_REJECTED', message };
}

/** A page of the store's withdrawals, newest first, all or of one status, and their total. */
export const withdrawalPage = (storeId: number, status: WithdrawalStatus | undefined, page: number, limit: number) =>
  countedPage(storeId, withdrawalList(storeId, status), page, limit, transactionFromItem);
