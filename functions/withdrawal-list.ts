import { storeWithdrawalPage } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['withdrawal-list'], async ({ auth, query, event }) =>
  pageAnswer(await storeWithdrawalPage(auth.storeId, query.status, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
