import { storefrontPackage } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-package-get'], async ({ auth, params }) => storefrontPackage(auth.storeId, params.packageId));
