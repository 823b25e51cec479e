import { defineHandler } from '#lib/http/handler.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';

/** Built once per container: the document depends only on the route table. */
const document = buildOpenApiDocument(routes);

export const handler = defineHandler(routes['openapi-get'], async () => document);
