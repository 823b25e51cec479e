import { requestOrderPayment } from '#lib/flows/payment-start.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-order-payment'], async ({ auth, params, body, event }) => {
  const { created, answer } = await requestOrderPayment(auth.storeId, params.internalId, body, apiBaseOf(event));
  return reply(created ? 201 : 200, answer);
});
