import { listDeliveries } from '#lib/db/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';
import { serverKeys } from '#lib/server-secret.ts';

export const handler = defineHandler(webhookRoutes['webhook-delivery-list'], async ({ auth, params, query }) =>
  listDeliveries(auth.storeId, params.webhookId, query.page_cursor, query.page_size, await serverKeys()),
);
