import { createServer } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-create'], async ({ auth, body }) => createServer(auth.storeId, body));
