import { getDiscount } from '#lib/flows/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-get'], async ({ auth, params }) => getDiscount(auth.storeId, params.discountId));
