import { listCategories } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-list'], async ({ auth, query, event }) =>
  paginate(await listCategories(auth.storeId), query.page, query.limit, requestLocation(event)),
);
