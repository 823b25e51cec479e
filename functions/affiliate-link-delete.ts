import { deleteLink } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-link-delete'], async ({ auth, params }) => {
  await deleteLink(auth.storeId, auth.customerId, params.linkId);
  return noContent();
});
