import { listDiscounts } from '#lib/flows/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { paginate, requestLocation } from '#lib/http/paginate.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-list'], async ({ auth, query, event }) =>
  paginate(await listDiscounts(auth.storeId, query), query.page, query.limit, requestLocation(event)),
);
