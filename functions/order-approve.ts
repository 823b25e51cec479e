import { approveOrder } from '#lib/flows/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-approve'], async ({ auth, params }) => approveOrder(auth.storeId, params.orderId));
