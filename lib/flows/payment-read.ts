import { getOrderItem } from '#lib/db/order.ts';
import { orderPayments } from '#lib/db/payment.ts';
import type { PaymentRecord } from '#lib/domain/payment.ts';

/*
 * The operator's read of an order's payments (extensions section 13). Apart from the refund flows
 * (payment-operator.ts) because it calls no provider: its function carries no KMS client and no
 * decrypt grant. Calls: GetItem order (404 for another store's) and Query its payments, at once.
 */

/** `GET /app/order/{id}/payment`: newest first, each with its last 20 transitions (`history`). */
export async function listOrderPayments(storeId: number, orderId: number): Promise<PaymentRecord[]> {
  const [, payments] = await Promise.all([getOrderItem(storeId, orderId), orderPayments(storeId, orderId)]);
  return payments;
}
