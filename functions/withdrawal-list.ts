import { listStoreWithdrawals } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['withdrawal-list'], async ({ auth, query, event }) =>
  paginate(await listStoreWithdrawals(auth.storeId, query.status), query.page, query.limit, requestLocation(event)),
);
