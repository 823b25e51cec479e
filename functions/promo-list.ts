import { promoPage } from '#lib/db/promo.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { promoRoutes } from '#lib/routes/promo.ts';

export const handler = defineHandler(promoRoutes['promo-list'], async ({ auth, query, event }) =>
  pageAnswer(await promoPage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
