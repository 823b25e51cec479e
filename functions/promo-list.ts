import { listPromos } from '#lib/db/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-list'], async ({ auth, query, event }) =>
  paginate(await listPromos(auth.storeId), query.page, query.limit, requestLocation(event)),
);
