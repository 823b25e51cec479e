import { reverseOrder } from '#lib/flows/order-reversal.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-chargeback'], async ({ auth, params }) => reverseOrder(auth.storeId, params.orderId, 'CHARGEBACK'));
