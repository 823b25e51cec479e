import { refundStrayPayment } from '#lib/flows/payment-operator.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['order-payment-refund'], async ({ auth, params, event }) =>
  refundStrayPayment(auth.storeId, params.orderId, params.paymentId, apiBaseOf(event)),
);
