import type { ServerKeys } from '#lib/crypto.ts';
import { cursorCodec, isId } from '#lib/db/cursor.ts';
import { DamagedItem, deleteOneCounted, fieldsOf, getMany, patchOne, putNewCounted, readItem, type StoredItem } from '#lib/db/entity.ts';
import { countedPage, storeList } from '#lib/db/list-count.ts';
import { entitySk, padId, storePk } from '#lib/db/keys.ts';
import { queryAll, queryPage } from '#lib/db/query.ts';
import { nextId } from '#lib/db/sequence.ts';
import { put, putNewItem, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import {
  WEBHOOK_EVENT_TYPES,
  type Webhook,
  type WebhookCreate,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookEventType,
  type WebhookPatch,
} from '#lib/schemas/webhook.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Webhooks, their events, delivery tasks and delivery log. Calls exclude the credential lookup.
 *
 * | access pattern                         | key                                                                    | calls |
 * |----------------------------------------|------------------------------------------------------------------------|-------|
 * | create                                 | sequence ADD + Put `STORE#<s> / WEBHOOK#<id>`                           | 2     |
 * | get, update, delete                    | `STORE#<s> / WEBHOOK#<id>` (conditional on existence)                   | 1     |
 * | list; a store's subscribers (router)   | Query `STORE#<s>`, sk begins_with `WEBHOOK#`                            | 1 per MB |
 * | event (the body every attempt sends)   | Put if absent `STORE#<s> / WEBHOOK_EVENT#<event id>` (30 days TTL)      | 1     |
 * | delivery task (one event, one webhook) | Put if absent `STORE#<s> / WEBHOOK_TASK#<event id>#<webhook>`; attempts claimed by a conditional UpdateItem | 1 |
 * | sender's read                          | BatchGet webhook + event + task                                         | 1     |
 * | an attempt                             | sequence ADD + TransactWrite (Put `WEBHOOK_DELIVERY#<webhook>#<id>` + task update) | 2 |
 * | delivery log, newest first (cursor)    | GetItem webhook ‖ Query `WEBHOOK_DELIVERY#<webhook>#` descending, Limit page_size + 1 | 2 |
 * | redeliver                              | BatchGet (webhook, attempt) + Put `WEBHOOK_REDELIVERY#<id>#<request>`   | 2     |
 *
 * Event and task keys are derived from the event id (itself derived from the stream record), so
 * a replayed stream batch writes nothing twice. A task counts its attempts: the sender claims
 * attempt n with `attempts = n - 1`, so a message SQS hands out twice sends once. The log, the
 * events and the tasks expire after 30 days. The signing secret is stored as is (it must be read
 * to sign) and leaves this module only through `getSigningWebhook` and the creation's answer.
 */
const WEBHOOK = ENTITY.WEBHOOK;
const DELIVERY = ENTITY.WEBHOOK_DELIVERY;
/** How long events, tasks and the delivery log are kept. */
export const WEBHOOK_LOG_RETENTION_SECONDS = 30 * 24 * 60 * 60;

export const webhookKey = (storeId: number, webhookId: number) => ({ pk: storePk(storeId), sk: entitySk(WEBHOOK, webhookId) });
const eventKey = (storeId: number, eventId: string) => ({ pk: storePk(storeId), sk: `${ENTITY.WEBHOOK_EVENT}#${eventId}` });
const taskKey = (storeId: number, eventId: string, webhookId: number) => ({ pk: storePk(storeId), sk: `${ENTITY.WEBHOOK_TASK}#${eventId}#${padId(webhookId)}` });
const deliveryPrefix = (webhookId: number) => `${DELIVERY}#${padId(webhookId)}#`;
const deliveryKey = (storeId: number, webhookId: number, deliveryId: number) => ({ pk: storePk(storeId), sk: `${deliveryPrefix(webhookId)}${padId(deliveryId)}` });

export interface WebhookItem extends Webhook {
  store_id: number;
  secret: string;
  /** Events that failed for good since the last success; FAILED_EVENTS_TO_DISABLE disables the webhook. */
  failed_streak: number;
}

export interface EventItem {
  id: string;
  store_id: number;
  type: WebhookEventType;
  /** The exact text every attempt sends. */
  body: string;
}

export interface TaskItem {
  event_id: string;
  webhook_id: number;
  attempts: number;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
}

const TASK_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const satisfies readonly TaskItem['status'][];

const isEventType = (value: string): value is WebhookEventType => WEBHOOK_EVENT_TYPES.some((type) => type === value);

function eventTypes(item: StoredItem, events: string[]): WebhookEventType[] {
  if (!events.every(isEventType)) throw new DamagedItem(`${WEBHOOK} item ${String(item.pk)} / ${String(item.sk)}: events holds an unknown event type`);
  return events;
}

export function webhookFromItem(item: StoredItem): WebhookItem {
  const field = fieldsOf(item, WEBHOOK);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    url: field.string('url'),
    events: eventTypes(item, field.strings('events')),
    enabled: field.boolean('enabled'),
    description: field.stringOrNull('description'),
    secret: field.string('secret'),
    failed_streak: field.number('failed_streak'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

export function eventFromItem(item: StoredItem): EventItem {
  const field = fieldsOf(item, ENTITY.WEBHOOK_EVENT);
  return { id: field.string('id'), store_id: field.number('store_id'), type: field.oneOf('type', WEBHOOK_EVENT_TYPES), body: field.string('body') };
}

export function taskFromItem(item: StoredItem): TaskItem {
  const field = fieldsOf(item, ENTITY.WEBHOOK_TASK);
  return { event_id: field.string('event_id'), webhook_id: field.number('webhook_id'), attempts: field.number('attempts'), status: field.oneOf('status', TASK_STATUSES) };
}

/** The API shape: never the secret. */
export function webhookResponse(item: WebhookItem): Webhook {
  return { id: item.id, url: item.url, events: item.events, enabled: item.enabled, description: item.description, created_at: item.created_at, updated_at: item.updated_at };
}

export async function createWebhook(storeId: number, input: WebhookCreate, secret: string, now: string, recordOnKey: (webhookId: number) => GuardedWrite[]): Promise<WebhookItem> {
  const id = await nextId(storeId, WEBHOOK);
  const item: WebhookItem = {
    id,
    store_id: storeId,
    url: input.url,
    events: input.events,
    enabled: input.enabled,
    description: input.description,
    secret,
    failed_streak: 0,
    created_at: now,
    updated_at: now,
  };
  await putNewCounted({ ...webhookKey(storeId, id), entity: WEBHOOK, ...item }, storeId, WEBHOOK, recordOnKey(id));
  return item;
}

/** The webhook as stored, its secret included (consistent; 404 when missing). */
export async function getWebhookItem(storeId: number, webhookId: number): Promise<WebhookItem> {
  const item = await readItem(webhookKey(storeId, webhookId), true);
  if (!item) throw notFound('Webhook');
  return webhookFromItem(item);
}

export async function getWebhook(storeId: number, webhookId: number): Promise<Webhook> {
  return webhookResponse(await getWebhookItem(storeId, webhookId));
}

/** Every webhook of the store, secrets included (the router's subscribers); id order. */
export async function listWebhookItems(storeId: number): Promise<WebhookItem[]> {
  return (await queryAll({ pk: storePk(storeId), skPrefix: `${WEBHOOK}#` })).map(webhookFromItem);
}

/** A page of the store's webhooks (as the API shows them, no secret), in id order, and their total. */
export const webhookPage = (storeId: number, page: number, limit: number) =>
  countedPage(storeId, storeList(storeId, WEBHOOK), page, limit, (item) => webhookResponse(webhookFromItem(item)));

/** Re-enabling a webhook starts its count of failed events again. */
export async function updateWebhook(storeId: number, webhookId: number, patch: WebhookPatch): Promise<Webhook> {
  const extraSets = patch.enabled === true ? { failed_streak: 0 } : undefined;
  return patchOne(webhookKey(storeId, webhookId), 'Webhook', patch, ['url', 'events', 'description', 'enabled'], (stored) => webhookResponse(webhookFromItem(stored)), {
    extraSets,
  });
}

/** Its events, tasks and log expire on their own; a task whose webhook is gone is dropped by the sender. */
export const deleteWebhook = (storeId: number, webhookId: number) => deleteOneCounted(webhookKey(storeId, webhookId), 'Webhook', storeId, WEBHOOK);

/** False when the item is there already (a replayed stream batch). */
const putIfAbsent = (item: StoredItem): Promise<boolean> => writeIf(putNewItem(item));

export const putEventIfAbsent = (event: EventItem, expiresEpoch: number) =>
  putIfAbsent({ ...eventKey(event.store_id, event.id), entity: ENTITY.WEBHOOK_EVENT, ...event, expires_epoch: expiresEpoch });

export const putTaskIfAbsent = (storeId: number, eventId: string, webhookId: number, expiresEpoch: number) =>
  putIfAbsent({
    ...taskKey(storeId, eventId, webhookId),
    entity: ENTITY.WEBHOOK_TASK,
    store_id: storeId,
    event_id: eventId,
    webhook_id: webhookId,
    attempts: 0,
    status: 'PENDING',
    expires_epoch: expiresEpoch,
  } satisfies StoredItem & TaskItem);

/** What the sender needs for one attempt: the webhook (with its secret), the event, the task. One BatchGet. */
export async function readDeliveryState(storeId: number, webhookId: number, eventId: string) {
  const [webhook, event, task] = await getMany([webhookKey(storeId, webhookId), eventKey(storeId, eventId), taskKey(storeId, eventId, webhookId)]);
  return {
    webhook: webhook && webhookFromItem(webhook),
    event: event && eventFromItem(event),
    task: task && taskFromItem(task),
  };
}

/** Takes attempt `attempt` of a pending task; false when another copy of the message took it already. */
export function claimAttempt(storeId: number, eventId: string, webhookId: number, attempt: number): Promise<boolean> {
  return writeIf(
    update({
      Key: taskKey(storeId, eventId, webhookId),
      UpdateExpression: 'SET attempts = :attempt',
      ConditionExpression: 'attempts = :previous AND #status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':attempt': attempt, ':previous': attempt - 1, ':pending': 'PENDING' },
    }),
  );
}

export interface AttemptRecord extends Omit<WebhookDelivery, 'id'> {
  webhook_id: number;
}

/** Logs an attempt and, for a scheduled one, settles its task (DELIVERED, FAILED, or still PENDING). Answers the attempt's id. */
export async function recordAttempt(storeId: number, attempt: AttemptRecord, taskStatus: TaskItem['status'] | undefined, expiresEpoch: number): Promise<number> {
  const id = await nextId(storeId, DELIVERY);
  const delivery: WebhookDelivery & { webhook_id: number; store_id: number } = {
    id,
    event_id: attempt.event_id,
    type: attempt.type,
    status_code: attempt.status_code,
    duration_ms: attempt.duration_ms,
    error: attempt.error,
    created_at: attempt.created_at,
    webhook_id: attempt.webhook_id,
    store_id: storeId,
  };
  await writeGuarded([
    { item: put({ Item: { ...deliveryKey(storeId, attempt.webhook_id, id), entity: DELIVERY, ...delivery, expires_epoch: expiresEpoch } }) },
    ...(taskStatus === undefined
      ? []
      : [
          {
            item: update({
              Key: taskKey(storeId, attempt.event_id, attempt.webhook_id),
              UpdateExpression: 'SET #status = :status',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':status': taskStatus },
            }),
            onConditionFailed: () => new Error(`webhook task of ${attempt.event_id} is missing`),
          },
        ]),
  ]);
  return id;
}

/** A success ends the webhook's run of failed events. */
export async function clearFailedStreak(storeId: number, webhookId: number): Promise<void> {
  // No run to end (or the webhook is gone): nothing to write.
  await writeIf(
    update({
      Key: webhookKey(storeId, webhookId),
      UpdateExpression: 'SET failed_streak = :zero',
      ConditionExpression: 'attribute_exists(pk) AND failed_streak > :zero',
      ExpressionAttributeValues: { ':zero': 0 },
    }),
  );
}

/**
 * One more event failed for good: counts it and disables the webhook when the count reaches
 * `disableAt`, in one UpdateItem (the condition makes the count and the switch one step). Answers
 * whether this call disabled it.
 */
export async function countFailedEvent(storeId: number, webhookId: number, disableAt: number, now: string): Promise<boolean> {
  const count = (disable: boolean) =>
    writeIf(
      update({
        Key: webhookKey(storeId, webhookId),
        UpdateExpression: disable ? 'ADD failed_streak :one SET enabled = :false, updated_at = :now' : 'ADD failed_streak :one',
        ConditionExpression: disable ? 'attribute_exists(pk) AND failed_streak >= :last' : 'attribute_exists(pk)',
        ExpressionAttributeValues: disable ? { ':one': 1, ':false': false, ':now': now, ':last': disableAt - 1 } : { ':one': 1 },
      }),
    );
  if (await count(true)) return true;
  // Below the threshold: count only (a webhook deleted meanwhile: nothing to count).
  await count(false);
  return false;
}

/** The delivery log's cursor: the shared codec (lib/db/cursor.ts), bound to the store and the webhook, positioned at the last attempt's id. */
const deliveryCursor = cursorCodec('webhook-delivery', (payload) => (isId(payload.i) ? { i: payload.i } : undefined));

export function deliveryFromItem(item: StoredItem): WebhookDelivery {
  const field = fieldsOf(item, DELIVERY);
  return {
    id: field.number('id'),
    event_id: field.string('event_id'),
    type: field.oneOf('type', WEBHOOK_EVENT_TYPES),
    status_code: field.numberOrNull('status_code'),
    duration_ms: field.number('duration_ms'),
    error: field.stringOrNull('error'),
    created_at: field.string('created_at'),
  };
}

/** A page of the delivery log, newest first; 404 for a webhook that is not the store's. */
export async function listDeliveries(storeId: number, webhookId: number, cursor: string, pageSize: number, keys: ServerKeys): Promise<WebhookDeliveryPage> {
  const after = cursor === '' ? undefined : deliveryCursor.decode(storeId, [webhookId], cursor, keys).i;
  const [webhook, page] = await Promise.all([
    readItem(webhookKey(storeId, webhookId)),
    queryPage(
      {
        KeyConditionExpression: after === undefined ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk AND sk BETWEEN :prefix AND :before',
        ExpressionAttributeValues: {
          ':pk': storePk(storeId),
          ':prefix': deliveryPrefix(webhookId),
          ...(after === undefined ? {} : { ':before': `${deliveryPrefix(webhookId)}${padId(after - 1)}` }),
        },
        ScanIndexForward: false,
      },
      undefined,
      pageSize + 1,
    ),
  ]);
  if (!webhook) throw notFound('Webhook');
  const items = (page.Items ?? []).map(deliveryFromItem);
  const data = items.slice(0, pageSize);
  const last = data[data.length - 1];
  return { data, next_cursor: items.length > pageSize && last ? deliveryCursor.encode(storeId, [webhookId], { i: last.id }, keys) : null };
}

/** The webhook and one of its attempts, or 404 (another store's, another webhook's, or gone). */
export async function getDelivery(storeId: number, webhookId: number, deliveryId: number): Promise<WebhookDelivery> {
  const [webhook, delivery] = await getMany([webhookKey(storeId, webhookId), deliveryKey(storeId, webhookId, deliveryId)]);
  if (!webhook) throw notFound('Webhook');
  if (!delivery) throw notFound('Delivery');
  return deliveryFromItem(delivery);
}

/**
 * Asks for the event to be sent again. The request is an item the stream carries to the router
 * (lib/flows/webhook-router.ts), which queues it: the API function needs no queue permission,
 * and the stream stays the one way into the queue.
 */
export async function putRedeliveryRequest(
  storeId: number,
  webhookId: number,
  delivery: WebhookDelivery,
  requestId: string,
  expiresEpoch: number,
  alsoWrite: readonly GuardedWrite[] = [],
): Promise<void> {
  await writeGuarded([
    {
      item: put({
        Item: {
          pk: storePk(storeId),
          sk: `${ENTITY.WEBHOOK_REDELIVERY}#${padId(delivery.id)}#${requestId}`,
          entity: ENTITY.WEBHOOK_REDELIVERY,
          store_id: storeId,
          webhook_id: webhookId,
          event_id: delivery.event_id,
          expires_epoch: expiresEpoch,
        },
      }),
    },
    ...alsoWrite,
  ]);
}
