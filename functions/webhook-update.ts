import { updateStoreWebhook } from '#lib/flows/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-update'], async ({ auth, params, body }) => updateStoreWebhook(auth.storeId, params.webhookId, body));
