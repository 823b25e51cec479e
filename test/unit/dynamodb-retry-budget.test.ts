import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * The retry budget lib/db/client.ts writes down (issue 28), read from the client it builds: 3
 * attempts, and the SDK's full-jitter backoff as this pinned release sets it for DynamoDB (from
 * 25 ms after a 500 or a dropped connection, from 1 s after a throttle). Random is held at its
 * top so each wait is the longest the strategy can pick. An SDK upgrade that changes these
 * numbers fails here, and the budget in client.ts must be measured again.
 */
process.env.TABLE_NAME ??= 'unit-test-table';
const { db } = await import('#lib/db/client.ts');

interface RetryToken {
  $retryLog?: { acquisitionDelay?: number };
}
interface RetryStrategy {
  acquireInitialRetryToken(scope: string): Promise<RetryToken>;
  refreshRetryTokenForRetry(token: RetryToken, error: { errorType: string }): Promise<RetryToken>;
}

/** The waits before the 2nd and 3rd attempts after the given errors, and whether a 4th would be made. */
async function waits(errorTypes: string[]): Promise<{ waits: number[]; fourthAttempt: boolean }> {
  vi.useFakeTimers();
  vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
  const strategy = (await (db.config.retryStrategy as unknown as () => Promise<RetryStrategy>)()) as RetryStrategy;
  let token = await strategy.acquireInitialRetryToken('dynamodb');
  const found: number[] = [];
  for (const errorType of errorTypes.slice(0, 2)) {
    const next = strategy.refreshRetryTokenForRetry(token, { errorType });
    await vi.runAllTimersAsync();
    token = await next;
    found.push(token.$retryLog?.acquisitionDelay ?? 0);
  }
  const fourth = strategy.refreshRetryTokenForRetry(token, { errorType: errorTypes[2] ?? 'TRANSIENT' }).then(
    () => true,
    () => false,
  );
  await vi.runAllTimersAsync();
  return { waits: found, fourthAttempt: await fourth };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('DynamoDB client retries (lib/db/client.ts)', () => {
  it('makes 3 attempts per call', async () => {
    expect(await db.config.maxAttempts()).toBe(3);
    expect((await waits(['TRANSIENT', 'TRANSIENT', 'TRANSIENT'])).fourthAttempt).toBe(false);
  });

  it('after a 500 or a dropped connection waits at most 25 ms, then 50 ms', async () => {
    expect((await waits(['TRANSIENT', 'TRANSIENT'])).waits).toEqual([24, 49]);
  });

  it('after a throttle waits at most 1 s, then 2 s', async () => {
    expect((await waits(['THROTTLING', 'THROTTLING'])).waits).toEqual([999, 1999]);
  });
});
