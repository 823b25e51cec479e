import { getTag } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-get'], async ({ auth, params }) => getTag(auth.storeId, params.tagId));
