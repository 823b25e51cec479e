import { answerPreflight } from '#lib/http/cors.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { storefrontRoutes } from '#lib/routes/storefront.ts';

export const handler = defineHandler(storefrontRoutes['webstore-root-preflight'], async ({ event }) => answerPreflight(event));
