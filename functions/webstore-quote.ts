import { quoteCart } from '#lib/flows/checkout.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-quote'], async ({ auth, body }) => quoteCart(auth.storeId, body));
