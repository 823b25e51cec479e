import { currentTimeMs } from '#lib/clock.ts';
import { storePk } from '#lib/db/keys.ts';
import { update, type GuardedWrite } from '#lib/db/transact.ts';
import { tooManyRequests } from '#lib/errors.ts';

/**
 * Fixed-window rate counters (their writes retry through lib/db/transact.ts).
 *
 * | access pattern                      | key                                              | calls |
 * |-------------------------------------|--------------------------------------------------|-------|
 * | count one use in the current window | `STORE#<s> / RATE#<subject>#<window start epoch>` | 0: an Update inside the caller's TransactWrite |
 *
 * Each window has its own item, so a window never needs resetting and TTL lag cannot let an
 * old count leak into a new window. The counter is an `ADD` conditioned on
 * `attribute_not_exists(n) OR n < :limit`, placed in the same transaction as the write it
 * guards: a refused use writes nothing, and concurrent uses can never pass the limit.
 */
export interface RateWindow {
  /** The counted use, for the caller's transaction; over the limit it fails as a 429 with Retry-After. */
  write: GuardedWrite;
  /**
   * Seconds until the window ends (the Retry-After of a refusal), rounded up: a client that
   * waits exactly that long lands in the next window, not at the end of the full one.
   */
  retryAfterSeconds: number;
}

export function rateWindow(storeId: number, subject: string, limit: number, windowSeconds: number, now = currentTimeMs()): RateWindow {
  const nowSeconds = Math.floor(now / 1000);
  const windowStart = nowSeconds - (nowSeconds % windowSeconds);
  const windowEnd = windowStart + windowSeconds;
  const retryAfterSeconds = Math.max(1, Math.ceil(windowEnd - now / 1000));
  return {
    write: {
      item: update({
        Key: { pk: storePk(storeId), sk: `RATE#${subject}#${windowStart}` },
        UpdateExpression: 'ADD #n :one SET store_id = :store, expires_epoch = :expires',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':store': storeId, ':expires': windowEnd },
      }),
      onConditionFailed: () => tooManyRequests(retryAfterSeconds),
    },
    retryAfterSeconds,
  };
}
