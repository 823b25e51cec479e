import { getOrder } from '#lib/db/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-get'], async ({ auth, params }) => getOrder(auth.storeId, params.orderId));
