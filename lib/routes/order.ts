import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { commandReportBody, commandResource, queuedCommandList } from '#lib/schemas/command.ts';
import { idParams, pageOf } from '#lib/schemas/common.ts';
import { orderRefundBody } from '#lib/schemas/payment.ts';
import { orderCreateBody, orderCursorPage, orderListQuery, orderResource, resendResource } from '#lib/schemas/order.ts';

/** Orders and their delivery commands (operator). */
export const orderRoutes = {
  'order-create': route({
    method: 'POST', path: '/v1/app/order', api: 'api', credential: 'operator', access: 'write', tag: 'Order', rerunsAfterLostAnswer: true,
    summary: 'Create an order (PENDING): packages priced from the catalog, variables and coupon checked, the coupon use reserved',
    body: orderCreateBody, response: orderResource,
    example: {
      body: {
        client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve',
        packages: [{ package_id: 1, quantity: 1 }], variables: [], coupon: 'WELCOME10',
      },
    },
  }),
  'order-list': route({
    method: 'GET', path: '/v1/app/order', api: 'api', credential: 'operator', access: 'read', uses: ['secret'], tag: 'Order',
    summary: 'List orders, newest first: page mode (page, limit) or cursor mode (page_cursor, page_size); filters status, from, to, package, email (ignoring case), client_identifier',
    query: orderListQuery, response: v.union([pageOf(orderResource), orderCursorPage]),
    example: { query: { page_cursor: '', page_size: '50', status: 'APPROVED' } },
  }),
  'order-get': route({
    method: 'GET', path: '/v1/app/order/{orderId}', api: 'api', credential: 'operator', access: 'read', tag: 'Order',
    summary: 'Get an order', params: idParams('orderId'), response: orderResource,
  }),
  'order-approve': route({
    method: 'POST', path: '/v1/app/order/{orderId}/approve', api: 'api', credential: 'operator', access: 'write', tag: 'Order', rerunsAfterLostAnswer: true,
    summary: 'Approve a PENDING order, once: queues its commands and credits the ref_code commission (a repeated call changes nothing)',
    params: idParams('orderId'), response: orderResource,
  }),
  'order-cancel': route({
    method: 'POST', path: '/v1/app/order/{orderId}/cancel', api: 'api', credential: 'operator', access: 'write', tag: 'Order', rerunsAfterLostAnswer: true,
    summary: 'Cancel a PENDING order, giving its coupon use back (a CANCELED order is answered unchanged; APPROVED is a 409)',
    params: idParams('orderId'), response: orderResource,
    // The demo store's order 2 is pending (1 is approved).
    example: { params: { orderId: '2' } },
  }),
  'order-refund': route({
    method: 'POST', path: '/v1/app/order/{orderId}/refund', api: 'api', credential: 'operator', access: 'write', uses: ['provider-secrets-open'], tag: 'Order', rerunsAfterLostAnswer: true,
    summary: 'Refund an APPROVED order, once: an order paid through a provider is refunded at the provider first (at_provider, default true; false records the refund only; 502 PROVIDER_UNAVAILABLE with nothing changed when the provider cannot be reached, 409 PROVIDER_REFUSED with its reason when it refuses); then cancels its APPROVED- and EXPIRED-stage commands not DONE, queues its REFUNDED-stage commands, reverses the commission, gives back the coupon use, stock and limit units (a REFUNDED order is answered unchanged; other states 409)',
    params: idParams('orderId'), body: orderRefundBody, bodyOptional: true, response: orderResource,
    // Approved orders of their own in the demo seed: 4 for this sample, 3 for order-chargeback.
    example: { params: { orderId: '4' } },
  }),
  'order-chargeback': route({
    method: 'POST', path: '/v1/app/order/{orderId}/chargeback', api: 'api', credential: 'operator', access: 'write', tag: 'Order', rerunsAfterLostAnswer: true,
    summary: 'Record a chargeback of an APPROVED order, once: as a refund, with the CHARGEBACK-stage commands (a CHARGEBACK order is answered unchanged; other states, REFUNDED included, 409)',
    params: idParams('orderId'), response: orderResource,
    example: { params: { orderId: '3' } },
  }),
  'command-resend': route({
    method: 'POST', path: '/v1/app/order/{orderId}/command/resend', api: 'api', credential: 'operator', access: 'write', tag: 'Command',
    summary: 'Put every command of an APPROVED order back on the queue', params: idParams('orderId'), response: resendResource,
  }),
  'queued-commands-list': route({
    method: 'GET', path: '/v1/app/queued_commands', api: 'api', credential: 'operator', access: 'read', tag: 'Command',
    summary: 'The PENDING commands whose execute_at has come, oldest first (at most 500 and under 5 MB per call; takes no lease)', response: queuedCommandList,
  }),
  'command-update': route({
    method: 'PATCH', path: '/v1/app/command/{commandId}', api: 'api', credential: 'operator', access: 'write', tag: 'Command',
    summary: 'Report a command execution: PENDING queues it again, DONE/FAILED/DEAD/CANCELED take it off the queue (DONE/DEAD/CANCELED release the later commands of its order); FAILED counts tries; ends any lease',
    params: idParams('commandId'), body: commandReportBody, response: commandResource,
    example: { body: { status: 'DONE', response: 'ok' } },
  }),
} as const;
