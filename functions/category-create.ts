import { createCategory } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-create'], async ({ auth, body }) => createCategory(auth.storeId, body));
