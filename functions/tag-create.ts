import { createTag } from '#lib/db/tag.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['tag-create'], async ({ auth, body }) => createTag(auth.storeId, body));
