import { redeliver } from '#lib/flows/webhook.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { reply } from '#lib/http/reply.ts';
import { webhookRoutes } from '#lib/routes/webhook.ts';

export const handler = defineHandler(webhookRoutes['webhook-redeliver'], async ({ auth, params, requestId }) =>
  reply(202, await redeliver(auth.storeId, params.webhookId, params.deliveryId, requestId)),
);
