import { promoPageInForce } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-promo-list'], async ({ auth, query, event }) =>
  pageAnswer(await promoPageInForce(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
