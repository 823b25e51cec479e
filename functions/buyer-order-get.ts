import { getBuyerOrder } from '#lib/flows/buyer-order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { deliveryRoutes } from '#lib/routes/delivery.ts';

export const handler = defineHandler(deliveryRoutes['buyer-order-get'], async ({ auth, params }) => getBuyerOrder(auth.storeId, auth.customerId, params.internalId));
