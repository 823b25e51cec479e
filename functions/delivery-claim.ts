import { claimCommands } from '#lib/flows/delivery.ts';
import { deliveryServer } from '#lib/http/auth.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['delivery-claim'], async ({ auth, body }) => claimCommands(auth.storeId, deliveryServer(auth), body));
