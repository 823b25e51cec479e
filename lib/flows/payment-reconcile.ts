import { currentTimeMs } from '#lib/clock.ts';
import { dropLivePayment, livePaymentEntries, readPayment, type LivePaymentEntry } from '#lib/db/payment.ts';
import { isLive } from '#lib/domain/payment.ts';
import { settlePayment, type SettledPayment } from '#lib/flows/payment-settle.ts';
import { cancelIfUnpaid } from '#lib/flows/unpaid.ts';
import { ProviderError } from '#lib/payments/adapter.ts';

/*
 * The reconciler (extensions section 13), every 5 minutes: each live payment is asked at its
 * provider and settled (a lost notification still approves its order); with the provider down,
 * only the clock settles it (rule 7: past its `expires_at` it is EXPIRED and cancelled at the
 * provider, best effort). A checkout order left PENDING with no live payment once its 30 minutes
 * are over is canceled as in section 8 (stock, limits and coupon given back).
 *
 * | step                         | calls                                                                     |
 * |------------------------------|---------------------------------------------------------------------------|
 * | the live list                | Query `PAYMENT_LIVE` (1 per MB)                                           |
 * | each entry                   | GetItem payment; live: settle (lib/flows/payment-settle.ts); settled: DeleteItem entry |
 * | its order, when PENDING      | the cancel's GetItem + Query the order's payments; abandoned: TransactWrite (guarded by the payment count) |
 */

export interface ReconcileResult {
  visited: number;
  settled: number;
  expired: number;
  canceledOrders: number;
  providerDown: number;
}

/** One run over the live payments: of one store (`storeId`), or of every store (the job). */
export async function reconcilePayments(apiBase: string, storeId?: number): Promise<ReconcileResult> {
  const result: ReconcileResult = { visited: 0, settled: 0, expired: 0, canceledOrders: 0, providerDown: 0 };
  for (const entry of await livePaymentEntries(storeId)) {
    result.visited += 1;
    await reconcileOne(entry, apiBase, result);
  }
  return result;
}

async function reconcileOne(entry: LivePaymentEntry, apiBase: string, result: ReconcileResult): Promise<void> {
  const payment = await readPayment(entry.store_id, entry.order_id, entry.payment_id);
  if (!payment || !isLive(payment.status)) {
    await dropLivePayment(entry);
    return;
  }
  const request = { storeId: entry.store_id, orderId: entry.order_id, paymentId: entry.payment_id, source: 'RECONCILER' as const, apiBase };
  let settled: SettledPayment;
  try {
    settled = await settlePayment({ ...request, learn: { ask: 'provider' }, read: payment });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    result.providerDown += 1;
    settled = await settlePayment({ ...request, learn: { ask: 'report', report: { kind: 'clock' } } });
  }
  if (settled.payment.revision !== payment.revision) result.settled += 1;
  if (settled.payment.status === 'EXPIRED') result.expired += 1;
  if (isLive(settled.payment.status)) return;
  await dropLivePayment(entry);
  const order = settled.order;
  if (order.status !== 'PENDING' || order.checkout === null) return;
  // The unpaid-order job's cancel: guarded against a payment created after the payments were read.
  if (await cancelIfUnpaid(entry.store_id, entry.order_id, currentTimeMs())) result.canceledOrders += 1;
}
