import { updateWithdrawSettings } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['affiliate-me-update'], async ({ auth, body }) =>
  updateWithdrawSettings(auth.storeId, auth.customerId, auth.domain, body.withdraw_settings),
);
