import { getCategory } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-get'], async ({ auth, params }) => getCategory(auth.storeId, params.categoryId));
