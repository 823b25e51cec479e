import { updateTag } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-update'], async ({ auth, params, body }) => updateTag(auth.storeId, params.tagId, body));
