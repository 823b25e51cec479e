import { createHash, createHmac } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { ENTITY } from '#lib/schemas/entity.ts';
import type { WebhookEventType } from '#lib/schemas/webhook.ts';

/*
 * The rules of webhooks (extensions section 12), pure: which table changes are events, when an
 * order counts as delivered, the retry schedule, the signature, and which URLs may be called.
 * Time and configuration are parameters; the router and sender flows do the I/O.
 */

/** Waits after each failed attempt: about 1 min, 5 min, 30 min, 2 h, 6 h, 12 h (20.6 h in all: "for a day"). */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 21600, 43200] as const;
export const ATTEMPTS_MAX = RETRY_DELAYS_SECONDS.length + 1;
/** A webhook whose last this many events all failed is disabled. */
export const FAILED_EVENTS_TO_DISABLE = 20;
/** A receiver answers within this long, or the attempt is a timeout. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type AttemptOutcome = { kind: 'delivered' } | { kind: 'retry'; delayMs: number } | { kind: 'failed' };

/**
 * What follows attempt number `attempt` (1-based). `scale` shrinks the schedule (the local stack's
 * tests run a day of retries in a second); 1 on AWS.
 */
export function attemptOutcome(succeeded: boolean, attempt: number, scale = 1): AttemptOutcome {
  if (succeeded) return { kind: 'delivered' };
  const delay = RETRY_DELAYS_SECONDS[attempt - 1];
  return delay === undefined ? { kind: 'failed' } : { kind: 'retry', delayMs: Math.round(delay * 1000 * scale) };
}

export const isSuccessStatus = (status: number) => status >= 200 && status < 300;

/** `X-Store-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signatureHeader(secret: string, rawBody: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/**
 * The Standard Webhooks key (standardwebhooks.com) of a webhook secret: the 32 random bytes the
 * secret's text after `whsec_` encodes. Secrets made since these headers exist are
 * `whsec_<standard base64>`, exactly the form the `standardwebhooks` libraries take; older ones
 * encoded the same bytes in base64url, which Node's base64 decoder also reads (their library form
 * is `standardWebhookSecret(secret)`). `X-Store-Signature` keeps keying with the secret's text.
 */
export const standardWebhookKey = (secret: string): Buffer => Buffer.from(secret.slice(secret.indexOf('_') + 1), 'base64');

/** The secret as the `standardwebhooks` libraries take it: `whsec_<standard base64 of the key>` (a new secret unchanged). */
export const standardWebhookSecret = (secret: string): string => `whsec_${standardWebhookKey(secret).toString('base64')}`;

/**
 * The signature headers of one attempt, with one timestamp: ours (`X-Store-Signature`) and the
 * Standard Webhooks ones (`webhook-id` the event id, the same on every retry, so a receiver drops
 * duplicates by it; `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<raw body>">`).
 */
export function signatureHeaders(secret: string, eventId: string, rawBody: string, nowMs: number): Record<string, string> {
  const t = Math.floor(nowMs / 1000);
  const standard = createHmac('sha256', standardWebhookKey(secret)).update(`${eventId}.${t}.${rawBody}`, 'utf8').digest('base64');
  return {
    'x-store-signature': signatureHeader(secret, rawBody, nowMs),
    'webhook-id': eventId,
    'webhook-timestamp': String(t),
    'webhook-signature': `v1,${standard}`,
  };
}

/** Event ids are derived, never drawn: the same stream record (a replayed batch) names the same event. */
export const eventIdOf = (origin: string) => `evt_${createHash('sha256').update(origin, 'utf8').digest('hex').slice(0, 32)}`;

/** The body every attempt of an event sends, byte for byte (retries and redeliveries re-sign it, never rebuild it). */
export function eventBody(event: { id: string; type: WebhookEventType; created_at: string; store_id: number; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, store_id: event.store_id, data: event.data });
}

// ---- which changes are events ----

export type Image = Record<string, unknown>;
export interface ItemChange {
  old?: Image;
  new?: Image;
}

