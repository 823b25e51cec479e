import { deleteWebhook } from '#lib/db/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-delete'], async ({ auth, params }) => {
  await deleteWebhook(auth.storeId, params.webhookId);
  return noContent();
});
