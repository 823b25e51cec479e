import { assertBuyerOwns } from '#lib/db/chat.ts';
import { findCustomer } from '#lib/db/customer.ts';
import { getOrderItemByInternalId, toOrder } from '#lib/db/order.ts';
import { orderDeliveries } from '#lib/flows/command.ts';

/**
 * GET /v1/webstore/order/{internal_id}: the buyer's own order with its deliveries. Another
 * buyer's order is a 404, like a missing one. Calls (excluding the credential): sentinel GetItem
 * + order GetItem beside the customer GetItem, then BatchGet of the commands and of their servers: 4-5.
 */
export async function getBuyerOrder(storeId: number, customerId: number, internalId: string) {
  const [order, customer] = await Promise.all([getOrderItemByInternalId(storeId, internalId), findCustomer(storeId, customerId)]);
  assertBuyerOwns(customer, order.client_email);
  return { ...toOrder(order), deliveries: await orderDeliveries(storeId, order) };
}
