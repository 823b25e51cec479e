import { serverPage } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-list'], async ({ auth, query, event }) =>
  pageAnswer(await serverPage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
