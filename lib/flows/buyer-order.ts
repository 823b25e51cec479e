import { getBuyerOrderItem, orderResponse } from '#lib/db/order.ts';
import { orderDeliveries } from '#lib/flows/command.ts';

/**
 * GET /v1/webstore/order/{internal_id}: one of the buyer's own orders (lib/db/order.ts; another
 * buyer's is a 404) with its deliveries. Calls (excluding the credential): BatchGet (sentinel,
 * customer) + order GetItem + BatchGet of its commands + BatchGet of their servers: 4 (3 before approval).
 */
export async function getBuyerOrderWithDeliveries(storeId: number, customerId: number, internalId: string) {
  const order = await getBuyerOrderItem(storeId, customerId, internalId);
  return { ...orderResponse(order), deliveries: await orderDeliveries(storeId, order) };
}
