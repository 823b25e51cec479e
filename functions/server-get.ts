import { getServer } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-get'], async ({ auth, params }) => getServer(auth.storeId, params.serverId));
