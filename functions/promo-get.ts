import { getPromo } from '#lib/db/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-get'], async ({ auth, params }) => getPromo(auth.storeId, params.promoId));
