import { beforeEach, describe, expect, it, vi } from 'vitest';

const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));

const { rateWindow } = await import('#lib/db/rate-limit.ts');
const { retrying, writeGuarded } = await import('#lib/db/transact.ts');

/** A transaction as the db modules write one: guarded writes, retried on collisions. */
const transactWrite = (writes: Parameters<typeof writeGuarded>[0]) => retrying(() => writeGuarded(writes));

const cancelled = (...codes: string[]) => Object.assign(new Error('cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })) });

beforeEach(() => {
  send.mockReset();
});

describe('rateWindow', () => {
  it('keys the counter by the window start and answers the seconds left in it', () => {
    const now = Date.parse('2026-05-01T12:00:59.100Z');
    const window = rateWindow(3, 'HANDOFF#7', 20, 60, now);
    const start = Date.parse('2026-05-01T12:00:00.000Z') / 1000;
    expect(window.write.item.Update).toMatchObject({
      Key: { pk: 'STORE#3', sk: `RATE#HANDOFF#7#${start}` },
      UpdateExpression: 'ADD #n :one SET store_id = :store, expires_epoch = :expires',
      ExpressionAttributeValues: { ':one': 1, ':limit': 20, ':store': 3, ':expires': start + 60 },
    });
    expect(window.retryAfterSeconds).toBe(1);
    expect(rateWindow(3, 'x', 20, 60, Date.parse('2026-05-01T12:00:00.000Z')).retryAfterSeconds).toBe(60);
    // 29.75 s left: waiting 29 s would still be refused.
    expect(rateWindow(3, 'x', 20, 60, Date.parse('2026-05-01T12:00:30.250Z')).retryAfterSeconds).toBe(30);
  });

  it('starts a new counter in the next window', () => {
    const a = rateWindow(3, 'x', 20, 60, Date.parse('2026-05-01T12:00:59.999Z'));
    const b = rateWindow(3, 'x', 20, 60, Date.parse('2026-05-01T12:01:00.000Z'));
    expect(a.write.item.Update!.Key).not.toEqual(b.write.item.Update!.Key);
  });
});

describe('transactWrite', () => {
  it('retries a transaction cancelled by a conflict with another', async () => {
    send.mockRejectedValueOnce(cancelled('TransactionConflict', 'None')).mockRejectedValueOnce(cancelled('None', 'TransactionConflict')).mockResolvedValueOnce({});
    await transactWrite([]);
    expect(send).toHaveBeenCalledTimes(3);
  });

  it('throws a failed condition at once, as the error its own write names', async () => {
    send.mockRejectedValueOnce(cancelled('ConditionalCheckFailed', 'TransactionConflict'));
    const named = new Error('the first write failed');
    const writes = [
      { item: { ConditionCheck: { TableName: 'unit-table', Key: { pk: 'a', sk: 'a' }, ConditionExpression: 'attribute_exists(pk)' } }, onConditionFailed: () => named },
      {
        item: { ConditionCheck: { TableName: 'unit-table', Key: { pk: 'b', sk: 'b' }, ConditionExpression: 'attribute_exists(pk)' } },
        onConditionFailed: () => new Error('not this one'),
      },
    ];
    await expect(transactWrite(writes)).rejects.toBe(named);
    expect(send).toHaveBeenCalledTimes(1);
  });

  it('gives up with 503 and Retry-After after 8 conflicts', async () => {
    send.mockImplementation(async () => {
      throw cancelled('TransactionConflict');
    });
    // The backoff waits are real timers; run them instantly so the test does not depend on load.
    vi.useFakeTimers();
    try {
      const outcome = expect(transactWrite([])).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
      await vi.runAllTimersAsync();
      await outcome;
    } finally {
      vi.useRealTimers();
    }
    expect(send).toHaveBeenCalledTimes(8);
  });
});
