import { route } from '#lib/http/route.ts';
import { idParams, pageOf } from '#lib/schemas/common.ts';
import { discountCreateBody, discountListQuery, discountPatchBody, discountResource } from '#lib/schemas/discount.ts';

/** Discount coupons (operator). */
export const discountRoutes = {
  'discount-create': route({
    method: 'POST', path: '/v1/app/discount', api: 'api', credential: 'operator', access: 'write', tag: 'Discount',
    summary: 'Create a discount coupon (code unique per store, ignoring case)', body: discountCreateBody, response: discountResource,
    example: { body: { coupon: 'SUMMER10', type: 'PERCENTAGE', value: 10, max_uses: 100, expires_in: '2026-12-31T23:59:59Z' } },
  }),
  'discount-list': route({
    method: 'GET', path: '/v1/app/discount', api: 'api', credential: 'operator', access: 'read', tag: 'Discount',
    summary: 'List discount coupons (page mode, id order; filters status, coupon prefix, restricted_to)',
    query: discountListQuery, response: pageOf(discountResource),
    example: { query: { page: '1', limit: '20', status: 'ACTIVE', coupon: 'sum' } },
  }),
  'discount-get': route({
    method: 'GET', path: '/v1/app/discount/{discountId}', api: 'api', credential: 'operator', access: 'read', tag: 'Discount',
    summary: 'Get a discount coupon', params: idParams('discountId'), response: discountResource,
  }),
  'discount-update': route({
    method: 'PATCH', path: '/v1/app/discount/{discountId}', api: 'api', credential: 'operator', access: 'write', tag: 'Discount',
    summary: 'Change a discount coupon (only the fields sent)', params: idParams('discountId'), body: discountPatchBody, response: discountResource,
    example: { body: { max_uses: 200, expires_in: null } },
  }),
  'discount-delete': route({
    method: 'DELETE', path: '/v1/app/discount/{discountId}', api: 'api', credential: 'operator', access: 'write', tag: 'Discount',
    summary: 'Delete a discount coupon', params: idParams('discountId'), status: 204,
  }),
} as const;
