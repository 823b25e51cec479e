import { listServers } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-list'], async ({ auth, query, event }) =>
  paginate(await listServers(auth.storeId), query.page, query.limit, requestLocation(event)),
);