/**
 * The stored entity whose changes each event comes from (`eventsOf` reads it from these items
 * only). The table stream hands the router these entities and no other (lib/routes/consumers.ts
 * derives its filter from this list), so an event whose entity were missing here would never fire
 * on AWS: test/unit/consumers.test.ts holds `eventsOf` to it, event by event.
 */
export const EVENT_SOURCE_ENTITY = {
  'order.created': ENTITY.ORDER,
  'order.approved': ENTITY.ORDER,
  'order.canceled': ENTITY.ORDER,
  'order.refunded': ENTITY.ORDER,
  'order.chargeback': ENTITY.ORDER,
  'order.delivered': ENTITY.COMMAND,
  'command.failed': ENTITY.COMMAND,
  'command.dead': ENTITY.COMMAND,
  'affiliate.withdrawal_requested': ENTITY.AFFILIATE_TRANSACTION,
  'chat.message_created': ENTITY.CHAT_MESSAGE,
  'payment.created': ENTITY.PAYMENT,
  'payment.failed': ENTITY.PAYMENT,
  'payment.expired': ENTITY.PAYMENT,
  'payment.attention': ENTITY.PAYMENT,
} as const satisfies Record<WebhookEventType, string>;

/** An operator's redelivery request (written by lib/db/webhook.ts): not an event, one queue message from the router. */
export const REDELIVERY_ENTITY = ENTITY.WEBHOOK_REDELIVERY;

/** `order.delivered` needs the order's other commands: the flow reads them and asks `isOrderDelivered`. */
export interface PlannedEvent {
  type: WebhookEventType;
  needsDeliveryCheck?: true;
}

const ORDER_STATUS_EVENTS: Partial<Record<string, WebhookEventType>> = {
  APPROVED: 'order.approved',
  CANCELED: 'order.canceled',
  REFUNDED: 'order.refunded',
  CHARGEBACK: 'order.chargeback',
};

/** Commands queued at approval are the order's delivery; REFUNDED/CHARGEBACK/EXPIRED-stage ones are not. Commands written before stages existed are APPROVED-stage. */
const isApprovedStage = (command: Image) => (command.stage ?? 'APPROVED') === 'APPROVED';

/**
 * The events one change of a table item stands for, whoever caused it (an operator's PATCH, a
 * server's ack, a refund). Only the item's own images are read: a change is an event when a
 * status moves (or a command's tries grow), never when the item is merely rewritten.
 */
export function eventsOf(change: ItemChange): PlannedEvent[] {
  const item = change.new;
  if (!item) return [];
  const old = change.old;
  switch (item.entity) {
    case ENTITY.ORDER: {
      if (!old) return [{ type: 'order.created' }];
      const type = old.status !== item.status ? ORDER_STATUS_EVENTS[String(item.status)] : undefined;
      return type ? [{ type }] : [];
    }
    case ENTITY.COMMAND: {
      if (!old) return [];
      const moved = old.status !== item.status;
      if (moved && item.status === 'DEAD') return [{ type: 'command.dead' }];
      // A failure either shows as the status FAILED or, when the failed command goes back to the queue, as one more try.
      const failedNow = (moved && item.status === 'FAILED') || Number(item.tries ?? 0) > Number(old.tries ?? 0);
      if (failedNow) return [{ type: 'command.failed' }];
      if (moved && item.status === 'DONE' && isApprovedStage(item)) return [{ type: 'order.delivered', needsDeliveryCheck: true }];
      return [];
    }
    case ENTITY.AFFILIATE_TRANSACTION:
      return !old && item.operation === 'WITHDRAW_PENDING' ? [{ type: 'affiliate.withdrawal_requested' }] : [];
    case ENTITY.CHAT_MESSAGE:
      return old ? [] : [{ type: 'chat.message_created' }];
    case ENTITY.PAYMENT: {
      // As lib/domain/payment.ts `settle` names them: the payment written, its status moving to FAILED or EXPIRED, a new flag for the operator.
      if (!old) return [{ type: 'payment.created' }];
      const moved = old.status !== item.status;
      const events: PlannedEvent[] = [];
      if (moved && item.status === 'FAILED') events.push({ type: 'payment.failed' });
      if (moved && item.status === 'EXPIRED') events.push({ type: 'payment.expired' });
      if (item.attention != null && item.attention !== old.attention) events.push({ type: 'payment.attention' });
      return events;
    }
    default:
      return [];
  }
}

