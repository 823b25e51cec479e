import { listPackages } from '#lib/db/package.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { catalogRoutes } from '#lib/routes/catalog.ts';

export const handler = defineHandler(catalogRoutes['package-list'], async ({ auth, query, event }) =>
  paginate(await listPackages(auth.storeId), query.page, query.limit, requestLocation(event)),
);
