import { clearOrderMark, orderCountMove, orderKey, statusPk, type OrderItem, type ReversalMarks } from '#lib/db/order.ts';
import { StaleRead, update, writeGuarded, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';

/**
 * Refund and chargeback (extensions section 10): APPROVED -> REFUNDED or CHARGEBACK and what that
 * takes back. The use case is lib/flows/order-reversal.ts; this module holds its three writes.
 *
 * | access pattern                 | write                                                                                   | calls |
 * |--------------------------------|-----------------------------------------------------------------------------------------|-------|
 * | the status change (commit)     | TransactWrite: order update conditioned on APPROVED, setting the flags of what is still | 1     |
 * |                                | owed (`reversal_commands`, `reversal_commission`) and the first id of the stage's       |       |
 * |                                | commands, + the coupon's and the packages' releases (as a cancel), + the status counts  |       |
 * |                                | (the order's shard, lib/db/order.ts); when everything fits 100 items, the commands'     |       |
 * |                                | writes below ride in it too, and the order takes the queued ids at once instead of     |       |
 * |                                | `reversal_commands`                                                                     |       |
 * | the commands (larger orders)   | TransactWrite: order update removing `reversal_commands` (conditioned on it) and adding | 1     |
 * |                                | the queued ids to `command_ids`, + one Put                                              |       |
 * |                                | per command canceled (on its rev) or queued (the stage's), + their chain item           |       |
 * | the commission reversed        | UpdateItem removing `reversal_commission`                                               | 1     |
 *
 * The first write fits: its releases are those of the order's creating transaction, which held
 * them with the order and its sentinel in at most 100 items, so they and the order and the counts
 * are at most 100 too. The second fits: an order delivers at most 98 commands over all stages
 * (97 since the counts; 98 placed before), so the canceled and the queued ones, one chain item and
 * the order are at most 100 items. Both together fit an ordinary order (a few packages, a few
 * commands), which then costs one transaction, atomic with the status change; only an order whose
 * releases and commands pass 100 items together takes the two.
 */
export type ReversalStatus = 'REFUNDED' | 'CHARGEBACK';

const timestampOf = (target: ReversalStatus) => (target === 'REFUNDED' ? 'refunded_at' : 'chargeback_at');

/** The commands' side of a reversal (cancels, the stage's Puts and chain) and the ids it queues. */
export interface CommandReversal {
  queuedIds: readonly number[];
  writes: readonly GuardedWrite[];
}

/** A TransactWrite holds at most 100 items. */
const TRANSACTION_ITEMS_MAX = 100;

/**
 * APPROVED -> `target` with `releases` in one transaction, marking what is owed after it. With
 * `commands` (read with the order) and room for them, their writes go in the same transaction and
 * nothing about commands is owed after it. The answer is the reversed item; StaleRead when the
 * order (or one of the commands) changed since it was read.
 */
export async function markReversed(
  order: OrderItem,
  target: ReversalStatus,
  owed: { at: string; commands: boolean; firstCommandId: number },
  releases: readonly GuardedWrite[],
  commands?: CommandReversal,
): Promise<OrderItem> {
  const storeId = order.store_id;
  const commission = order.ref_code !== null;
  const countMove = orderCountMove(storeId, order.id, order.count_owed ?? 'APPROVED', target);
  // The order's update, the releases, the counts and the commands' writes.
  const together = commands !== undefined && 1 + releases.length + 1 + commands.writes.length <= TRANSACTION_ITEMS_MAX ? commands : undefined;
  const marks: ReversalMarks = {
    reversal_first_command_id: owed.firstCommandId,
    ...(owed.commands && !together ? { reversal_commands: true } : {}),
    ...(commission ? { reversal_commission: true } : {}),
  };
  const sets = [...Object.keys(marks).map((name) => `${name} = :${name}`), ...(together ? ['command_ids = list_append(command_ids, :queued_ids)'] : [])];
  // An approval that could not move the counts left them on `count_owed` (lib/db/order.ts): the move above starts from there, once.
  await writeGuarded([
    {
      item: update({
        Key: orderKey(storeId, order.id),
        UpdateExpression: `SET #status = :target, ${timestampOf(target)} = :now, updated_at = :now, gsi2pk = :statusPk, ${sets.join(', ')}${order.count_owed ? ' REMOVE count_owed' : ''}`,
        ConditionExpression: `#status = :approved AND ${order.count_owed ? 'count_owed = :owed' : 'attribute_not_exists(count_owed)'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':target': target,
          ':approved': 'APPROVED',
          ':now': owed.at,
          ':statusPk': statusPk(storeId, target),
          ...Object.fromEntries(Object.entries(marks).map(([name, value]) => [`:${name}`, value])),
          ...(order.count_owed ? { ':owed': order.count_owed } : {}),
          ...(together ? { ':queued_ids': together.queuedIds } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      onConditionFailed: (current) => (current ? new StaleRead() : notFound('Order')),
    },
    ...releases,
    countMove,
    ...(together?.writes ?? []),
  ]);
  const { count_owed: _settled, ...rest } = order;
  const commandIds = together ? [...order.command_ids, ...together.queuedIds] : order.command_ids;
  return { ...rest, ...marks, command_ids: commandIds, status: target, [timestampOf(target)]: owed.at, updated_at: owed.at };
}

/**
 * The commands' side, once: `writes` (cancels and Puts) with the removal of `reversal_commands`.
 * The order's write comes first, so that when another call did this already its failure is the one
 * reported: WrittenConcurrently (nothing to do), not the Puts' "allocated twice".
 */
export async function finishCommandReversal(order: OrderItem, queuedIds: readonly number[], writes: readonly GuardedWrite[]): Promise<void> {
  await writeGuarded([
    {
      item: update({
        Key: orderKey(order.store_id, order.id),
        // The queued commands join the order's, so the order's command list shows them.
        UpdateExpression: 'SET command_ids = list_append(command_ids, :ids) REMOVE reversal_commands',
        ConditionExpression: 'reversal_commands = :true',
        ExpressionAttributeValues: { ':true': true, ':ids': queuedIds },
      }),
      onConditionFailed: () => new WrittenConcurrently(),
    },
    ...writes,
  ]);
}

/** The commission has been reversed (or there was none to reverse): nothing is owed any more. */
export const clearCommissionReversal = (order: OrderItem): Promise<void> => clearOrderMark(order.store_id, order.id, 'reversal_commission');
