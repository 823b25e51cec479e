import { route } from '#lib/http/route.ts';
import { idParams, pageOf, pageQuery } from '#lib/schemas/common.ts';
import { promoCreateBody, promoPatchBody, promoResource } from '#lib/schemas/promo.ts';

/** Promo routes. */
export const promoRoutes = {
  'promo-create': route({
    method: 'POST', path: '/v1/app/promo', api: 'api', credential: 'operator', access: 'write', tag: 'Promo', rerunsAfterLostAnswer: true,
    summary: 'Create a promo with its tiers', body: promoCreateBody, response: promoResource,
    example: {
      body: {
        name: 'Spring', type: 'PROGRESSIVE', condition_mode: 'QUANTITY', starts_at: '2026-11-21T00:00:00Z',
        targets: [{ type: 'STORE' }], tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
      },
    },
  }),
  'promo-list': route({
    method: 'GET', path: '/v1/app/promo', api: 'api', credential: 'operator', access: 'read', tag: 'Promo',
    summary: 'List promos (page mode, id order)', query: pageQuery, response: pageOf(promoResource),
  }),
  'promo-get': route({
    method: 'GET', path: '/v1/app/promo/{promoId}', api: 'api', credential: 'operator', access: 'read', tag: 'Promo',
    summary: 'Get a promo', params: idParams('promoId'), response: promoResource,
  }),
  'promo-update': route({
    method: 'PATCH', path: '/v1/app/promo/{promoId}', api: 'api', credential: 'operator', access: 'write', tag: 'Promo',
    summary: 'Change a promo (any field; targets and tiers are replaced whole; the result obeys every creation rule)',
    params: idParams('promoId'), body: promoPatchBody, response: promoResource,
    example: { body: { name: 'Spring sale' } },
  }),
  'promo-delete': route({
    method: 'DELETE', path: '/v1/app/promo/{promoId}', api: 'api', credential: 'operator', access: 'write', tag: 'Promo',
    summary: 'Delete a promo', params: idParams('promoId'), status: 204,
  }),
} as const;
