import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { affiliatePanel, affiliatePatchBody, affiliateTransaction, joinBody, transactionPage, transactionsQuery, withdrawBody } from '#lib/schemas/affiliate.ts';
import { customerPatchBody, customerResource, loginBody, loginResponse, sessionVerifyResponse, verifyBody, verifyResponse } from '#lib/schemas/buyer.ts';
import { handoffResponse, identifyBody, identifyQuery, identifyResponse } from '#lib/schemas/handoff.ts';

/**
 * Buyers: e-mail login (API token or store-domain session), the customer profile, the affiliate
 * program, and the handoff that tells the store owner's server who is logged in.
 */
export const buyerRoutes = {
  'auth-login': route({
    method: 'POST', path: '/v1/webstore/auth/login', api: 'api', credential: 'buyerStore', access: 'write', uses: ['mail', 'secret'], tag: 'Auth',
    summary: 'E-mail a 6-digit login code (valid 10 minutes, 5 attempts; 5 codes per e-mail per 10 minutes)', body: loginBody, response: loginResponse,
    example: { body: { email: 'buyer@example.com' } },
  }),
  'auth-verify': route({
    method: 'POST', path: '/v1/webstore/auth/verify', api: 'api', credential: 'buyerStore', access: 'write', uses: ['secret'], tag: 'Auth',
    summary: 'Exchange the e-mailed code for a buyer access token (creates the customer on first login)', body: verifyBody, response: verifyResponse,
    example: { body: { email: 'buyer@demo.localhost', code: '{{login_code}}' } },
  }),
  'auth-store-login': route({
    method: 'POST', path: '/auth/login', api: 'store', credential: 'storeHost', access: 'write', uses: ['mail', 'secret'], tag: 'Auth',
    summary: "E-mail a login code, on the store's own domain", body: loginBody, response: loginResponse,
    example: { body: { email: 'buyer@example.com' } },
  }),
  'auth-store-verify': route({
    method: 'POST', path: '/auth/verify', api: 'store', credential: 'storeHost', access: 'write', uses: ['secret'], tag: 'Auth',
    summary: 'Exchange the code for the store_session cookie (HttpOnly; Secure; SameSite=Lax)', body: verifyBody, response: sessionVerifyResponse,
    example: { body: { email: 'buyer@demo.localhost', code: '{{login_code}}' } },
  }),
  'auth-store-logout': route({
    method: 'POST', path: '/auth/logout', api: 'store', credential: 'storeHost', access: 'write', tag: 'Auth',
    summary: "End the session and clear its cookie (200 with or without a session; 401 for a cookie that is no live session of this store)", response: v.object({ logged_out: v.literal(true) }),
  }),
  'customer-me-get': route({
    method: 'GET', path: '/v1/webstore/customer/me', api: 'api', credential: 'buyer', access: 'read', tag: 'Customer',
    summary: 'The logged-in customer', response: customerResource,
  }),
  'customer-me-update': route({
    method: 'PATCH', path: '/v1/webstore/customer/me', api: 'api', credential: 'buyer', access: 'write', tag: 'Customer',
    summary: 'Change name, avatar or social_id (only the fields sent)', body: customerPatchBody, response: customerResource,
    example: { body: { name: 'Ana Souza', avatar: null } },
  }),
  'affiliate-join': route({
    method: 'POST', path: '/v1/webstore/affiliate/join', api: 'api', credential: 'buyer', access: 'write', tag: 'Affiliate', rerunsAfterLostAnswer: true,
    summary: "Join the store's affiliate program (an affiliate already gets the panel)", body: joinBody, response: affiliatePanel,
    example: { body: { ref_code: 'ana_games' } },
  }),
  'affiliate-me-get': route({
    method: 'GET', path: '/v1/webstore/affiliate/me', api: 'api', credential: 'buyer', access: 'read', tag: 'Affiliate',
    summary: 'The affiliate panel', response: affiliatePanel,
  }),
  'affiliate-me-update': route({
    method: 'PATCH', path: '/v1/webstore/affiliate/me', api: 'api', credential: 'buyer', access: 'write', tag: 'Affiliate',
    summary: 'Save the withdraw settings (PIX)', body: affiliatePatchBody, response: affiliatePanel,
    example: { body: { withdraw_settings: { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' } } },
  }),
  'affiliate-transactions': route({
    method: 'GET', path: '/v1/webstore/affiliate/transactions', api: 'api', credential: 'buyer', access: 'read', tag: 'Affiliate',
    summary: 'The affiliate statement, newest first, 15 per page', query: transactionsQuery, response: transactionPage,
    example: { query: { page: '1' } },
  }),
  'affiliate-withdraw': route({
    method: 'POST', path: '/v1/webstore/affiliate/withdraw', api: 'api', credential: 'buyer', access: 'write', tag: 'Affiliate', rerunsAfterLostAnswer: true,
    summary: 'Request a withdrawal: debits the balance and records a WITHDRAW_PENDING transaction', body: withdrawBody, response: affiliateTransaction,
    example: { body: { amount: 2 } },
  }),
  'handoff-issue': route({
    method: 'GET', path: '/auth/handoff', api: 'store', credential: 'session', access: 'write', tag: 'Handoff', errorStyle: 'single',
    summary: 'Issue a single-use handoff valid 60 seconds (20 per minute per customer)', response: handoffResponse,
  }),
  'customer-identify': route({
    method: 'POST', path: '/v1/app/customer/identify', api: 'api', credential: 'apiKey', scope: 'customers:identify', access: 'write', tag: 'Handoff',
    summary: 'Exchange a handoff (in the body only) for the customer identity', query: identifyQuery, body: identifyBody, response: identifyResponse,
    example: { body: { handoff: '{{handoff}}' } },
  }),
} as const;
