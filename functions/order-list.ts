import { listOrdersByCursor, orderPage } from '#lib/db/order-list.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { orderRoutes } from '#lib/routes/order.ts';
import { serverKeys } from '#lib/server-secret.ts';

/** `page_cursor` present (empty on the first call) selects cursor mode; otherwise page mode. */
export const handler = defineHandler(orderRoutes['order-list'], async ({ auth, query, event }) =>
  query.page_cursor === undefined
    ? pageAnswer(await orderPage(auth.storeId, query, query.page, query.limit), query.page, query.limit, requestLocation(event))
    : listOrdersByCursor(auth.storeId, query, query.page_cursor, query.page_size, await serverKeys()),
);
