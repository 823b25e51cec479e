import { providerAccount } from '#lib/flows/payment-provider-read.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-provider-get'], async ({ auth, params, event }) => providerAccount(auth.storeId, params.provider, apiBaseOf(event)));
