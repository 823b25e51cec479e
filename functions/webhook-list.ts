import { listWebhookItems, toWebhook } from '#lib/db/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-list'], async ({ auth, query, event }) =>
  paginate((await listWebhookItems(auth.storeId)).map(toWebhook), query.page, query.limit, requestLocation(event)),
);
