import { usableCoupon } from '#lib/flows/storefront.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-discount-get'], async ({ auth, params }) => usableCoupon(auth.storeId, params.code));
