import { retryCommand } from '#lib/flows/command.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['command-retry'], async ({ auth, params }) => retryCommand(auth.storeId, params.commandId));
