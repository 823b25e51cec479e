import { nowIso, currentTimeMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { newWebhookSecret } from '#lib/crypto.ts';
import { createWebhook, getDelivery, getWebhookItem, putRedeliveryRequest, webhookResponse, updateWebhook, type WebhookItem } from '#lib/db/webhook.ts';
import { webhookUrlProblem } from '#lib/domain/webhook.ts';
import { unprocessable } from '#lib/errors.ts';
import { resolvesToPublic } from '#lib/flows/webhook-post.ts';
import type { Webhook, WebhookCreate, WebhookDelivery, WebhookPatch } from '#lib/schemas/webhook.ts';
import { createOnce } from '#lib/db/idempotency.ts';

/*
 * The operator's webhook use cases. Calls exclude the credential lookup.
 *
 * | use case   | calls                                                       |
 * |------------|-------------------------------------------------------------|
 * | create     | sequence ADD + Put: 2                                       |
 * | update     | UpdateItem: 1                                               |
 * | redeliver  | BatchGet (webhook, attempt) + Put of the request: 2         |
 *
 * The signing secret is stored as is, not hashed: the sender must read it to sign every attempt
 * (a hash cannot sign). The table is encrypted at rest, only the sender's role reads webhooks
 * outside the API, and the secret appears in no answer but the creation's and in no log line.
 */

/** Refused with 422 on `url`; deployed, the host must also resolve to public addresses only (checked again at each send). */
async function assertDeliverableUrl(url: string): Promise<void> {
  const problem = webhookUrlProblem(url, { localTargets: config.webhookLocalTargets });
  if (problem) throw unprocessable(problem, 'url', 'WEBHOOK_URL_REFUSED');
  // An IPv6 literal's hostname keeps its brackets, which no resolver takes; without them the lookup answers the address itself.
  if (!config.webhookLocalTargets && !(await resolvesToPublic(new URL(url).hostname.replace(/^\[|\]$/g, '')))) {
    throw unprocessable('url must name a host that resolves to public addresses', 'url', 'WEBHOOK_URL_REFUSED');
  }
}

/**
 * A new webhook and its signing secret, shown this once. The retry of a creation whose answer
 * was lost (the same Idempotency-Key) answers the webhook it created, with that secret (stored
 * as is: lib/db/webhook.ts), and creates no second one.
 */
export async function createStoreWebhook(storeId: number, input: WebhookCreate): Promise<Webhook & { secret: string }> {
  const answer = (item: WebhookItem) => ({ ...webhookResponse(item), secret: item.secret });
  return createOnce(
    async (webhookId: number) => answer(await getWebhookItem(storeId, webhookId)),
    async (recordOnKey) => {
      await assertDeliverableUrl(input.url);
      return answer(await createWebhook(storeId, input, newWebhookSecret(), nowIso(), recordOnKey));
    },
  );
}

export async function updateStoreWebhook(storeId: number, webhookId: number, patch: WebhookPatch): Promise<Webhook> {
  if (patch.url !== undefined) await assertDeliverableUrl(patch.url);
  return updateWebhook(storeId, webhookId, patch);
}

/**
 * The same event, sent again soon (one attempt outside the schedule), through the stream and the
 * queue. The retry of a request whose answer was lost (the same Idempotency-Key) answers the
 * redelivery it queued, and queues none more.
 */
export async function redeliver(storeId: number, webhookId: number, deliveryId: number, requestId: string) {
  const answer = (delivery: WebhookDelivery) => ({ delivery_id: delivery.id, event_id: delivery.event_id, queued: true });
  return createOnce(
    async (_queuedBy: string) => answer(await getDelivery(storeId, webhookId, deliveryId)),
    async (recordOnKey) => {
      const delivery = await getDelivery(storeId, webhookId, deliveryId);
      // The request only has to live until the router has read it from the stream.
      await putRedeliveryRequest(storeId, webhookId, delivery, requestId, Math.floor(currentTimeMs() / 1000) + 24 * 60 * 60, recordOnKey(requestId));
      return answer(delivery);
    },
  );
}
