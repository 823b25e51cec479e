import { deleteDiscount } from '#lib/db/discount.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { discountRoutes } from '#lib/routes/discount.ts';

export const handler = defineHandler(discountRoutes['discount-delete'], async ({ auth, params }) => {
  await deleteDiscount(auth.storeId, params.discountId);
  return noContent();
});
