import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { chatMessageBody, chatMessageResource, chatPage, chatPageQuery, internalIdString } from '#lib/schemas/chat.ts';

/**
 * Order chat: the operator's side (/app, API token) and the buyer's (/webstore, the order's own
 * customer). The order is named by its internal_id. On /app the path variable is `{orderId}`
 * because API Gateway refuses two differently named variables at one level of a path, and
 * /v1/app/order/{orderId}/... already exists; it holds the internal_id here.
 * Reading marks the other side's messages as read, so the list routes write (access 'write').
 */
export const chatRoutes = {
  'chat-list': route({
    method: 'GET', path: '/v1/app/order/{orderId}/chat/messages', api: 'api', credential: 'operator', access: 'write', tag: 'Order chat',
    summary: "The chat of an order (path: its internal_id), page mode: page 1 holds the newest messages, each page runs oldest to newest; marks the buyer's messages shown as read by seller",
    params: v.object({ orderId: internalIdString }), query: chatPageQuery, response: chatPage,
    example: { params: { orderId: '{{order_internal_id}}' }, query: { page: '1', limit: '20' } },
  }),
  'chat-create': route({
    method: 'POST', path: '/v1/app/order/{orderId}/chat/messages', api: 'api', credential: 'operator', access: 'write', tag: 'Order chat', rerunsAfterLostAnswer: true,
    summary: 'Send a store message (1-4000 characters) in the chat of an order (path: its internal_id)',
    params: v.object({ orderId: internalIdString }), body: chatMessageBody, response: chatMessageResource,
    example: { params: { orderId: '{{order_internal_id}}' }, body: { message: 'Your VIP rank is active.' } },
  }),
  'chat-buyer-list': route({
    method: 'GET', path: '/v1/webstore/order/{internalId}/chat/messages', api: 'api', credential: 'buyer', access: 'write', tag: 'Order chat',
    summary: "The chat of one of the buyer's orders (same e-mail), paged as on /app; marks the store's messages shown as read by buyer",
    params: v.object({ internalId: internalIdString }), query: chatPageQuery, response: chatPage,
    example: { params: { internalId: '{{order_internal_id}}' }, query: { page: '1', limit: '20' } },
  }),
  'chat-buyer-create': route({
    method: 'POST', path: '/v1/webstore/order/{internalId}/chat/messages', api: 'api', credential: 'buyer', access: 'write', tag: 'Order chat', rerunsAfterLostAnswer: true,
    summary: "Send a buyer message (1-4000 characters) in the chat of one of the buyer's orders",
    params: v.object({ internalId: internalIdString }), body: chatMessageBody, response: chatMessageResource,
    example: { params: { internalId: '{{order_internal_id}}' }, body: { message: 'Thanks!' } },
  }),
} as const;
