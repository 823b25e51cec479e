import { DeleteCommand, PutCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { cancellationReasons, failedConditions, isConditionalFailure, isTransactionConflict, storedOnFailure, type RawItem } from '#lib/db/errors.ts';
import { HttpError, unavailable } from '#lib/errors.ts';

/**
 * The one way lib/db writes (test/unit/layers.test.ts fails on a write command built anywhere
 * else in lib/db):
 *
 * - a write is built by `put`, `update`, `remove` or `check`, which carry the table name, and
 *   travels as a `GuardedWrite`: the write and the error its failed condition stands for;
 * - `writeGuarded` sends the writes of one decision: a single write as a plain PutItem,
 *   UpdateItem or DeleteItem call, several as one TransactWriteItems, and a failed condition
 *   becomes its write's error either way (`writeReturning` is the single write that answers
 *   the item as it now is, or was; `writeIf` the single write whose failed condition is a
 *   plain "no");
 * - `retrying` runs a read-then-write again when it met a concurrent transaction or a changed item.
 *
 * Why the retry: DynamoDB cancels one of two transactions that meet on the same item
 * (TransactionConflict) and the SDK does not retry that; a read-then-write may also find the item
 * changed (StaleRead). Both leave nothing written, so trying again is safe. Hot items (counters,
 * balances, sentinels) meet often under concurrency; without this they would fail instead of
 * queueing. Persistent contention ends in 503 with Retry-After: the request was fine and may
 * simply be sent again.
 */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

type WithoutTable<T> = Omit<T, 'TableName'>;
type PutInput = WithoutTable<NonNullable<TransactItem['Put']>>;
type UpdateInput = WithoutTable<NonNullable<TransactItem['Update']>>;
type DeleteInput = WithoutTable<NonNullable<TransactItem['Delete']>>;
type CheckInput = WithoutTable<NonNullable<TransactItem['ConditionCheck']>>;

/** A Put of the table (conditions, names and values as DynamoDB takes them). */
export const put = (input: PutInput): TransactItem => ({ Put: { TableName: TABLE, ...input } });
/** A Put that must not overwrite: the key is new. */
export const putNewItem = (item: Record<string, unknown>, extra: Omit<PutInput, 'Item' | 'ConditionExpression'> = {}): TransactItem =>
  put({ Item: item, ConditionExpression: 'attribute_not_exists(pk)', ...extra });
export const update = (input: UpdateInput): TransactItem => ({ Update: { TableName: TABLE, ...input } });
export const remove = (input: DeleteInput): TransactItem => ({ Delete: { TableName: TABLE, ...input } });
/** A condition on another item, checked in the same transaction (only inside a transaction). */
export const check = (input: CheckInput): TransactItem => ({ ConditionCheck: { TableName: TABLE, ...input } });

export type { RawItem };

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

/** One write and the error its failed condition stands for. */
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

const withoutCondition = () => new Error('a write without a condition failed one');

type ReturnValues = 'ALL_NEW' | 'ALL_OLD' | 'UPDATED_NEW' | 'UPDATED_OLD';

/** The single item's plain call (PutItem, UpdateItem or DeleteItem) and the attributes it answers. */
async function sendSingle(item: TransactItem, returnValues: ReturnValues | undefined): Promise<Record<string, unknown> | undefined> {
  const returning = returnValues ? { ReturnValues: returnValues } : {};
  if (item.Put) return (await db.send(new PutCommand({ ...item.Put, ...returning }))).Attributes;
  if (item.Update) return (await db.send(new UpdateCommand({ ...item.Update, ...returning }))).Attributes;
  if (item.Delete) return (await db.send(new DeleteCommand({ ...item.Delete, ...returning }))).Attributes;
  throw new Error('a ConditionCheck is only written inside a transaction');
}

/**
 * One write alone, answering the attributes `returnValues` asks for (undefined without it).
 * A failed condition throws the write's own error, with the stored item when the write asked
 * for it (ReturnValuesOnConditionCheckFailure), exactly as inside a transaction.
 */
export async function writeReturning(write: GuardedWrite, returnValues?: ReturnValues): Promise<Record<string, unknown> | undefined> {
  try {
    return await sendSingle(write.item, returnValues);
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    throw (write.onConditionFailed ?? withoutCondition)(storedOnFailure(error));
  }
}

/** The failure of a write whose condition is a question (`writeIf`), not a guard. */
class ConditionNotMet extends Error {}

/**
 * One write whose failed condition is an answer, not an error: true when it was written, false
 * when its condition did not hold (nothing to revoke, someone else did it first).
 */
export async function writeIf(item: TransactItem): Promise<boolean> {
  try {
    await writeReturning({ item, onConditionFailed: () => new ConditionNotMet() });
    return true;
  } catch (error) {
    if (error instanceof ConditionNotMet) return false;
    throw error;
  }
}

/**
 * The writes of one decision, not retried (callers wrap their read-and-write in `retrying`):
 * one write is a plain call, several are one TransactWrite. When conditions fail, each failed
 * write names its error: a 422 for a reference (all of them reported together), otherwise the
 * first other error (404, 409, StaleRead).
 */
export async function writeGuarded(writes: readonly GuardedWrite[]): Promise<void> {
  const only = writes.length === 1 ? writes[0]! : undefined;
  if (only && !only.item.ConditionCheck) {
    await writeReturning(only);
    return;
  }
  try {
    await db.send(new TransactWriteCommand({ TransactItems: writes.map((write) => write.item) }));
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.length === 0) throw error;
    const reasons = cancellationReasons(error);
    const errors = failed.map((index) => (writes[index]!.onConditionFailed ?? withoutCondition)(reasons[index]?.Item));
    const isReference = (e: Error): e is HttpError => e instanceof HttpError && e.status === 422;
    const references = errors.filter(isReference);
    const other = errors.find((e) => !isReference(e));
    if (other) throw other;
    throw new HttpError(
      422,
      references.flatMap((e) => e.details),
    );
  }
}
