import { listBuyerOrders } from '#lib/db/order-list.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { checkoutRoutes } from '#lib/routes/checkout.ts';
import { serverKeys } from '#lib/server-secret.ts';

export const handler = defineHandler(checkoutRoutes['webstore-order-list'], async ({ auth, query }) =>
  listBuyerOrders(auth.storeId, auth.customerId, query.page_cursor, query.page_size, await serverKeys()),
);
