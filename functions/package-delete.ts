import { deletePackageAndImage } from '#lib/flows/image.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-delete'], async ({ auth, params }) => {
  await deletePackageAndImage(auth.storeId, params.packageId);
  return noContent();
});
