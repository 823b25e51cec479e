import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { idParams } from '#lib/schemas/common.ts';
import {
  orderPaymentParams,
  paymentNotifyParams,
  paymentNotifyQuery,
  paymentNotifyResource,
  paymentResource,
  paymentWithHistoryResource,
  TEST_ACTIONS,
} from '#lib/schemas/payment.ts';
import { gatewayChoiceResource, providerAccountBody, providerAccountResource, providerParams } from '#lib/schemas/payment-provider.ts';

/**
 * Payments (extensions section 13): the store's provider accounts, and the gateways buyers see. `provider-secrets-seal` is the
 * KMS Encrypt grant of the stage's payment key, given to the one route that writes provider
 * secrets; `provider-secrets-open` (Decrypt) goes to the functions that call providers with them.
 */
const testPageParams = v.object({ ref: v.pipe(v.string(), v.regex(/^tst_[A-Za-z0-9_-]{1,64}$/, 'ref names no TEST payment')) });

export const paymentRoutes = {
  'payment-provider-put': route({
    method: 'PUT', path: '/v1/app/payment/provider/{provider}', api: 'api', credential: 'operator', access: 'write', uses: ['secret', 'provider-secrets-seal'], tag: 'Payment',
    summary: 'Connect (or change) the store account at a payment provider: the credentials are checked with one provider call, stored encrypted and answered masked, with the notification_url to paste into the provider',
    params: providerParams, body: providerAccountBody, response: providerAccountResource,
    example: { params: { provider: 'test' }, body: { enabled: true } },
  }),
  'payment-provider-list': route({
    method: 'GET', path: '/v1/app/payment/provider', api: 'api', credential: 'operator', access: 'read', uses: ['secret'], tag: 'Payment',
    summary: "The store's payment provider accounts, secrets masked", response: v.array(providerAccountResource),
  }),
  'payment-provider-get': route({
    method: 'GET', path: '/v1/app/payment/provider/{provider}', api: 'api', credential: 'operator', access: 'read', uses: ['secret'], tag: 'Payment',
    summary: 'One payment provider account, secrets masked', params: providerParams, response: providerAccountResource,
    example: { params: { provider: 'test' } },
  }),
  'payment-provider-delete': route({
    method: 'DELETE', path: '/v1/app/payment/provider/{provider}', api: 'api', credential: 'operator', access: 'write', tag: 'Payment',
    summary: 'Stop taking new payments through a provider (its payments already made keep settling)', params: providerParams, status: 204,
    example: { params: { provider: 'test' } },
  }),
  'payment-test-page': route({
    method: 'GET', path: '/v1/payment/test/{ref}', api: 'api', credential: 'public', access: 'read', tag: 'Payment',
    summary: "The TEST gateway's page of a charge (only where the TEST gateway is offered): the amount and a button for each action (pay, fail, cancel, refund, dispute, win, lose); an HTML page",
    params: testPageParams, query: v.object({ notified: v.optional(v.pipe(v.string(), v.regex(/^(\d{3}|unreachable)$/, 'notified is a status'))) }),
    example: { params: { ref: '{{test_charge_ref}}' } },
  }),
  'payment-test-action': route({
    method: 'POST', path: '/v1/payment/test/{ref}/{action}', api: 'api', credential: 'public', access: 'write', uses: ['provider-secrets-open'], tag: 'Payment',
    summary: "A button of the TEST page: changes the charge at the pretend provider, then POSTs a signed notification to the store's notify URL (the same path as a real provider's); answers 303 back to the page",
    params: v.object({ ...testPageParams.entries, action: v.picklist(TEST_ACTIONS, 'action is not a button of the TEST page') }),
    example: { params: { ref: '{{test_charge_ref}}', action: 'pay' } },
  }),
  'webstore-gateway-list': route({
    method: 'GET', path: '/v1/webstore/gateway', api: 'api', credential: 'buyerStore', access: 'read', tag: 'Storefront',
    summary: 'The payment gateways a buyer may choose at checkout: those of the enabled provider accounts', response: v.array(gatewayChoiceResource),
  }),
  'payment-notify': route({
    method: 'POST', path: '/v1/payment/notify/{provider}/{notifyKey}', api: 'api', credential: 'public', access: 'write', uses: ['provider-secrets-open'], tag: 'Payment',
    summary: "A payment provider's notification (the store's notification_url): the signature checked on the raw body, then the payment fetched from the provider and settled; 503 with Retry-After when the provider cannot be asked",
    params: paymentNotifyParams, query: paymentNotifyQuery, response: paymentNotifyResource,
    // The TEST gateway's notification of a charge the demo store does not know: signed, so 200 with nothing to do (infra/local/invoke-event.ts signs it).
    example: {
      params: { provider: 'test', notifyKey: '{{test_notify_key}}' },
      headers: { 'x-test-signature': '{{test_notify_signature}}' },
      body: { type: 'payment', data: { id: 'tst_sample' } },
    },
  }),
  'order-payment-sync': route({
    method: 'POST', path: '/v1/app/order/{orderId}/payment/{paymentId}/sync', api: 'api', credential: 'operator', access: 'write', uses: ['provider-secrets-open'], tag: 'Payment', rerunsAfterLostAnswer: true,
    summary: "Ask the provider now for a payment of the order and settle what it says (the same rules as a notification); 502 when the provider cannot be reached",
    params: orderPaymentParams, response: paymentResource,
    example: { params: { orderId: '{{payment_order_id}}', paymentId: '{{payment_id}}' } },
  }),
  'order-payment-list': route({
    method: 'GET', path: '/v1/app/order/{orderId}/payment', api: 'api', credential: 'operator', access: 'read', tag: 'Payment',
    summary: "The order's payments, newest first, each with its last 20 status transitions (`history`: when, from, to, and which source moved it)",
    params: idParams('orderId'), response: v.array(paymentWithHistoryResource),
    example: { params: { orderId: '{{payment_order_id}}' } },
  }),
  'order-payment-refund': route({
    method: 'POST', path: '/v1/app/order/{orderId}/payment/{paymentId}/refund', api: 'api', credential: 'operator', access: 'write', uses: ['provider-secrets-open'], tag: 'Payment', rerunsAfterLostAnswer: true,
    summary: "Refund at the provider a payment that is not the order's (DUPLICATE, UNFULFILLED); the order is untouched. The order's own payment is refunded with the order (409 here), a payment not paid is 409; 502 PROVIDER_UNAVAILABLE when the provider cannot be reached, 409 PROVIDER_REFUSED with its reason when it refuses (nothing changed either way)",
    params: orderPaymentParams, response: paymentResource,
    // A TEST payment paid after its order was canceled (UNFULFILLED), made for this sample by infra/local/invoke-event.ts.
    example: { params: { orderId: '{{stray_payment_order_id}}', paymentId: '{{stray_payment_id}}' } },
  }),
} as const;
