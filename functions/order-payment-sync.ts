import { syncPayment } from '#lib/flows/payment-sync.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['order-payment-sync'], async ({ auth, params, event }) =>
  syncPayment(auth.storeId, params.orderId, params.paymentId, apiBaseOf(event)),
);
