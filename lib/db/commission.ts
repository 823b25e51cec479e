import { affiliateKey, commissionKey, nextTransactionId, refHolderFromItem, refCodeKey, statementEntry, transactionFromItem, transactionKey } from '#lib/db/affiliate.ts';
import { fieldsOf, getMany, readItem, type StoredItem } from '#lib/db/entity.ts';
import { update, writeGuarded, WrittenConcurrently } from '#lib/db/transact.ts';
import type { AffiliateTransaction } from '#lib/schemas/affiliate.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * Taking back the commission of a refunded or charged-back order (extensions section 10), next to
 * its credit (recordCommission, lib/db/affiliate.ts) but apart from it, so that the affiliate
 * module can change without this one.
 *
 * | access pattern            | key / write                                                                              | calls |
 * |---------------------------|------------------------------------------------------------------------------------------|-------|
 * | the credit to reverse     | BatchGet: the order's sentinel `AFFILIATE_COMMISSION#<order>` (its transaction id and    | 1     |
 * |                           | credited customer) + the ref code's sentinel (the holder, for credits written before the  |       |
 * |                           | sentinel named its customer)                                                              |       |
 * | its statement line        | GetItem `AFFILIATE#<customer>#TX#<id>` (the amount credited)                              | 1     |
 * | reverse                   | id ADD + TransactWrite: the sentinel marked `reversed_transaction_id` (conditioned on not  | 2     |
 * |                           | yet), balance `ADD -amount` (may go below 0), the COMMISSION_REVERSED line               |       |
 *
 * Once per order: the mark on the sentinel and the new line are one transaction.
 */
/** The sentinel of an order's credited commission: its line, its affiliate (absent on credits older than that) and whether it was reversed. */
function creditFromItem(item: StoredItem) {
  const field = fieldsOf(item, ENTITY.AFFILIATE_COMMISSION);
  return { transactionId: field.number('transaction_id'), customerId: field.optionalNumber('customer_id'), reversed: item.reversed_transaction_id !== undefined };
}

export async function reverseCommission(storeId: number, orderId: number, refCode: string, now: string): Promise<AffiliateTransaction | undefined> {
  const [sentinelItem, holder] = await getMany([commissionKey(storeId, orderId), refCodeKey(storeId, refCode)]);
  if (!sentinelItem) return undefined;
  const sentinel = creditFromItem(sentinelItem);
  // The credit names its affiliate; credits written before it did are found through the code's holder.
  const customerId = sentinel.customerId ?? (holder ? refHolderFromItem(holder).customerId : undefined);
  if (sentinel.reversed || customerId === undefined) return undefined;
  const credited = await readItem(transactionKey(storeId, customerId, sentinel.transactionId), true);
  // The code changed hands since the credit: the line is not where the holder says.
  if (!credited || credited.order_id !== orderId) return undefined;
  const credit = transactionFromItem(credited);
  const transaction: AffiliateTransaction = {
    id: await nextTransactionId(storeId),
    operation: 'COMMISSION_REVERSED',
    amount: -credit.amount,
    message: null,
    order_id: orderId,
    order_packages: credit.order_packages ?? [],
    created_at: now,
  };
  try {
    await writeGuarded([
      {
        item: update({
          Key: commissionKey(storeId, orderId),
          UpdateExpression: 'SET reversed_transaction_id = :id',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(reversed_transaction_id)',
          ExpressionAttributeValues: { ':id': transaction.id },
        }),
        // Reversed by a concurrent call for the same order.
        onConditionFailed: () => new WrittenConcurrently(),
      },
      {
        item: update({
          Key: affiliateKey(storeId, customerId),
          UpdateExpression: 'ADD balance :amount SET updated_at = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':amount': transaction.amount, ':now': now },
        }),
        onConditionFailed: () => new Error(`affiliate ${customerId} of store ${storeId} vanished while its commission was reversed`),
      },
      statementEntry(storeId, customerId, credit.affiliate_id, transaction),
    ]);
  } catch (error) {
    if (error instanceof WrittenConcurrently) return undefined;
    throw error;
  }
  return transaction;
}
