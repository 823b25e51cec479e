import { exchangeHandoff } from '#lib/db/handoff.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';

export const handler = defineHandler(buyerRoutes['customer-identify'], async ({ auth, body }) => exchangeHandoff(auth.storeId, body.handoff));
