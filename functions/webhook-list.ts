import { webhookPage } from '#lib/db/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-list'], async ({ auth, query, event }) =>
  pageAnswer(await webhookPage(auth.storeId, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
