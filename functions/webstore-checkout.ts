import { checkout } from '#lib/flows/checkout.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-checkout'], async ({ auth, body }) => checkout(auth.storeId, auth.customerId, body));
