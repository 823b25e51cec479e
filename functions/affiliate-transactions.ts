import { listTransactions } from '#lib/db/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { buyerRoutes } from '#lib/routes/buyer.ts';
import { AFFILIATE_PAGE_SIZE } from '#lib/schemas/affiliate.ts';

export const handler = defineHandler(buyerRoutes['affiliate-transactions'], async ({ auth, query, event }) =>
  paginate(await listTransactions(auth.storeId, auth.customerId), query.page, AFFILIATE_PAGE_SIZE, requestLocation(event), { fixedLimit: true }),
);
