import { recordVisit } from '#lib/flows/affiliate.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { affiliateRoutes } from '#lib/routes/affiliate.ts';

export const handler = defineHandler(affiliateRoutes['affiliate-visit'], async ({ auth, body, event }) => {
  await recordVisit(auth.storeId, body.ref_code, event.requestContext.http.sourceIp);
  return noContent();
});
