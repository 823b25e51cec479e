import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { passesEntityFilter } from '#infra/local/webhooks.ts';
import { EVENT_SOURCE_ENTITY, eventsOf, REDELIVERY_ENTITY, type ItemChange } from '#lib/domain/webhook.ts';
import { consumers, webhookStreamEntities } from '#lib/routes/consumers.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { WebhookEventType } from '#lib/schemas/webhook.ts';

/**
 * The table stream hands the webhook router only the entities of its filter (lib/routes/consumers.ts,
 * derived from EVENT_SOURCE_ENTITY): an event whose item were filtered out would pass every
 * local test of the rules and never fire on AWS. One change per event type (a new type without
 * one fails to compile), run through the rules themselves.
 */
const order = { entity: 'ORDER', store_id: 1, id: 7, status: 'PENDING' };
const command = { entity: 'COMMAND', store_id: 1, order_id: 7, status: 'PENDING', tries: 0 };
const payment = { entity: ENTITY.PAYMENT, store_id: 1, order_id: 7, id: 'pay_x', status: 'CREATED', attention: null };
const CHANGE_OF: Record<WebhookEventType, ItemChange> = {
  'order.created': { new: order },
  'order.approved': { old: order, new: { ...order, status: 'APPROVED' } },
  'order.canceled': { old: order, new: { ...order, status: 'CANCELED' } },
  'order.refunded': { old: { ...order, status: 'APPROVED' }, new: { ...order, status: 'REFUNDED' } },
  'order.chargeback': { old: { ...order, status: 'APPROVED' }, new: { ...order, status: 'CHARGEBACK' } },
  'order.delivered': { old: command, new: { ...command, status: 'DONE' } },
  'command.failed': { old: command, new: { ...command, status: 'FAILED', tries: 1 } },
  'command.dead': { old: { ...command, tries: 4 }, new: { ...command, status: 'DEAD', tries: 5 } },
  'affiliate.withdrawal_requested': { new: { entity: ENTITY.AFFILIATE_TRANSACTION, store_id: 1, operation: 'WITHDRAW_PENDING' } },
  'chat.message_created': { new: { entity: 'CHAT_MESSAGE', store_id: 1 } },
  'payment.created': { old: payment, new: { ...payment, status: 'PENDING', provider_ref: 'tst_x' } },
  'payment.failed': { old: payment, new: { ...payment, status: 'FAILED' } },
  'payment.expired': { old: { ...payment, status: 'PENDING' }, new: { ...payment, status: 'EXPIRED' } },
  'payment.attention': { old: { ...payment, status: 'PAID' }, new: { ...payment, status: 'PAID', attention: 'DUPLICATE' } },
};

/** Every event the rules draw from a change whose entity the filter would not hand over, or whose entity is not the one EVENT_SOURCE_ENTITY declares. */
function eventsTheFilterLoses(changes: Record<string, ItemChange>, filter: readonly string[], declared: Record<string, string> = EVENT_SOURCE_ENTITY): string[] {
  return Object.entries(changes).flatMap(([type, change]) => {
    const entity = String(change.new?.entity);
    const drawn = eventsOf(change).map((event) => event.type);
    if (!drawn.includes(type as WebhookEventType)) return [`${type}: its sample change is not this event`];
    if (declared[type] !== entity) return [`${type}: declared on ${declared[type]}, drawn from ${entity}`];
    return filter.includes(entity) ? [] : [`${type}: ${entity} is not in the stream filter`];
  });
}

const routerFilter = () => consumers['webhook-router'].source.entities;

describe("the webhook router's stream filter", () => {
  it('hands the router the entity of every event type, and the redelivery requests', () => {
    expect(eventsTheFilterLoses(CHANGE_OF, routerFilter())).toEqual([]);
    expect(routerFilter()).toContain(REDELIVERY_ENTITY);
    expect(routerFilter()).toBe(webhookStreamEntities);
  });

  // The check must be able to fail: a filter without COMMAND loses three events; a rule moved to another entity is caught too.
  it('finds the events a filter without their entity would lose', () => {
    expect(
      eventsTheFilterLoses(
        CHANGE_OF,
        routerFilter().filter((entity) => entity !== 'COMMAND'),
      ),
    ).toEqual(['order.delivered: COMMAND is not in the stream filter', 'command.failed: COMMAND is not in the stream filter', 'command.dead: COMMAND is not in the stream filter']);
  });

  it('finds an event drawn from an entity other than the one declared for it, and a sample that is not its event', () => {
    expect(eventsTheFilterLoses(CHANGE_OF, routerFilter(), { ...EVENT_SOURCE_ENTITY, 'chat.message_created': 'CHAT' })).toEqual([
      'chat.message_created: declared on CHAT, drawn from CHAT_MESSAGE',
    ]);
    const stale = { ...CHANGE_OF, 'chat.message_created': { old: { entity: 'CHAT_MESSAGE' }, new: { entity: 'CHAT_MESSAGE' } } };
    expect(eventsTheFilterLoses(stale, routerFilter())).toEqual(['chat.message_created: its sample change is not this event']);
  });

  it('is applied on the local stack as Lambda applies it: a new image whose string entity is listed', () => {
    const record = (image: _Record['dynamodb']) => ({ eventName: 'MODIFY', dynamodb: image }) as _Record;
    expect(passesEntityFilter(record({ NewImage: { entity: { S: 'ORDER' } } }), ['ORDER'])).toBe(true);
    expect(passesEntityFilter(record({ NewImage: { entity: { S: 'TAG' } } }), ['ORDER'])).toBe(false);
    // A deletion has no new image: the filter on NewImage drops it.
    expect(passesEntityFilter(record({ OldImage: { entity: { S: 'ORDER' } } }), ['ORDER'])).toBe(false);
    expect(passesEntityFilter(record({ NewImage: { entity: { N: '1' } } }), ['1'])).toBe(false);
  });
});
