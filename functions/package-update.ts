import { updatePackage } from '#lib/db/package.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-update'], async ({ auth, params, body }) => updatePackage(auth.storeId, params.packageId, body));
