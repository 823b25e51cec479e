import { createPackage } from '#lib/db/package.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-create'], async ({ auth, body }) => createPackage(auth.storeId, body));
