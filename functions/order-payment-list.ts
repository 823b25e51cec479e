import { listOrderPayments } from '#lib/flows/payment-read.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['order-payment-list'], async ({ auth, params }) => listOrderPayments(auth.storeId, params.orderId));
