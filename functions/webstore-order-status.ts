import { getOrderStatus } from '#lib/db/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-order-status'], async ({ auth, params }) => getOrderStatus(auth.storeId, params.orderId));
