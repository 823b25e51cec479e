import { testPaymentAction } from '#lib/flows/payment-test-page.ts';
import { testPageUrl } from '#lib/flows/payment-adapters.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-test-action'], async ({ params, event }) => {
  const { notified } = await testPaymentAction(params.ref, params.action);
  return reply(303, undefined, { headers: { location: `${testPageUrl(apiBaseOf(event), params.ref)}?notified=${notified}` } });
});
