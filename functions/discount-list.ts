import { discountPage } from '#lib/flows/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { pageAnswer, requestLocation } from '#lib/http/paginate.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-list'], async ({ auth, query, event }) =>
  pageAnswer(await discountPage(auth.storeId, query, query.page, query.limit), query.page, query.limit, requestLocation(event)),
);
