import { updateCategory } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-update'], async ({ auth, params, body }) => updateCategory(auth.storeId, params.categoryId, body));
