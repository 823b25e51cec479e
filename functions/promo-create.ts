import { createPromo } from '#lib/flows/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-create'], async ({ auth, body }) => createPromo(auth.storeId, body));
