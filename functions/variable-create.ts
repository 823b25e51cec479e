import { createVariable } from '#lib/flows/variable.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

export const handler = defineHandler(variableRoutes['variable-create'], async ({ auth, body }) => createVariable(auth.storeId, body));
