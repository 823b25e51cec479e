import { cancelOrder } from '#lib/flows/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-cancel'], async ({ auth, params }) => cancelOrder(auth.storeId, params.orderId));
