import { testPaymentPage } from '#lib/flows/payment-test-page.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { htmlReply } from '#lib/http/reply.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-test-page'], async ({ params, query, event }) =>
  htmlReply(200, await testPaymentPage(params.ref, apiBaseOf(event), query.notified ?? null)),
);
