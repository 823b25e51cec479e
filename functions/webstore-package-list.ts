import { storefrontPackages } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-package-list'], async ({ auth, query, event }) =>
  paginate(await storefrontPackages(auth.storeId, query.category_id), query.page, query.limit, requestLocation(event)),
);
