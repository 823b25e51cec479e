import { deleteVariable } from '#lib/db/variable.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

export const handler = defineHandler(variableRoutes['variable-delete'], async ({ auth, params }) => {
  await deleteVariable(auth.storeId, params.variableId);
  return noContent();
});
