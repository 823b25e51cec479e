import { issueHandoffForCustomer } from '#lib/flows/handoff.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['handoff-issue'], async ({ auth }) => issueHandoffForCustomer(auth.storeId, auth.customerId));
