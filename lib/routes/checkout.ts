import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { internalIdString } from '#lib/schemas/chat.ts';
import {
  buyerOrderListQuery,
  buyerOrderPage,
  checkoutBody,
  checkoutResource,
  orderPaymentBody,
  orderPaymentResource,
  orderStatusResource,
  quoteBody,
  quoteResource,
} from '#lib/schemas/checkout.ts';
import { buyerOrderWithDeliveries } from '#lib/schemas/delivery.ts';

// The demo store's package 1 and coupon WELCOME10, and the `server` variable of variable-create's example.
const CART_EXAMPLE = {
  cart: [{ package_id: 1, quantity: 2, fields: { server: 'survival' } }],
  coupon: 'WELCOME10',
};

/**
 * The storefront's buying side (section 8): the quote, the checkout (a guest, or a logged-in
 * buyer), the public order status, and a buyer's own orders. Priced by the one pricing engine
 * that prices `POST /v1/app/order`.
 */
export const checkoutRoutes = {
  'webstore-quote': route({
    method: 'POST', path: '/v1/webstore/cart/quote', api: 'api', credential: 'buyerStore', access: 'write', uses: ['secret'], tag: 'Storefront', rerunsAfterLostAnswer: true,
    summary: 'Price a cart with the promos in force and the coupon, check every rule of an order at once (every problem in one 422), reserve nothing; the quote is kept 15 minutes',
    body: quoteBody, response: quoteResource,
    example: { body: { ...CART_EXAMPLE, client_email: 'steve@example.com' } },
  }),
  'webstore-checkout': route({
    method: 'POST', path: '/v1/webstore/checkout', api: 'api', credential: 'buyerOptional', access: 'write', uses: ['secret', 'provider-secrets-open'], tag: 'Storefront', rerunsAfterLostAnswer: true,
    summary: "Place a PENDING order as a guest or a logged-in buyer: stock, limits and coupon reserved; a quote_id of the same cart keeps the quote's prices; canceled when still unpaid 30 minutes later",
    body: checkoutBody, response: checkoutResource,
    example: { body: { ...CART_EXAMPLE, client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve', gateway: 'TEST', terms: true } },
  }),
  'webstore-order-payment': route({
    method: 'POST', path: '/v1/webstore/order/{internalId}/payment', api: 'api', credential: 'buyerStore', access: 'write', uses: ['secret', 'provider-secrets-open'], tag: 'Storefront', status: 201,
    summary: "Pay a PENDING order (no token: the internal_id is unguessable): 201 a new payment through the gateway, 200 the order's live payment of that gateway instead of a second one; a new gateway cancels the order's other live payments; 409 when the order is not PENDING",
    params: v.object({ internalId: internalIdString }), body: orderPaymentBody, response: orderPaymentResource,
    example: { params: { internalId: '{{pending_order_internal_id}}' }, body: { gateway: 'TEST' } },
  }),
  'webstore-order-status': route({
    method: 'GET', path: '/v1/webstore/order_status/{orderId}', api: 'api', credential: 'buyerStore', access: 'write', uses: ['provider-secrets-open'], tag: 'Storefront',
    summary: 'The status of an order, by its internal_id (no client data); a PENDING order with a live payment not checked for 10 seconds asks the provider first',
    params: v.object({ orderId: internalIdString }), response: orderStatusResource,
    example: { params: { orderId: '{{order_internal_id}}' } },
  }),
  'webstore-order-list': route({
    method: 'GET', path: '/v1/webstore/order', api: 'api', credential: 'buyer', access: 'read', uses: ['secret'], tag: 'Storefront',
    summary: "The buyer's own orders (same e-mail, guest orders included), newest first, in cursor mode (page_cursor, page_size up to 200)",
    query: buyerOrderListQuery, response: buyerOrderPage,
    example: { query: { page_cursor: '', page_size: '50' } },
  }),
  'webstore-order-get': route({
    method: 'GET', path: '/v1/webstore/order/{internalId}', api: 'api', credential: 'buyer', access: 'read', tag: 'Storefront',
    summary: "One of the buyer's own orders, by internal_id, with its deliveries (another buyer's is 404)",
    params: v.object({ internalId: internalIdString }), response: buyerOrderWithDeliveries,
    example: { params: { internalId: '{{order_internal_id}}' } },
  }),
} as const;
