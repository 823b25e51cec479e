import { listQueuedCommands } from '#lib/db/command.ts';
import { nowIso } from '#lib/db/keys.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { orderRoutes } from '#lib/routes/order.ts';

export const handler = defineHandler(orderRoutes['queued-commands-list'], async ({ auth }) => listQueuedCommands(auth.storeId, nowIso()));
