import { deleteCategory } from '#lib/db/category.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['category-delete'], async ({ auth, params }) => {
  await deleteCategory(auth.storeId, params.categoryId);
  return noContent();
});
