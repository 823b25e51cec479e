import { listOrderCommands } from '#lib/flows/command.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['order-command-list'], async ({ auth, params }) => listOrderCommands(auth.storeId, params.orderId));
