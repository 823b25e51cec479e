import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from '#lib/db/client.ts';
import { failedConditions, isTransactionConflict } from '#lib/db/errors.ts';
import { HttpError, unavailable } from '#lib/errors.ts';

/**
 * Transactions and the retry they need. DynamoDB cancels one of two transactions that meet on
 * the same item (TransactionConflict) and the SDK does not retry that; a read-then-write may
 * also find the item changed (StaleRead). Both leave nothing written, so trying again is safe.
 * Hot items (counters, balances, sentinels) meet often under concurrency; without this they
 * would fail instead of queueing. Persistent contention ends in 503 with Retry-After: the
 * request was fine and may simply be sent again.
 */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An item as DynamoDB returns it on a failed condition: not unmarshalled. */
export type RawItem = Record<string, { N?: string; S?: string; NULL?: boolean; BOOL?: boolean } | undefined>;

export const rawNumber = (item: RawItem | undefined, name: string) => Number(item?.[name]?.N ?? 0);

/** Thrown when an item changed between our read and our conditional write: read again. */
export class StaleRead extends Error {
  constructor() {
    super('stale read');
    this.name = 'StaleRead';
  }
}

const MAX_ATTEMPTS = 8;

function isRetryable(error: unknown): boolean {
  if (error instanceof StaleRead) return true;
  // A cancellation that also failed a condition is an answer, not a collision.
  if (failedConditions(error).length > 0) return false;
  return isTransactionConflict(error) || (error instanceof Error && error.name === 'TransactionConflictException');
}

export async function retrying<T>(attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetryable(error)) throw error;
      if (round >= MAX_ATTEMPTS) {
        throw unavailable('This item is being changed by other requests; try again');
      }
      // Full jitter, so the retries of a burst spread out instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** round));
    }
  }
}

/** One write of a TransactWrite and the error its failed condition stands for. */
export interface GuardedWrite {
  item: TransactItem;
  /**
   * `current` is the stored item when the write asked for it with ReturnValuesOnConditionCheckFailure.
   * Omitted only for a write without a condition, which cannot fail one.
   */
  onConditionFailed?: (current: RawItem | undefined) => Error;
}

/**
 * The failure of a write whose item is already there because a concurrent request did the same
 * work first: an answer for the caller to catch (read the winner, or do nothing), not an error.
 */
export class WrittenConcurrently extends Error {
  constructor() {
    super('written concurrently');
    this.name = 'WrittenConcurrently';
  }
}

/**
 * One TransactWrite (not retried: callers wrap their read-and-write in `retrying`). When
 * conditions fail, each failed write names its error: a 422 for a reference (all of them
 * reported together), otherwise the first other error (404, 409, StaleRead).
 */
export async function transactGuarded(writes: readonly GuardedWrite[]): Promise<void> {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: writes.map((write) => write.item) }));
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.length === 0) throw error;
    const reasons = (error as { CancellationReasons?: { Item?: RawItem }[] }).CancellationReasons ?? [];
    const errors = failed.map((index) => writes[index]!.onConditionFailed?.(reasons[index]?.Item) ?? new Error('a write without a condition failed one'));
    const other = errors.find((e) => !(e instanceof HttpError) || e.status !== 422);
    if (other) throw other;
    throw new HttpError(422, (errors as HttpError[]).flatMap((e) => e.details));
  }
}
