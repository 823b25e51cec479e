import { providerAccounts } from '#lib/flows/payment-provider-read.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-provider-list'], async ({ auth, event }) => providerAccounts(auth.storeId, apiBaseOf(event)));
