import { createOrder } from '#lib/flows/order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-create'], async ({ auth, body }) => createOrder(auth.storeId, body));
