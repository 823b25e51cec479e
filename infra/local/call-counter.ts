import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Counts the DynamoDB calls each request makes on the local stack, so that the number is
 * measured, not guessed: the local server runs every handler inside `callCounter.run()` and
 * answers the count in the `x-local-dynamodb-calls` header. Counted once per command (at the
 * initialize step), so SDK retries are not counted twice.
 */
export const callCounter = new AsyncLocalStorage<{ calls: number }>();

let installed = false;

export async function countDynamoDbCalls(): Promise<void> {
  if (installed) return;
  installed = true;
  const { db } = await import('#lib/db/client.ts');
  db.middlewareStack.add(
    (next) => async (args) => {
      const counter = callCounter.getStore();
      if (counter) counter.calls += 1;
      return next(args);
    },
    { step: 'initialize', name: 'localDynamoDbCallCounter' },
  );
}
