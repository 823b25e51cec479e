import { updateAffiliate } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-update'], async ({ auth, params, body }) => updateAffiliate(auth.storeId, params.affiliateId, body));
