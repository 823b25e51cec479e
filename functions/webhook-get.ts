import { getWebhook } from '#lib/db/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-get'], async ({ auth, params }) => getWebhook(auth.storeId, params.webhookId));
