import { deleteProviderAccount } from '#lib/flows/payment-provider-read.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { paymentRoutes } from '#lib/routes/payment.ts';

export const handler = defineHandler(paymentRoutes['payment-provider-delete'], async ({ auth, params }) => {
  await deleteProviderAccount(auth.storeId, params.provider);
  return noContent();
});
