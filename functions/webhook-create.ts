import { createStoreWebhook } from '#lib/flows/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-create'], async ({ auth, body }) => createStoreWebhook(auth.storeId, body));
