import { tagPage } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-list'], async ({ auth, query, event }) =>
  pageAnswer(await tagPage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
