import { getStoreOrThrow } from '#lib/db/store.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { coreRoutes } from '#lib/routes/core.ts';

export const handler = defineHandler(coreRoutes['store-get'], async ({ auth }) => getStoreOrThrow(auth.storeId));
