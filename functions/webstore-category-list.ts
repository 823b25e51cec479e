import { storefrontCategories } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-category-list'], async ({ auth, query, event }) =>
  paginate(await storefrontCategories(auth.storeId), query.page, query.limit, requestLocation(event)),
);
