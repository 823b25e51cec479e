import { updatePromo } from '#lib/flows/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-update'], async ({ auth, params, body }) => updatePromo(auth.storeId, params.promoId, body));
