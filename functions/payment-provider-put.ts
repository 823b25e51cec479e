import { putProviderAccount } from '#lib/flows/payment-provider.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-provider-put'], async ({ auth, params, body, event }) =>
  putProviderAccount(auth.storeId, params.provider, body, apiBaseOf(event)),
);
