import { deleteTag } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { noContent } from '#lib/http/reply.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-delete'], async ({ auth, params }) => {
  await deleteTag(auth.storeId, params.tagId);
  return noContent();
});
