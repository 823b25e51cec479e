import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/* What a piece of code costs in DynamoDB, for the cost tests and benches: its calls and the read and write units DynamoDB reports. */

export interface Usage {
  calls: number;
  read: number;
  write: number;
}

/**
 * Counts the calls `client` makes while `measure` runs, and sums the capacity DynamoDB reports
 * for them (every command sent with ReturnConsumedCapacity TOTAL). DynamoDB Local reports only
 * `CapacityUnits` (table and indexes together): the operation says whether they are reads or writes.
 * One middleware per client; calls made outside `measure` pass untouched.
 */
export function capacityMeter(client: DynamoDBDocumentClient, name = 'measureConsumedCapacity') {
  let current: Usage | null = null;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const usage = current;
      if (!usage) return next(args);
      usage.calls += 1;
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const reads = /^(Get|BatchGet|Query)/.test(context.commandName ?? '');
      for (const entry of [consumed ?? []].flat() as { CapacityUnits?: number }[]) usage[reads ? 'read' : 'write'] += entry.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name },
  );
  return {
    /** Runs `work` and answers what it answered with what it cost (one measure at a time). */
    async measure<T>(work: () => Promise<T>): Promise<{ result: T; usage: Usage }> {
      const usage: Usage = { calls: 0, read: 0, write: 0 };
      current = usage;
      try {
        return { result: await work(), usage };
      } finally {
        current = null;
      }
    },
  };
}
