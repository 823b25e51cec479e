import { wallClockMs } from '#lib/clock.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IDEMPOTENCY_PK_PREFIX, LIST_COUNT_PK_PREFIX } from '#lib/db/table.ts';

/**
 * What the request being served holds and may have written, so that a failed request is never
 * run twice (issue 28): the Idempotency-Key it claimed (lib/db/idempotency.ts), the order a
 * previous attempt of the same key placed, and whether one of its own writes may have landed.
 *
 * Kept per request with AsyncLocalStorage (the local stack serves many requests in one process);
 * the handler stack opens one around every route that takes a key (lib/http/handler.ts) and the
 * key's middleware fills it in.
 */
export interface HeldClaim {
  pk: string;
  /** The random claim id: this request's, kept in the record and compared by every write on it. */
  owner: string;
  /** The record's retention (epoch seconds): how long an effect it records counts. */
  expiresEpoch: number;
}

export interface RequestEffects {
  claim?: HeldClaim;
  /** The order an earlier attempt of this key placed (recorded in the order's own transaction). */
  earlierOrderId?: number;
  /** What an earlier attempt of this key created on another POST (lib/db/idempotency.ts `createOnce`). */
  earlierCreatedId?: number | string;
  /**
   * A write of this request (other than its own bookkeeping, below) that landed, or whose fate is
   * unknown: an answer lost to a dropped connection, a 500, a timeout. A write refused outright
   * (a failed condition, a throttle, a cancelled transaction) wrote nothing and does not count.
   */
  maybeWrote: boolean;
  /**
   * When the request must have answered (epoch ms): the function's timeout less a margin to send
   * the answer. DynamoDB attempts are cut at it (`boundRequestTime`); absent, only the SDK's own
   * per-attempt timeouts apply.
   */
  deadline?: number;
  /** The Idempotency-Key is being kept or settled: the work of the request is over, and the reserve kept for this is spent. */
  settling?: boolean;
}

const current = new AsyncLocalStorage<RequestEffects>();

/** Runs `serve` with a fresh record of the request's effects, and the time by which it must answer. */
export const withRequestEffects = <T>(serve: () => Promise<T>, deadline?: number): Promise<T> => current.run({ maybeWrote: false, deadline }, serve);

export const requestEffects = (): RequestEffects | undefined => current.getStore();

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);

/**
 * Errors that prove the attempt wrote nothing: DynamoDB refused it before applying it (a
 * condition, a cancelled transaction, a throttle, a malformed request, no permission), the
 * connection was refused before the call was sent, or the request's deadline kept it from being
 * sent (`boundRequestTime`). Anything else (a 500, a reset connection, a timeout) may have
 * landed.
 */
const REFUSED_UNWRITTEN = new Set([
  'ConditionalCheckFailedException',
  'TransactionCanceledException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'IdempotentParameterMismatchException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'ValidationException',
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'ItemCollectionSizeLimitExceededException',
]);
export function provesNothingWritten(error: unknown): boolean {
  const { name, code } = error as { name?: string; code?: string };
  return REFUSED_UNWRITTEN.has(name ?? '') || code === 'ECONNREFUSED' || (error instanceof RequestDeadlineExceeded && !error.sent);
}

type KeyValue = string | { S?: string } | undefined;
const text = (value: KeyValue) => (typeof value === 'string' ? value : value?.S);

/**
 * The request's own bookkeeping, never an effect a retry could double: its idempotency record,
 * id sequences (an id skipped is invisible) and list counts. A transaction that carries the
 * record is left out too: whether it landed is written in the record itself, atomically.
 */
function isBookkeeping(commandName: string, input: Record<string, unknown>): boolean {
  const keyOf = (item: { Key?: Record<string, KeyValue>; Item?: Record<string, KeyValue> } | undefined) => item?.Key ?? item?.Item ?? {};
  const isBookkeepingKey = (key: Record<string, KeyValue>) => {
    const [pk, sk] = [text(key.pk) ?? '', text(key.sk) ?? ''];
    return pk.startsWith(IDEMPOTENCY_PK_PREFIX) || pk.startsWith(LIST_COUNT_PK_PREFIX) || pk === '#SEQ' || sk.startsWith('#SEQ#');
  };
  if (commandName === 'TransactWriteItemsCommand') {
    const items = (input.TransactItems ?? []) as Record<string, { Key?: Record<string, KeyValue>; Item?: Record<string, KeyValue> }>[];
    return items.some((entry) => text(keyOf(Object.values(entry)[0]).pk)?.startsWith(IDEMPOTENCY_PK_PREFIX));
  }
  if (commandName === 'BatchWriteItemCommand') return false;
  return isBookkeepingKey(keyOf(input as never));
}

/**
 * Watches every attempt of every write on a client (SDK retries included: an attempt whose
 * answer was lost counts even when its retry is refused) and notes in the request's record
 * whether one may have landed. Installed once on the one client (lib/db/client.ts).
 */
export function trackRequestWrites(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const effects = current.getStore();
      const commandName = context.commandName ?? '';
      if (!effects || !WRITES.has(commandName) || isBookkeeping(commandName, args.input as Record<string, unknown>)) return next(args);
      try {
        const output = await next(args);
        effects.maybeWrote = true;
        return output;
      } catch (error) {
        if (!provesNothingWritten(error)) effects.maybeWrote = true;
        throw error;
      }
    },
    // The deserialize step runs inside the SDK's retry loop: once per attempt.
    { step: 'deserialize', priority: 'high', name: 'trackRequestWrites' },
  );
}

/**
 * What a request holding an Idempotency-Key keeps of its time for keeping or settling the key
 * after its work: one attempt (1 s to connect, 1.5 s for the answer on AWS) and a little more.
 */
export const SETTLE_RESERVE_MS = 2_700;

/** A DynamoDB attempt refused or cut short because the request's time is up: a 503, never retried by the SDK (no retryable trait). */
export class RequestDeadlineExceeded extends Error {
  override readonly name = 'RequestDeadlineExceeded';
  /** Whether the attempt had been sent (its fate unknown) or was never sent (it wrote nothing). */
  constructor(readonly sent: boolean) {
    super(sent ? "a DynamoDB attempt outlasted the request's time" : 'the request has no time left for another DynamoDB attempt');
  }
}

/**
 * Bounds a request's DynamoDB time by its deadline (lib/http/handler.ts sets it from the
 * function's remaining time), so that the SDK's retries, whose budget is per call
 * (lib/db/client.ts), never carry a request past Lambda's timeout, where its answer would be
 * API Gateway's, without the envelope or Retry-After. A request holding a key stops its own work
 * `SETTLE_RESERVE_MS` earlier, so that the key is still kept or settled in time. An attempt due
 * after the deadline is not sent; one still running at the deadline is left unanswered, and
 * counts as a write that may have landed (`trackRequestWrites`, outside it, sees the error).
 */
export function boundRequestTime(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const effects = current.getStore();
      if (effects?.deadline === undefined) return next(args);
      const limit = effects.deadline - (effects.claim && !effects.settling ? SETTLE_RESERVE_MS : 0);
      const left = limit - wallClockMs();
      if (left <= 0) throw new RequestDeadlineExceeded(false);
      let timer: NodeJS.Timeout | undefined;
      const cut = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new RequestDeadlineExceeded(true)), left);
      });
      try {
        return await Promise.race([next(args), cut]);
      } finally {
        clearTimeout(timer);
      }
    },
    // Inside `trackRequestWrites` (same step, lower priority), once per attempt.
    { step: 'deserialize', priority: 'low', name: 'boundRequestTime' },
  );
}
