import { variablePage } from '#lib/db/variable.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

export const handler = defineHandler(variableRoutes['variable-list'], async ({ auth, query, event }) =>
  pageAnswer(await variablePage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
