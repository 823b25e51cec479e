import { storefrontStore } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-get'], async ({ auth }) => storefrontStore(auth.storeId));
