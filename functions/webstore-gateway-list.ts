import { storeGateways } from '#lib/flows/payment-gateway.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['webstore-gateway-list'], async ({ auth }) => storeGateways(auth.storeId));
