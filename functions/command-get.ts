import { getCommand } from '#lib/flows/command.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['command-get'], async ({ auth, params }) => getCommand(auth.storeId, params.commandId));
