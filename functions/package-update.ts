import { updatePackageReleasingImage } from '#lib/flows/image.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-update'], async ({ auth, params, body }) => updatePackageReleasingImage(auth.storeId, params.packageId, body));
