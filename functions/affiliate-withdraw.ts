import { requestWithdrawal } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['affiliate-withdraw'], async ({ auth, body }) => requestWithdrawal(auth.storeId, auth.customerId, body.amount));
