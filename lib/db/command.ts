import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { entitySk, nowIso, padId, storePk, stripKeys } from '#lib/db/keys.ts';
import { allocateIds } from '#lib/db/sequence.ts';
import { retrying, transactGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import type { Command, CommandReport, QueuedCommand, QueuedCommandOrder } from '#lib/schemas/command.ts';
import type { Delivery } from '#lib/schemas/order.ts';

/**
 * Delivery commands: what an approved order asks the store's game server to run.
 *
 * | access pattern                         | key / index                                                        | calls    |
 * |----------------------------------------|--------------------------------------------------------------------|----------|
 * | ids for an approval's commands         | `STORE#<s> / #SEQ#COMMAND`, one `ADD n` (a block of n ids)          | 1        |
 * | create (on approval)                   | Put `STORE#<s> / COMMAND#<id>` in the approval's TransactWrite      | 0 extra  |
 * | queue: PENDING and due, oldest first   | Query gsi2 `STORE#<s>#QUEUE`, gsi2sk `< <now>$` (sk `<execute_at>#<id>`), at most 500 | 1 per MB |
 * | report an execution                    | UpdateItem conditioned on existence (ALL_NEW); a repeated FAILED: 2 | 1 (2)    |
 * | resend an order's commands             | Update each `COMMAND#<id>` (ids kept on the order) in one TransactWrite | 1     |
 *
 * Only PENDING commands are on the queue: the gsi2 attributes exist exactly while the status is
 * PENDING (a sparse index), so the queue read is one Query over due commands only, however many
 * commands a store has delivered. Each command keeps its own `queue_sk` so that putting it back
 * copies that value into gsi2sk (`SET gsi2sk = queue_sk`) without reading it first.
 *
 * A command carries a copy of its order's client fields and variables (`order`), so the queue
 * answers without reading orders; an order's client fields never change after it is placed.
 */
const COMMAND = 'COMMAND';
/** The queue answers at most this many commands per call (oldest first); the rest follow once these are reported. */
export const QUEUE_MAX = 500;

export const commandKey = (storeId: number, commandId: number) => ({ pk: storePk(storeId), sk: entitySk(COMMAND, commandId) });
const queuePk = (storeId: number) => `${storePk(storeId)}#QUEUE`;
const queueSk = (executeAt: string, commandId: number) => `${executeAt}#${padId(commandId)}`;

type CommandItem = Command & { queue_sk: string; order: QueuedCommandOrder };

/** The ids of an approval's `count` commands (consecutive, one ADD); returns the first. */
export const allocateCommandIds = (storeId: number, count: number) => allocateIds(storeId, COMMAND, count);

/** The Put of one new command (PENDING, queued at `approvedAt + delay_seconds`) for the approval's transaction. */
export function commandPut(storeId: number, commandId: number, orderId: number, order: QueuedCommandOrder, delivery: Delivery, approvedAt: string): GuardedWrite {
  const executeAt = new Date(Date.parse(approvedAt) + delivery.delay_seconds * 1000).toISOString();
  const item: CommandItem = {
    id: commandId,
    store_id: storeId,
    order_id: orderId,
    package_id: delivery.package_id,
    command: delivery.command,
    offline_execute: delivery.offline_execute,
    execute_at: executeAt,
    status: 'PENDING',
    tries: 0,
    response: null,
    order,
    queue_sk: queueSk(executeAt, commandId),
    created_at: approvedAt,
    updated_at: approvedAt,
  };
  return {
    item: {
      Put: {
        TableName: TABLE,
        Item: { ...commandKey(storeId, commandId), entity: COMMAND, gsi2pk: queuePk(storeId), gsi2sk: item.queue_sk, ...item },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new Error(`command id ${commandId} allocated twice in store ${storeId}`),
  };
}

/** Puts the commands back on the queue (resend), each keeping its execute_at; one TransactWrite. */
export async function requeueCommands(storeId: number, commandIds: readonly number[], now: string): Promise<void> {
  const requeue = (commandId: number): GuardedWrite => ({
    item: {
      Update: {
        TableName: TABLE,
        Key: commandKey(storeId, commandId),
        UpdateExpression: 'SET #status = :pending, gsi2pk = :queue, gsi2sk = queue_sk, updated_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'PENDING', ':queue': queuePk(storeId), ':now': now },
      },
    },
    // Commands are never deleted: an order naming a missing one is corrupt, not a client error.
    onConditionFailed: () => new Error(`command ${commandId} of store ${storeId} is missing`),
  });
  await retrying(() => transactGuarded(commandIds.map(requeue)));
}

const toQueued = (item: Record<string, unknown>): QueuedCommand => {
  const command = stripKeys(item) as CommandItem;
  return { id: command.id, store_id: command.store_id, command: command.command, offline_execute: command.offline_execute, execute_at: command.execute_at, order: command.order };
};

/** The PENDING commands whose execute_at has come, oldest first, at most QUEUE_MAX. */
export async function listQueuedCommands(storeId: number, now = nowIso()): Promise<QueuedCommand[]> {
  const commands: QueuedCommand[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: TABLE,
        IndexName: 'gsi2',
        // `<now>$` sorts after every `<now>#<id>` and before any later timestamp.
        KeyConditionExpression: 'gsi2pk = :queue AND gsi2sk < :due',
        ExpressionAttributeValues: { ':queue': queuePk(storeId), ':due': `${now}$` },
        Limit: QUEUE_MAX - commands.length,
        ExclusiveStartKey: startKey,
      }),
    );
    commands.push(...(page.Items ?? []).map(toQueued));
    startKey = page.LastEvaluatedKey;
  } while (startKey && commands.length < QUEUE_MAX);
  return commands;
}

const toCommand = (item: Record<string, unknown>): Command => stripKeys(item) as unknown as Command;

/**
 * Records an execution report. PENDING puts the command (back) on the queue; DONE, FAILED and
 * CANCELED take it off. FAILED counts a try when the command was not already FAILED, so a report
 * sent twice counts once; a repeated report only refreshes `response` (when sent).
 */
export async function reportCommand(storeId: number, commandId: number, report: CommandReport): Promise<Command> {
  const key = commandKey(storeId, commandId);
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':status': report.status, ':now': nowIso() };
  const sets = ['#status = :status', 'updated_at = :now'];
  if (report.response !== undefined) {
    sets.push('#response = :response');
    names['#response'] = 'response';
    values[':response'] = report.response;
  }
  const queue = report.status === 'PENDING' ? ['gsi2pk = :queue', 'gsi2sk = queue_sk'] : [];
  if (queue.length > 0) values[':queue'] = queuePk(storeId);
  const dequeue = report.status === 'PENDING' ? '' : ' REMOVE gsi2pk, gsi2sk';
  const update = (countTry: boolean) =>
    db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: key,
        UpdateExpression: `SET ${[...sets, ...queue].join(', ')}${countTry ? ' ADD tries :one' : ''}${dequeue}`,
        ConditionExpression: countTry ? 'attribute_exists(pk) AND #status <> :status' : 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: countTry ? { ...values, ':one': 1 } : values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  try {
    if (report.status === 'FAILED') {
      try {
        return toCommand((await update(true)).Attributes ?? {});
      } catch (error) {
        // Missing, or already FAILED (a repeated report): the plain update below tells which.
        if (!isConditionalFailure(error)) throw error;
      }
    }
    return toCommand((await update(false)).Attributes ?? {});
  } catch (error) {
    if (isConditionalFailure(error)) throw notFound('Command');
    throw error;
  }
}
