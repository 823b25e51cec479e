import { route } from '#lib/http/route.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { promoResource } from '#lib/schemas/promo.ts';
import {
  couponParams,
  storefrontCategory,
  storefrontCategoryQuery,
  storefrontCoupon,
  storefrontPackage,
  storefrontPackageQuery,
  storefrontStoreResponse,
} from '#lib/schemas/storefront.ts';

/**
 * The public storefront: the store's catalog as buyers see it, found by the `x-store-domain`
 * header, no token. Browsers may call it from the store's origins (CORS, lib/http/cors.ts).
 */
export const storefrontRoutes = {
  'webstore-get': route({
    method: 'GET', path: '/v1/webstore', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'The store of the x-store-domain header', response: storefrontStoreResponse,
  }),
  'webstore-category-list': route({
    method: 'GET', path: '/v1/webstore/category', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'Categories holding at least one enabled package (page mode, limit up to 1,000)', query: storefrontCategoryQuery, response: pageOf(storefrontCategory),
    example: { query: { include_sub_categories: 'true' } },
  }),
  'webstore-package-list': route({
    method: 'GET', path: '/v1/webstore/package', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'Enabled packages, id order (page mode, limit up to 1,000; filter category_id)', query: storefrontPackageQuery, response: pageOf(storefrontPackage),
    example: { query: { page: '1', limit: '100' } },
  }),
  'webstore-package-get': route({
    method: 'GET', path: '/v1/webstore/package/{packageId}', api: 'api', credential: 'buyerStore', access: 'read', uses: ['counters'], tag: 'Storefront',
    summary: 'An enabled package (a disabled one is 404)', params: idParams('packageId'), response: storefrontPackage,
  }),
  'webstore-discount-get': route({
    method: 'GET', path: '/v1/webstore/discount/{code}', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'A coupon usable now (any case); one 404 for unknown, expired and sold-out codes', params: couponParams, response: storefrontCoupon,
    example: { params: { code: 'WELCOME10' } },
  }),
  'webstore-promo-list': route({
    method: 'GET', path: '/v1/webstore/promo', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'Promos in force now (page mode, id order)', query: pageQuery, response: pageOf(promoResource),
  }),
  'webstore-preflight': route({
    method: 'OPTIONS', path: '/v1/webstore/{proxy+}', api: 'api', credential: 'public', access: 'read', tag: 'Storefront',
    summary: "CORS preflight of the storefront and buyer routes, answered from the Origin (204 for a store's origin, 403 otherwise)",
    example: { headers: { origin: 'https://{{store_domain}}', 'access-control-request-method': 'GET' } },
  }),
  'webstore-root-preflight': route({
    method: 'OPTIONS', path: '/v1/webstore', api: 'api', credential: 'public', access: 'read', tag: 'Storefront',
    summary: 'CORS preflight of GET /v1/webstore (a greedy path variable needs at least one segment)',
    example: { headers: { origin: 'https://{{store_domain}}', 'access-control-request-method': 'GET' } },
  }),
} as const;
