import { categoryPage } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-list'], async ({ auth, query, event }) =>
  pageAnswer(await categoryPage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
