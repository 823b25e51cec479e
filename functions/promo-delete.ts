import { deletePromo } from '#lib/flows/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-delete'], async ({ auth, params }) => {
  await deletePromo(auth.storeId, params.promoId);
  return noContent();
});
