/** Helpers to read DynamoDB's conditional-failure errors without string matching all over. */
export function isConditionalFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * Which items of a cancelled transaction failed their condition (by index in TransactItems).
 * Empty when the cancellation had another cause (conflict with a concurrent transaction, ...).
 */
export function failedConditions(error: unknown): number[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}

export function isTransactionConflict(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'TransactionConflict');
}
