import { settleWithdrawal } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['withdrawal-reject'], async ({ auth, params, body }) =>
  settleWithdrawal(auth.storeId, params.transactionId, 'reject', body.message),
);
