import { currentTimeMs } from '#lib/clock.ts';
import { getOrderItem, orderIdOf } from '#lib/db/order.ts';
import { claimProviderAsk, orderPayments, readPayment } from '#lib/db/payment.ts';
import { isLive, POLL_FETCH_INTERVAL_MS, type PaymentRecord } from '#lib/domain/payment.ts';
import { notFound, providerUnavailable } from '#lib/errors.ts';
import { settlePayment } from '#lib/flows/payment-settle.ts';
import { ProviderError } from '#lib/payments/adapter.ts';
import type { OrderStatus } from '#lib/schemas/order.ts';

/*
 * Settling on demand (extensions section 13): the operator's sync of one payment, and the buyer's
 * status poll that asks the provider first.
 *
 * | use case | calls                                                                                         |
 * |----------|-----------------------------------------------------------------------------------------------|
 * | sync     | GetItem payment (404 for another order's or store's) + settle (3 GetItems + account + the write) |
 * | poll     | GetItem sentinel + GetItem order; PENDING: Query the order's payments, and per live payment  |
 * |          | one conditional Put claiming the provider call (one per payment per 10 s, however many polls  |
 * |          | race) and, for the claimer, settle (the order's status as settled is the answer)             |
 */

/** `POST /app/order/{id}/payment/{payment_id}/sync`: the provider asked now, its word settled; 502 when it cannot be asked. */
export async function syncPayment(storeId: number, orderId: number, paymentId: string, apiBase: string): Promise<PaymentRecord> {
  const payment = await readPayment(storeId, orderId, paymentId);
  if (!payment) throw notFound('Payment');
  try {
    return (await settlePayment({ storeId, orderId, paymentId, source: 'SYNC', learn: { ask: 'provider' }, apiBase })).payment;
  } catch (error) {
    if (error instanceof ProviderError) throw providerUnavailable();
    throw error;
  }
}

/**
 * `GET /webstore/order_status/{order_id}`: a PENDING order's live payments not asked about for
 * 10 seconds are settled from the provider first, so a buyer whose notification was lost still
 * sees the order paid. A provider that cannot be asked leaves the status as stored (the poll
 * comes again in 5 seconds).
 */
export async function pollOrderStatus(storeId: number, internalId: string, apiBase: string): Promise<{ status: OrderStatus }> {
  const orderId = await orderIdOf(storeId, internalId);
  const order = await getOrderItem(storeId, orderId);
  if (order.status !== 'PENDING') return { status: order.status };
  const live = (await orderPayments(storeId, orderId)).filter((payment) => isLive(payment.status));
  for (const payment of live) {
    if (!(await claimProviderAsk(storeId, payment.id, currentTimeMs(), POLL_FETCH_INTERVAL_MS))) continue;
    try {
      const outcome = await settlePayment({ storeId, orderId, paymentId: payment.id, source: 'POLL', learn: { ask: 'provider' }, apiBase });
      if (outcome.order.status !== 'PENDING') return { status: outcome.order.status };
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
    }
  }
  return { status: order.status };
}
