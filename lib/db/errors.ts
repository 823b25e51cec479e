/** Helpers to read DynamoDB's conditional-failure errors without string matching all over. */
export function isConditionalFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** An item as DynamoDB returns it on a failed condition: not unmarshalled. */
export type RawItem = Record<string, { N?: string; S?: string; NS?: string[]; NULL?: boolean; BOOL?: boolean } | undefined>;

const isRawItem = (value: unknown): value is RawItem => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The stored item a failed single write asked for (ReturnValuesOnConditionCheckFailure), if any. */
export function storedOnFailure(error: unknown): RawItem | undefined {
  if (typeof error !== 'object' || error === null || !('Item' in error)) return undefined;
  return isRawItem(error.Item) ? error.Item : undefined;
}

/** One item's reason in a cancelled transaction, as DynamoDB gives it. */
export interface CancellationReason {
  Code?: string;
  Message?: string;
  /** The stored item, when the write asked for it (ReturnValuesOnConditionCheckFailure). */
  Item?: RawItem;
}

/** The reasons of a cancelled transaction, by index in TransactItems; empty for any other error. */
export function cancellationReasons(error: unknown): CancellationReason[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException' || !('CancellationReasons' in error)) return [];
  const reasons: unknown = error.CancellationReasons;
  if (!Array.isArray(reasons)) return [];
  return reasons.map((reason: unknown) => {
    if (typeof reason !== 'object' || reason === null) return {};
    const code = 'Code' in reason && typeof reason.Code === 'string' ? reason.Code : undefined;
    const message = 'Message' in reason && typeof reason.Message === 'string' ? reason.Message : undefined;
    const item = 'Item' in reason && isRawItem(reason.Item) ? reason.Item : undefined;
    return { Code: code, Message: message, Item: item };
  });
}

/** The reason code of each item of a cancelled transaction (by index in TransactItems); empty for any other error. */
function cancellationCodes(error: unknown): (string | undefined)[] {
  return cancellationReasons(error).map((reason) => reason.Code);
}

/**
 * Which items of a cancelled transaction failed their condition (by index in TransactItems).
 * Empty when the cancellation had another cause (conflict with a concurrent transaction, ...).
 */
export function failedConditions(error: unknown): number[] {
  return cancellationCodes(error).flatMap((code, index) => (code === 'ConditionalCheckFailed' ? [index] : []));
}

export function isTransactionConflict(error: unknown): boolean {
  return cancellationCodes(error).includes('TransactionConflict');
}

/** A transaction cancelled because the table throttled it: the dependency is busy, not the request wrong. */
export function isTransactionThrottled(error: unknown): boolean {
  return cancellationCodes(error).some((code) => code === 'ThrottlingError' || code === 'ProvisionedThroughputExceeded');
}

/**
 * DynamoDB's size refusals: an item over 400 KB, a transaction over 4 MB, a key over its 2048 /
 * 1024 bytes, an item collection over 10 GB. The schemas bound every body so that none should
 * happen (test/unit/item-size.test.ts); one that still does is the request's size, not a fault.
 * Matched on the message, which is all DynamoDB gives (a ValidationException, or the reason of a
 * cancelled transaction's item).
 */
const SIZE_REFUSAL =
  /item size (to update )?has exceeded the maximum allowed size|transaction (request|payload size) cannot (be larger than|exceed) 4 ?MB|primary key values must be under|size of (the )?(hash ?key|range ?key)|size of all range keys|size limit exceeded|item collection size limit/i;

export function isSizeRefusal(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ItemCollectionSizeLimitExceededException') return true;
  if (error.name === 'ValidationException') return SIZE_REFUSAL.test(error.message);
  return cancellationReasons(error).some(
    (reason) => reason.Code === 'ItemCollectionSizeLimitExceeded' || (reason.Code === 'ValidationError' && SIZE_REFUSAL.test(reason.Message ?? '')),
  );
}
