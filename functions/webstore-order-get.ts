import { getBuyerOrderWithDeliveries } from '#lib/flows/buyer-order.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';

export const handler = defineHandler(checkoutRoutes['webstore-order-get'], async ({ auth, params }) =>
  getBuyerOrderWithDeliveries(auth.storeId, auth.customerId, params.internalId),
);
