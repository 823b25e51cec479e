import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableActions } from '#lib/db/table.ts';
import type { RouteSpec } from '#lib/http/route.ts';

/**
 * Refuses on the local stack what the function's IAM grant would refuse on AWS (DynamoDB Local
 * checks no permissions): a write from a read route must fail here, not first in a deployment.
 * The local server runs every handler inside `routeAccess.run(<the route's access>)`.
 */
export const routeAccess = new AsyncLocalStorage<RouteSpec['access']>();

/** IAM authorizes TransactWriteItems item by item; any write action stands for it here. */
const actionOf = (commandName: string) => (commandName === 'TransactWriteItemsCommand' ? 'PutItem' : commandName.replace(/Command$/, ''));

const policed = new WeakSet<DynamoDBDocumentClient>();

/** Installs the check on a client once (each reload generation of lib/db/client.ts has its own). */
export function enforceRouteAccess(db: DynamoDBDocumentClient): void {
  if (policed.has(db)) return;
  policed.add(db);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const access = routeAccess.getStore();
      const action = actionOf(context.commandName ?? '');
      if (access && !(tableActions[access] as readonly string[]).includes(action)) {
        throw Object.assign(new Error(`Not authorized to perform dynamodb:${action} (route access: ${access})`), { name: 'AccessDeniedException' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'localRouteAccess' },
  );
}
