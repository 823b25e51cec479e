import { route } from '#lib/http/route.ts';
import {
  affiliateLink,
  affiliateListQuery,
  affiliatePanel,
  linkBody,
  operatorAffiliatePatch,
  rejectBody,
  visitBody,
  withdrawalItem,
  withdrawalListQuery,
} from '#lib/schemas/affiliate.ts';
import { idParams, pageOf } from '#lib/schemas/common.ts';

/**
 * Affiliates, section 11: the operator's side (affiliates, withdrawals) and the buyer's links
 * and the storefront's visits. The buyer's panel, statement and withdrawal: lib/routes/buyer.ts.
 */
export const affiliateRoutes = {
  'affiliate-list': route({
    method: 'GET', path: '/v1/app/affiliate', api: 'api', credential: 'operator', access: 'read', tag: 'Affiliate (operator)',
    summary: 'List affiliates (page mode, main-code order; filters ref_code prefix and e-mail, ignoring case)',
    query: affiliateListQuery, response: pageOf(affiliatePanel),
    example: { query: { page: '1', limit: '20', ref_code: 'ana' } },
  }),
  'affiliate-get': route({
    method: 'GET', path: '/v1/app/affiliate/{affiliateId}', api: 'api', credential: 'operator', access: 'read', tag: 'Affiliate (operator)',
    summary: "An affiliate's panel", params: idParams('affiliateId'), response: affiliatePanel,
  }),
  'affiliate-update': route({
    method: 'PATCH', path: '/v1/app/affiliate/{affiliateId}', api: 'api', credential: 'operator', access: 'write', tag: 'Affiliate (operator)',
    summary: "Change an affiliate's commission, minimum withdrawal (null: the store's) or status (blocked: no commission, withdrawal or new link)",
    params: idParams('affiliateId'), body: operatorAffiliatePatch, response: affiliatePanel,
    // Affiliate 3 (alex), not the demo buyer (1), whom the buyer samples act as.
    example: { params: { affiliateId: '3' }, body: { percent_commission: 15, status: 'blocked' } },
  }),
  'withdrawal-list': route({
    method: 'GET', path: '/v1/app/affiliate/withdrawal', api: 'api', credential: 'operator', access: 'read', tag: 'Affiliate (operator)',
    summary: 'List withdrawals, newest first (page mode; filter status PENDING, PAID or REJECTED)',
    query: withdrawalListQuery, response: pageOf(withdrawalItem),
    example: { query: { page: '1', limit: '20', status: 'PENDING' } },
  }),
  'withdrawal-pay': route({
    method: 'POST', path: '/v1/app/affiliate/withdrawal/{transactionId}/pay', api: 'api', credential: 'operator', access: 'write', tag: 'Affiliate (operator)', rerunsAfterLostAnswer: true,
    summary: 'Mark a pending withdrawal paid (WITHDRAW_PAID), once; a rejected one is 409', params: idParams('transactionId'), response: withdrawalItem,
    // The demo seed's withdrawal requests: 5 for this sample, 6 for withdrawal-reject.
    example: { params: { transactionId: '5' } },
  }),
  'withdrawal-reject': route({
    method: 'POST', path: '/v1/app/affiliate/withdrawal/{transactionId}/reject', api: 'api', credential: 'operator', access: 'write', tag: 'Affiliate (operator)', rerunsAfterLostAnswer: true,
    summary: 'Reject a pending withdrawal (WITHDRAW_REJECTED, the message shown to the affiliate) and give the amount back, once; a paid one is 409',
    params: idParams('transactionId'), body: rejectBody, response: withdrawalItem,
    example: { params: { transactionId: '6' }, body: { message: 'The PIX key does not match the CPF' } },
  }),
  'affiliate-link-create': route({
    method: 'POST', path: '/v1/webstore/affiliate/link', api: 'api', credential: 'buyer', access: 'write', tag: 'Affiliate', rerunsAfterLostAnswer: true,
    summary: 'Add a link with its own code (at most 20 besides the main code; the code unique in the store)', body: linkBody, response: affiliateLink,
    example: { body: { name: 'YouTube', ref_code: 'ana_yt' } },
  }),
  'affiliate-link-delete': route({
    method: 'DELETE', path: '/v1/webstore/affiliate/link/{linkId}', api: 'api', credential: 'buyer', access: 'write', tag: 'Affiliate', status: 204,
    summary: 'Delete a link; its code is then unknown to orders and visits', params: idParams('linkId'),
    // The demo buyer's Twitch link (1 is its main code, which stays).
    example: { params: { linkId: '2' } },
  }),
  'affiliate-visit': route({
    method: 'POST', path: '/v1/webstore/affiliate/visit', api: 'api', credential: 'buyerStore', access: 'write', tag: 'Affiliate', status: 204,
    summary: 'Count a visit of a page opened with ?ref=<code> (once per visitor, code and hour); 404 for an unknown code',
    body: visitBody,
    example: { body: { ref_code: 'ana_games' } },
  }),
} as const;
