import { getAffiliateById } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-get'], async ({ auth, params }) => getAffiliateById(auth.storeId, params.affiliateId));
