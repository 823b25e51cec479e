import * as v from 'valibot';
import { route } from '#lib/http/route.ts';
import { idParams, idString, pageOf, pageQuery } from '#lib/schemas/common.ts';
import {
  redeliveryResource,
  webhookCreateBody,
  webhookCreatedResource,
  webhookDeliveryPage,
  webhookDeliveryQuery,
  webhookPatchBody,
  webhookResource,
} from '#lib/schemas/webhook.ts';

/** Webhooks (operator): the subscriptions, their delivery log, and redelivery. Delivery itself runs off the table's stream (lib/flows/webhook-router.ts). */
export const webhookRoutes = {
  'webhook-create': route({
    method: 'POST', path: '/v1/app/webhook', api: 'api', credential: 'operator', access: 'write', tag: 'Webhook', rerunsAfterLostAnswer: true,
    summary: 'Subscribe a URL to events; the answer carries the signing secret, shown only here',
    body: webhookCreateBody, response: webhookCreatedResource,
    // Created disabled, as a receiver not yet ready would be: webhook-update enables it.
    example: { body: { url: 'https://example.com/hooks/store', events: ['order.approved', 'order.delivered', 'payment.attention'], description: 'Fulfilment', enabled: false } },
  }),
  'webhook-list': route({
    method: 'GET', path: '/v1/app/webhook', api: 'api', credential: 'operator', access: 'read', tag: 'Webhook',
    summary: 'List webhooks (page mode, id order)', query: pageQuery, response: pageOf(webhookResource),
    example: { query: { page: '1', limit: '20' } },
  }),
  'webhook-get': route({
    method: 'GET', path: '/v1/app/webhook/{webhookId}', api: 'api', credential: 'operator', access: 'read', tag: 'Webhook',
    summary: 'Get a webhook', params: idParams('webhookId'), response: webhookResource,
  }),
  'webhook-update': route({
    method: 'PATCH', path: '/v1/app/webhook/{webhookId}', api: 'api', credential: 'operator', access: 'write', tag: 'Webhook',
    summary: 'Change a webhook (only the fields sent); enabling it again clears its count of failed events',
    params: idParams('webhookId'), body: webhookPatchBody, response: webhookResource,
    example: { params: { webhookId: '1' }, body: { enabled: true } },
  }),
  'webhook-delete': route({
    method: 'DELETE', path: '/v1/app/webhook/{webhookId}', api: 'api', credential: 'operator', access: 'write', tag: 'Webhook',
    summary: 'Delete a webhook: nothing more is sent to it', params: idParams('webhookId'), status: 204,
  }),
  'webhook-delivery-list': route({
    method: 'GET', path: '/v1/app/webhook/{webhookId}/delivery', api: 'api', credential: 'operator', access: 'read', uses: ['secret'], tag: 'Webhook',
    summary: 'The delivery attempts of a webhook, newest first (cursor mode: page_cursor, page_size up to 200, default 50)',
    params: idParams('webhookId'), query: webhookDeliveryQuery, response: webhookDeliveryPage,
    example: { params: { webhookId: '1' }, query: { page_cursor: '', page_size: '50' } },
  }),
  'webhook-redeliver': route({
    method: 'POST', path: '/v1/app/webhook/{webhookId}/delivery/{deliveryId}/redeliver', api: 'api', credential: 'operator', access: 'write', tag: 'Webhook', rerunsAfterLostAnswer: true,
    summary: "Send an attempt's event again soon (the same body, freshly signed); 202",
    params: v.object({ webhookId: idString, deliveryId: idString }), response: redeliveryResource, status: 202,
    example: { params: { webhookId: '1', deliveryId: '1' } },
  }),
} as const;
