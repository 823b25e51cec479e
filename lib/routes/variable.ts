import { route } from '#lib/http/route.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { variableCreateBody, variablePatchBody, variableResource } from '#lib/schemas/variable.ts';

/** Checkout variables (operator). */
export const variableRoutes = {
  'variable-create': route({
    method: 'POST', path: '/v1/app/variable', api: 'api', credential: 'operator', access: 'write', tag: 'Variable', rerunsAfterLostAnswer: true,
    summary: 'Create a checkout variable (name unique per store, ignoring case)', body: variableCreateBody, response: variableResource,
    example: {
      body: {
        // The demo store already asks for `server`; a second, optional variable keeps every other sample order valid.
        name: 'world', type: 'SELECT', description: 'World to spawn in', required: false,
        options: [{ name: 'Overworld', value: 'overworld', price: null }, { name: 'Nether', value: 'nether', price: 2 }],
      },
    },
  }),
  'variable-list': route({
    method: 'GET', path: '/v1/app/variable', api: 'api', credential: 'operator', access: 'read', tag: 'Variable',
    summary: 'List checkout variables (page mode, id order)', query: pageQuery, response: pageOf(variableResource),
  }),
  'variable-get': route({
    method: 'GET', path: '/v1/app/variable/{variableId}', api: 'api', credential: 'operator', access: 'read', tag: 'Variable',
    summary: 'Get a checkout variable', params: idParams('variableId'), response: variableResource,
  }),
  'variable-update': route({
    method: 'PATCH', path: '/v1/app/variable/{variableId}', api: 'api', credential: 'operator', access: 'write', tag: 'Variable',
    summary: 'Change a checkout variable; options are matched by name (new ones created, missing ones deactivated)',
    params: idParams('variableId'), body: variablePatchBody, response: variableResource,
    example: { body: { options: [{ name: 'Survival', value: 'survival', price: null }, { name: 'Skyblock', value: 'skyblock', price: 1 }] } },
  }),
  'variable-delete': route({
    method: 'DELETE', path: '/v1/app/variable/{variableId}', api: 'api', credential: 'operator', access: 'write', tag: 'Variable',
    summary: 'Delete a checkout variable', params: idParams('variableId'), status: 204,
  }),
} as const;