/** Every APPROVED-stage command of the order is DONE (and there is at least one). */
export function isOrderDelivered(commands: readonly Image[]): boolean {
  const delivery = commands.filter(isApprovedStage);
  return delivery.length > 0 && delivery.every((command) => command.status === 'DONE');
}

/**
 * Where the event comes from, so that its id is stable: a stream record makes one event per type;
 * an order is delivered once, however many of its commands' changes notice it.
 */
export function eventOrigin(type: WebhookEventType, recordId: string, storeId: number, orderId: unknown): string {
  return type === 'order.delivered' ? `${storeId}:order:${String(orderId)}:delivered` : `${recordId}:${type}`;
}

/** When the event happened: the time the change wrote on the item. */
export function eventTime(item: Image, fallback: string): string {
  const value = item.updated_at ?? item.created_at ?? item.timestamp;
  return typeof value === 'string' ? value : fallback;
}

// ---- which URLs may be called ----

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * Why a webhook URL is refused, or undefined. https only; on the local stack (`localTargets`)
 * also http to localhost/127.0.0.1. Deployed, a host that names a private, loopback, link-local
 * or metadata address is refused here, and the sender checks the address it connects to at
 * each send (`isPublicAddress`), so DNS cannot point an accepted name inward later.
 */
export function webhookUrlProblem(text: string, options: { localTargets: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.username || url.password) return 'url must not carry credentials';
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'http:') {
    return options.localTargets && LOCAL_HOSTS.has(host) ? undefined : 'url must use https (http only for localhost on the local stack)';
  }
  if (url.protocol !== 'https:') return 'url must use https';
  if (options.localTargets) return undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) {
    return 'url must name a public host';
  }
  // The URL parser has already written decimal, hex and octal IPv4 forms (`2130706433`, `0x7f.1`) as dotted quads.
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal) && !isPublicAddress(literal)) return 'url must not name a private, loopback, link-local or metadata address';
  return undefined;
}

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 address an IPv6 one reaches, in the forms section 12 lists: mapped (`::ffff:a.b.c.d`),
 * SIIT (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and
 * compatible (`::a.b.c.d`: the first 96 bits zero). `refused` for a form whose IPv4 address we
 * do not extract (NAT64's local-use 64:ff9b:1::/48), undefined for an address that carries none.
 */
function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | 'refused' | undefined {
  const parts = address.parts;
  const fromParts = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return fromParts(parts[6]!, parts[7]!);
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? fromParts(parts[6]!, parts[7]!) : 'refused';
    case '6to4':
      return fromParts(parts[1]!, parts[2]!);
    default:
      return parts.slice(0, 6).every((part) => part === 0) ? fromParts(parts[6]!, parts[7]!) : undefined;
  }
}

/**
 * Whether a webhook may reach an address, as written in a URL or as connected to. An allow-list
 * over ipaddr.js's ranges: only `unicast` passes, so private, loopback, link-local, carrier-grade
 * NAT, multicast, reserved, benchmarking, Teredo and every other special range the library knows
 * is refused without a line of ours. An IPv6 address that carries an IPv4 one is judged by the
 * IPv4 address it reaches (`::` and `::1` carry 0.0.0.0 and 0.0.0.1: refused too). Anything that
 * is not an address is refused.
 */
export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const carried = carriedIpv4(address as ipaddr.IPv6);
  if (carried === 'refused') return false;
  return (carried ?? address).range() === 'unicast';
}
