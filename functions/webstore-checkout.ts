import { checkout } from '#lib/flows/checkout.ts';
import { apiBaseOf } from '#lib/http/api-base.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-checkout'], async ({ auth, body, event }) => checkout(auth.storeId, auth.customerId, body, apiBaseOf(event)));
