import { findAffiliate, findRefHolder, nextTransactionId, recordCommission } from '#lib/db/affiliate.ts';
import { retrying } from '#lib/db/transact.ts';
import { commissionDue } from '#lib/domain/affiliate.ts';
import { nowIso } from '#lib/clock.ts';
import type { AffiliateTransaction, OrderPackage } from '#lib/schemas/affiliate.ts';

/** What of an approved order the commission depends on. */
export interface CommissionOrder {
  id: number;
  ref_code: string;
  total: number;
  client_email: string;
  packages: readonly OrderPackage[];
}

/**
 * Credits the holder of the order's ref_code (an affiliate's main code or one of its links)
 * its commission (extensions sections 4 and 11: called when an order is approved): Get the
 * code's sentinel, Get the affiliate, then the id ADD and one TransactWrite, idempotent per
 * order. Undefined when nothing is owed: the code is unknown now (a link deleted since the
 * order), the affiliate is blocked, the order is the affiliate's own, or it was credited already.
 */
export async function creditOrderCommission(storeId: number, order: CommissionOrder): Promise<AffiliateTransaction | undefined> {
  let transactionId: number | undefined;
  return retrying(async () => {
    const holder = await findRefHolder(storeId, order.ref_code);
    const affiliate = holder && (await findAffiliate(storeId, holder.customerId));
    if (!holder || !affiliate) return undefined;
    const amount = commissionDue(affiliate, order);
    if (amount === null) return undefined;
    transactionId ??= await nextTransactionId(storeId);
    return recordCommission(affiliate, holder.linkId, order.total, {
      id: transactionId,
      operation: 'COMMISSION',
      amount,
      message: null,
      order_id: order.id,
      order_packages: order.packages.map(({ package_id, name, quantity }) => ({ package_id, name, quantity })),
      created_at: nowIso(),
    });
  });
}
