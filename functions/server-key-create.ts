import { createServerKey } from '#lib/db/server.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['server-key-create'], async ({ auth, params }) => ({ key: (await createServerKey(auth.storeId, params.serverId)).key }));
