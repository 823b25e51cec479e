/** Helpers to read DynamoDB's conditional-failure errors without string matching all over. */
export function isConditionalFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The reason code of each item of a cancelled transaction (by index in TransactItems); empty for any other error. */
function cancellationCodes(error: unknown): (string | undefined)[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  return ((error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((reason) => reason.Code);
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
