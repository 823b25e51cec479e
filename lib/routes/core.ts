import { route } from '#lib/http/route.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { storePatchBody, storeResource } from '#lib/schemas/store.ts';
import { tagCreateBody, tagPatchBody, tagResource } from '#lib/schemas/tag.ts';

/** Routes of the foundation: the store itself, tags, the OpenAPI document. */
export const coreRoutes = {
  'openapi-get': route({
    method: 'GET', path: '/v1/openapi.json', api: 'api', credential: 'public', access: 'none', tag: 'Meta',
    summary: 'The OpenAPI 3.1 document of this API',
  }),
  'store-get': route({
    method: 'GET', path: '/v1/app/store', api: 'api', credential: 'operator', access: 'read', tag: 'Store',
    summary: 'The store of the API token', response: storeResource,
  }),
  'store-update': route({
    method: 'PATCH', path: '/v1/app/store', api: 'api', credential: 'operator', access: 'write', tag: 'Store',
    summary: 'Change the store name, domain, affiliate settings, currency, theme or payment settings', body: storePatchBody, response: storeResource,
    example: { body: { name: 'Demo Store', affiliate: { percent_commission: 12 }, theme: { primary_color: '#10b981' } } },
  }),
  'tag-create': route({
    method: 'POST', path: '/v1/app/tag', api: 'api', credential: 'operator', access: 'write', tag: 'Tag', rerunsAfterLostAnswer: true,
    summary: 'Create a tag', body: tagCreateBody, response: tagResource,
    example: { body: { name: 'Sale', color: '#ef4444' } },
  }),
  'tag-list': route({
    method: 'GET', path: '/v1/app/tag', api: 'api', credential: 'operator', access: 'read', tag: 'Tag',
    summary: 'List tags (page mode, id order)', query: pageQuery, response: pageOf(tagResource),
    example: { query: { page: '1', limit: '20' } },
  }),
  'tag-get': route({
    method: 'GET', path: '/v1/app/tag/{tagId}', api: 'api', credential: 'operator', access: 'read', tag: 'Tag',
    summary: 'Get a tag', params: idParams('tagId'), response: tagResource,
  }),
  'tag-update': route({
    method: 'PATCH', path: '/v1/app/tag/{tagId}', api: 'api', credential: 'operator', access: 'write', tag: 'Tag',
    summary: 'Change a tag (only the fields sent)', params: idParams('tagId'), body: tagPatchBody, response: tagResource,
    example: { params: { tagId: '1' }, body: { color: '#10b981' } },
  }),
  'tag-delete': route({
    method: 'DELETE', path: '/v1/app/tag/{tagId}', api: 'api', credential: 'operator', access: 'write', tag: 'Tag',
    summary: 'Delete a tag', params: idParams('tagId'), status: 204,
  }),
} as const;
