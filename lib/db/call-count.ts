import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The DynamoDB calls of the request being served, counted by a middleware on the one client
 * (lib/db/client.ts), so that the request log line says how many the request made. Counted once
 * per command, at the initialize step: SDK retries are the same call. Scoped with
 * AsyncLocalStorage because the local stack serves many requests at once in one process.
 */
export interface DynamoDbCallCount {
  calls: number;
}

const currentRequest = new AsyncLocalStorage<DynamoDbCallCount>();

/**
 * Runs `serve` with a count of the DynamoDB calls it makes. Inside a count already running
 * (the local server counts around the handler, which counts for its log line) both read the
 * same count.
 */
export function countingDynamoDbCalls<T>(serve: (count: DynamoDbCallCount) => Promise<T>): Promise<T> {
  const running = currentRequest.getStore();
  if (running) return serve(running);
  const count = { calls: 0 };
  return currentRequest.run(count, () => serve(count));
}

/** Called by the client's middleware for each command sent. */
export function countDynamoDbCall(): void {
  const count = currentRequest.getStore();
  if (count) count.calls += 1;
}
