import { updateServer } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-update'], async ({ auth, params, body }) => updateServer(auth.storeId, params.serverId, body));
