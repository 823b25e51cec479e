import { AsyncLocalStorage } from 'node:async_hooks';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  CREDENTIAL_PK_PREFIX,
  CREDENTIAL_USE_ATTRIBUTE,
  credentialUseTableActions,
  IDEMPOTENCY_PK_PREFIX,
  idempotencyTableActions,
  LIST_COUNT_PK_PREFIX,
  listCountTableActions,
  tableActions,
  type TableAccess,
} from '#lib/db/table.ts';

/**
 * Refuses on the local stack what the function's IAM grant would refuse on AWS (DynamoDB Local
 * checks no permissions): a write from a read route must fail here, not first in a deployment.
 * The local server runs every handler inside `routeAccess.run(<the route's grant>)`.
 */
export interface RouteGrant {
  access: TableAccess;
  /** What the CDK grants every POST route besides its access: idempotency writes on the IDEMPOTENCY# partitions only (dynamodb:LeadingKeys). */
  idempotencyWrites?: boolean;
  /** What the CDK grants every page-mode list and package read besides its access (`writesCountPartitions`): a list's first count, the first apply-all tag ids, on the COUNT# partitions only. */
  listCountWrites?: boolean;
  /** What the CDK grants every route of an API token or key besides its access (`notesCredentialUse`): its "last used" mark, on the CRED# partitions, that attribute only. */
  credentialUseWrites?: boolean;
}
export const routeAccess = new AsyncLocalStorage<RouteGrant>();

/** A write of `actions` whose item is in a partition starting with `prefix` (IAM dynamodb:LeadingKeys). */
function isWriteOn(prefix: string, actions: readonly string[], action: string, input: unknown): boolean {
  const { Key, Item } = (input ?? {}) as { Key?: { pk?: unknown }; Item?: { pk?: unknown } };
  const pk = Key?.pk ?? Item?.pk;
  return actions.includes(action) && typeof pk === 'string' && pk.startsWith(prefix);
}

/** An update that sets the "last used" mark and nothing else (IAM `dynamodb:Attributes`). */
const setsOnlyLastUse = (input: unknown) => new RegExp(`^SET ${CREDENTIAL_USE_ATTRIBUTE} = :\\w+$`).test(String((input as { UpdateExpression?: unknown }).UpdateExpression ?? ''));

/** The action IAM checks for each kind of write of a TransactWriteItems. */
const TRANSACT_ACTIONS: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

/** What IAM authorizes of a call: a TransactWriteItems item by item (each its action, on its key), any other call as one. */
function requestsOf(commandName: string, input: unknown): { action: string; input: unknown }[] {
  if (commandName !== 'TransactWriteItemsCommand') return [{ action: commandName.replace(/Command$/, ''), input }];
  const items = ((input ?? {}) as { TransactItems?: Record<string, unknown>[] }).TransactItems ?? [];
  return items.flatMap((item) => Object.entries(item).map(([kind, write]) => ({ action: TRANSACT_ACTIONS[kind] ?? kind, input: write })));
}

const policed = new WeakSet<DynamoDBDocumentClient>();

/** Installs the check on a client once (each reload generation of lib/db/client.ts has its own). */
export function enforceRouteAccess(db: DynamoDBDocumentClient): void {
  if (policed.has(db)) return;
  policed.add(db);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const grant = routeAccess.getStore();
      const allowed = ({ action, input }: { action: string; input: unknown }) =>
        !grant ||
        (tableActions[grant.access] as readonly string[]).includes(action) ||
        (grant.idempotencyWrites && isWriteOn(IDEMPOTENCY_PK_PREFIX, idempotencyTableActions, action, input)) ||
        (grant.listCountWrites && isWriteOn(LIST_COUNT_PK_PREFIX, listCountTableActions, action, input)) ||
        (grant.credentialUseWrites && isWriteOn(CREDENTIAL_PK_PREFIX, credentialUseTableActions, action, input) && setsOnlyLastUse(input));
      const refused = requestsOf(context.commandName ?? '', args.input).find((request) => !allowed(request));
      if (refused && grant) {
        throw Object.assign(new Error(`Not authorized to perform dynamodb:${refused.action} (route access: ${grant.access})`), { name: 'AccessDeniedException' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'localRouteAccess' },
  );
}

/**
 * `functions/<name>.ts` of a job or a consumer, as this process imports it (the plain URL, not a
 * reload generation: the local queue's consumer lives in that module graph), with that graph's
 * DynamoDB client held to grants whether or not a request has loaded a handler yet.
 */
export async function importBackgroundHandler<Handler>(name: string): Promise<Handler> {
  const [functionModule, client] = await Promise.all([
    import(pathToFileURL(join(process.cwd(), 'functions', `${name}.ts`)).href) as Promise<{ handler: Handler }>,
    import(pathToFileURL(join(process.cwd(), 'lib', 'db', 'client.ts')).href) as Promise<typeof import('#lib/db/client.ts')>,
  ]);
  enforceRouteAccess(client.db);
  return functionModule.handler;
}
