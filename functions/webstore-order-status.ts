import { pollOrderStatus } from '#lib/flows/payment-sync.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-order-status'], async ({ auth, params, event }) => pollOrderStatus(auth.storeId, params.orderId, apiBaseOf(event)));
