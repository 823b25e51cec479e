import { listAffiliatePanels } from '#lib/flows/affiliate-admin.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-list'], async ({ auth, query, event }) =>
  pageAnswer(await listAffiliatePanels(auth.storeId, query), query.page, query.limit, requestLocation(event)),
);
