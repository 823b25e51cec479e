import { listCommands } from '#lib/flows/command.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';
import { serverKeys } from '#lib/server-secret.ts';

export const handler = defineHandler(deliveryRoutes['command-list'], async ({ auth, query }) => listCommands(auth.storeId, query, await serverKeys()));
