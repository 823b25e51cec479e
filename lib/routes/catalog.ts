import { route } from '#lib/http/route.ts';
import { categoryCreateBody, categoryPatchBody, categoryResource } from '#lib/schemas/category.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { packageCreateBody, packagePatchBody, packageResource } from '#lib/schemas/package.ts';

/** Catalog routes: categories and packages. */
export const catalogRoutes = {
  'category-create': route({
    method: 'POST', path: '/v1/app/category', api: 'api', credential: 'operator', access: 'write', tag: 'Category', rerunsAfterLostAnswer: true,
    summary: 'Create a category', body: categoryCreateBody, response: categoryResource,
    example: { body: { name: 'Cosmetics' } },
  }),
  'category-list': route({
    method: 'GET', path: '/v1/app/category', api: 'api', credential: 'operator', access: 'read', tag: 'Category',
    summary: 'List categories (page mode, id order)', query: pageQuery, response: pageOf(categoryResource),
  }),
  'category-get': route({
    method: 'GET', path: '/v1/app/category/{categoryId}', api: 'api', credential: 'operator', access: 'read', tag: 'Category',
    summary: 'Get a category', params: idParams('categoryId'), response: categoryResource,
  }),
  'category-update': route({
    method: 'PATCH', path: '/v1/app/category/{categoryId}', api: 'api', credential: 'operator', access: 'write', tag: 'Category',
    summary: 'Rename a category', params: idParams('categoryId'), body: categoryPatchBody, response: categoryResource,
    // Category 2 is the one category-create makes on the demo store (1, Ranks, holds its packages).
    example: { params: { categoryId: '2' }, body: { name: 'Starter kits' } },
  }),
  'category-delete': route({
    method: 'DELETE', path: '/v1/app/category/{categoryId}', api: 'api', credential: 'operator', access: 'write', tag: 'Category',
    summary: 'Delete a category no package or promo refers to (409 otherwise)', params: idParams('categoryId'), status: 204,
    example: { params: { categoryId: '2' } },
  }),
  'package-create': route({
    method: 'POST', path: '/v1/app/package', api: 'api', credential: 'operator', access: 'write', tag: 'Package', rerunsAfterLostAnswer: true,
    summary: 'Create a package (a variation when parent_id is set)', body: packageCreateBody, response: packageResource,
    example: { body: { name: 'Starter kit', price: 4.99, category_id: 1, commands: [{ command: 'kit {client_identifier} starter' }] } },
  }),
  'package-list': route({
    method: 'GET', path: '/v1/app/package', api: 'api', credential: 'operator', access: 'read', tag: 'Package',
    summary: 'List packages (page mode, id order)', query: pageQuery, response: pageOf(packageResource),
  }),
  'package-get': route({
    method: 'GET', path: '/v1/app/package/{packageId}', api: 'api', credential: 'operator', access: 'read', uses: ['counters'], tag: 'Package',
    summary: 'Get a package', params: idParams('packageId'), response: packageResource,
  }),
  'package-update': route({
    method: 'PATCH', path: '/v1/app/package/{packageId}', api: 'api', credential: 'operator', access: 'write', uses: ['images'], tag: 'Package',
    summary: 'Change a package (only the fields sent; image may only be set to null)', params: idParams('packageId'), body: packagePatchBody, response: packageResource,
    example: { body: { price: 8.99 } },
  }),
  'package-delete': route({
    method: 'DELETE', path: '/v1/app/package/{packageId}', api: 'api', credential: 'operator', access: 'write', uses: ['images'], tag: 'Package',
    summary: 'Delete a package that has no variations and that no promo or variable refers to (409 otherwise)', params: idParams('packageId'), status: 204,
  }),
} as const;
