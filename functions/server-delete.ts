import { removeServer } from '#lib/flows/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-delete'], async ({ auth, params }) => {
  await removeServer(auth.storeId, params.serverId);
  return noContent();
});
