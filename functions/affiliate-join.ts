import { joinAffiliate } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['affiliate-join'], async ({ auth, body }) => joinAffiliate(auth.storeId, auth.customerId, auth.domain, body.ref_code));
