import { currentTimeMs, nowIso } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { claimAttempt, clearFailedStreak, countFailedEvent, readDeliveryState, recordAttempt, WEBHOOK_LOG_RETENTION_SECONDS } from '#lib/db/webhook.ts';
import { attemptOutcome, FAILED_EVENTS_TO_DISABLE, isSuccessStatus, signatureHeaders } from '#lib/domain/webhook.ts';
import { postWebhook } from '#lib/flows/webhook-post.ts';
import { deliveryQueue } from '#lib/queue/index.ts';
import type { DeliveryMessage, DeliveryQueue } from '#lib/queue/queue.ts';

/**
 * The webhook sender: one queue message, one attempt. It runs as the Lambda on the SQS queue
 * (functions/webhook-sender.ts) and as the local queue's consumer, never inside a request.
 *
 * Reads the webhook, the event and the task (one BatchGet); claims the attempt on the task (so a
 * message delivered twice sends once); signs the stored body with a fresh timestamp and POSTs it;
 * logs the attempt with the task's new state; then schedules the next attempt, or counts a
 * failed event against the webhook (the 20th in a row disables it). A message whose time has not
 * come (SQS delays at most 15 minutes) goes back on the queue for the rest of its wait.
 * An operator's redelivery (`attempt` 0) is one attempt outside the schedule: it is logged and
 * changes neither the task nor the count of failed events.
 */
export async function deliverWebhook(message: DeliveryMessage, queue: DeliveryQueue = deliveryQueue): Promise<void> {
  const nowMs = currentTimeMs();
  if (message.not_before !== undefined && message.not_before > nowMs) {
    await queue.send(message, message.not_before - nowMs);
    return;
  }
  const { store_id: storeId, webhook_id: webhookId, event_id: eventId, attempt } = message;
  const { webhook, event, task } = await readDeliveryState(storeId, webhookId, eventId);
  // Deleted since, or expired: nothing to send to, or nothing to send.
  if (!webhook || !event) return;
  const scheduled = attempt > 0;
  if (scheduled && (!webhook.enabled || !task || !(await claimAttempt(storeId, eventId, webhookId, attempt)))) return;

  const sentAt = nowIso();
  const result = await postWebhook(
    webhook.url,
    event.body,
    {
      'content-type': 'application/json',
      'user-agent': 'store-api-webhooks/1',
      'x-store-event': event.type,
      'x-store-event-id': event.id,
      ...signatureHeaders(webhook.secret, event.id, event.body, currentTimeMs()),
    },
    { timeoutMs: config.webhookTimeoutMs, checkAddress: !config.webhookLocalTargets },
  );
  const outcome = scheduled ? attemptOutcome(result.status_code !== null && isSuccessStatus(result.status_code), attempt, config.webhookRetryScale) : undefined;
  const taskStatus = outcome === undefined ? undefined : outcome.kind === 'delivered' ? 'DELIVERED' : outcome.kind === 'failed' ? 'FAILED' : 'PENDING';
  const expires = Math.floor(currentTimeMs() / 1000) + WEBHOOK_LOG_RETENTION_SECONDS;
  await recordAttempt(storeId, { webhook_id: webhookId, event_id: eventId, type: event.type, ...result, created_at: sentAt }, taskStatus, expires);

  if (outcome?.kind === 'delivered') await clearFailedStreak(storeId, webhookId);
  if (outcome?.kind === 'failed') await countFailedEvent(storeId, webhookId, FAILED_EVENTS_TO_DISABLE, nowIso());
  if (outcome?.kind === 'retry') await queue.send({ ...message, attempt: attempt + 1, not_before: currentTimeMs() + outcome.delayMs }, outcome.delayMs);
}
