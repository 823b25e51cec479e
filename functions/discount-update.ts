import { updateDiscount } from '#lib/flows/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-update'], async ({ auth, params, body }) => updateDiscount(auth.storeId, params.discountId, body));
