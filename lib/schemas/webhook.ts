import * as v from 'valibot';
import { queryInt, text, timestamp } from '#lib/schemas/common.ts';

/** The events a webhook may subscribe to (extensions section 12). */
export const WEBHOOK_EVENT_TYPES = [
  'order.created',
  'order.approved',
  'order.canceled',
  'order.refunded',
  'order.chargeback',
  'order.delivered',
  'command.failed',
  'command.dead',
  'affiliate.withdrawal_requested',
  'chat.message_created',
  // Extensions section 13: a payment made, failed, expired, or flagged for the operator's attention.
  'payment.created',
  'payment.failed',
  'payment.expired',
  'payment.attention',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Long enough for any real endpoint, short enough to bound the item. */
export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 500;

const url = v.pipe(
  v.string('url must be a string'),
  v.trim(),
  v.minLength(1, 'url is required'),
  v.maxLength(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`),
);
const events = v.pipe(
  v.array(v.picklist(WEBHOOK_EVENT_TYPES, `events must be among ${WEBHOOK_EVENT_TYPES.join(', ')}`), 'events must be an array'),
  v.minLength(1, 'events must name at least one event'),
  v.maxLength(WEBHOOK_EVENT_TYPES.length * 2, 'events lists too many entries'),
  // The same event twice means it once.
  v.transform((list) => [...new Set(list)]),
);
const description = v.nullable(text('description', WEBHOOK_DESCRIPTION_MAX));

export const webhookCreateBody = v.strictObject({
  url,
  events,
  description: v.optional(description, null),
  enabled: v.optional(v.boolean('enabled must be a boolean'), true),
});

export const webhookPatchBody = v.pipe(
  v.strictObject({ url: v.optional(url), events: v.optional(events), description: v.optional(description), enabled: v.optional(v.boolean('enabled must be a boolean')) }),
  v.check((patch) => Object.keys(patch).length > 0, 'Send at least one field to change'),
);

export const webhookResource = v.object({
  id: v.number(),
  url: v.string(),
  events: v.array(v.picklist(WEBHOOK_EVENT_TYPES)),
  enabled: v.boolean(),
  description: v.nullable(v.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

/** The creation's answer: the only place the signing secret is ever shown. */
export const webhookCreatedResource = v.object({ ...webhookResource.entries, secret: v.string() });

export const webhookDeliveryResource = v.object({
  id: v.number(),
  event_id: v.string(),
  type: v.picklist(WEBHOOK_EVENT_TYPES),
  status_code: v.nullable(v.number()),
  duration_ms: v.number(),
  error: v.nullable(v.string()),
  created_at: timestamp,
});

export const DELIVERY_PAGE_SIZE_DEFAULT = 50;
export const DELIVERY_PAGE_SIZE_MAX = 200;
export const DELIVERY_CURSOR_MAX = 512;

export const webhookDeliveryQuery = v.object({
  page_cursor: v.optional(v.pipe(v.string(), v.maxLength(DELIVERY_CURSOR_MAX)), ''),
  page_size: v.optional(queryInt('page_size', DELIVERY_PAGE_SIZE_MAX), String(DELIVERY_PAGE_SIZE_DEFAULT)),
});

export const webhookDeliveryPage = v.object({
  data: v.array(webhookDeliveryResource),
  next_cursor: v.pipe(v.nullable(v.string()), v.description('Send as page_cursor for the next page; null on the last page.')),
});

export const redeliveryResource = v.object({ delivery_id: v.number(), event_id: v.string(), queued: v.boolean() });

export type WebhookCreate = v.InferOutput<typeof webhookCreateBody>;
export type WebhookPatch = v.InferOutput<typeof webhookPatchBody>;
export type Webhook = v.InferOutput<typeof webhookResource>;
export type WebhookDelivery = v.InferOutput<typeof webhookDeliveryResource>;
export type WebhookDeliveryPage = v.InferOutput<typeof webhookDeliveryPage>;
