import { getVariable } from '#lib/db/variable.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

export const handler = defineHandler(variableRoutes['variable-get'], async ({ auth, params }) => getVariable(auth.storeId, params.variableId));
