import { createPromo } from '#lib/db/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-create'], async ({ auth, body }) => createPromo(auth.storeId, body));
