import { reportCommand } from '#lib/flows/command.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['command-update'], async ({ auth, params, body }) => reportCommand(auth.storeId, params.commandId, body));
