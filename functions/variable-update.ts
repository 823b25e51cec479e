import { updateVariable } from '#lib/flows/variable.ts';
import { defineHandler } from '#lib/http/handler.ts';
import { variableRoutes } from '#lib/routes/variable.ts';

export const handler = defineHandler(variableRoutes['variable-update'], async ({ auth, params, body }) => updateVariable(auth.storeId, params.variableId, body));
