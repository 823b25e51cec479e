import { ackCommands } from '#lib/flows/delivery.ts';
import { deliveryServer } from '#lib/http/auth.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['delivery-ack'], async ({ auth, body }) => ackCommands(auth.storeId, deliveryServer(auth), body));
