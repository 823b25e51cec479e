import { createDiscount } from '#lib/flows/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-create'], async ({ auth, body }) => createDiscount(auth.storeId, body));
