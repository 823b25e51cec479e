import { getPackage } from '#lib/db/package.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-get'], async ({ auth, params }) => getPackage(auth.storeId, params.packageId));
