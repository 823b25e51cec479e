import { listTags } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-list'], async ({ auth, query, event }) =>
  paginate(await listTags(auth.storeId), query.page, query.limit, requestLocation(event)),
);
