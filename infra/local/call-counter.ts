import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IDEMPOTENCY_PK_PREFIX, idempotencyTableActions, tableActions } from '#lib/db/table.ts';
import type { RouteSpec } from '#lib/http/route.ts';

/**
 * Counts the DynamoDB calls each request makes on the local stack, so that the number is
 * measured, not guessed: the local server runs every handler inside `callCounter.run()` and
 * answers the count in the `x-local-dynamodb-calls` header. Counted once per command (at the
 * initialize step), so SDK retries are not counted twice.
 *
 * It also refuses what the function's IAM grant would refuse on AWS (DynamoDB Local checks no
 * permissions): a write from a read route must fail here, not first in a deployment.
 */
export const callCounter = new AsyncLocalStorage<{ calls: number; access: RouteSpec['access']; idempotencyWrites?: boolean }>();

/** IAM authorizes TransactWriteItems item by item; any write action stands for it here. */
const actionOf = (commandName: string) => (commandName === 'TransactWriteItemsCommand' ? 'PutItem' : commandName.replace(/Command$/, ''));

/** What the CDK grants every POST route besides its access: idempotency writes on the IDEMPOTENCY# partitions only (dynamodb:LeadingKeys). */
function isIdempotencyWrite(action: string, input: unknown): boolean {
  const { Key, Item } = (input ?? {}) as { Key?: { pk?: unknown }; Item?: { pk?: unknown } };
  const pk = Key?.pk ?? Item?.pk;
  return (idempotencyTableActions as readonly string[]).includes(action) && typeof pk === 'string' && pk.startsWith(IDEMPOTENCY_PK_PREFIX);
}

const counted = new WeakSet<DynamoDBDocumentClient>();

/** Installs the count on a client once (each reload generation of lib/db/client.ts has its own). */
export function countDynamoDbCalls(db: DynamoDBDocumentClient): void {
  if (counted.has(db)) return;
  counted.add(db);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const counter = callCounter.getStore();
      if (counter) {
        counter.calls += 1;
        const action = actionOf(context.commandName ?? '');
        if (!(tableActions[counter.access] as readonly string[]).includes(action) && !(counter.idempotencyWrites && isIdempotencyWrite(action, args.input))) {
          throw Object.assign(new Error(`Not authorized to perform dynamodb:${action} (route access: ${counter.access})`), { name: 'AccessDeniedException' });
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'localDynamoDbCallCounter' },
  );
}
