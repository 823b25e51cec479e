import { createLink } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-link-create'], async ({ auth, body }) => createLink(auth.storeId, auth.customerId, auth.domain, body));
