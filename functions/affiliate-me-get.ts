import { getAffiliatePanel } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['affiliate-me-get'], async ({ auth }) => getAffiliatePanel(auth.storeId, auth.customerId, auth.domain));
