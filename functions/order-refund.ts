import { refundOrder } from '#lib/flows/payment-operator.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['order-refund'], async ({ auth, params, body, event }) => refundOrder(auth.storeId, params.orderId, body, apiBaseOf(event)));
