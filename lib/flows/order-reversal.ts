import { currentTimeMs } from '#lib/clock.ts';
import { allocateCommandIds, commandPuts, commandWrite, getCommandRecords } from '#lib/db/command.ts';
import { reverseCommission } from '#lib/db/commission.ts';
import { releaseCouponUse } from '#lib/db/coupon-use.ts';
import { commandContext, getOrderItem, orderResponse, type OrderItem } from '#lib/db/order.ts';
import { clearCommissionReversal, finishCommandReversal, markReversed, type CommandReversal } from '#lib/db/order-reversal.ts';
import { releasePackages } from '#lib/db/reservation.ts';
import { retrying, WrittenConcurrently, type GuardedWrite } from '#lib/db/transact.ts';
import { canceled, newChain, planCommands } from '#lib/domain/delivery.ts';
import { reversal, type ReversalStatus } from '#lib/domain/order.ts';
import { settleCommission } from '#lib/flows/order.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';
import type { Order } from '#lib/schemas/order.ts';

/**
 * Refund and chargeback (extensions section 10): APPROVED -> REFUNDED or CHARGEBACK, exactly once,
 * and everything that takes back. Calls exclude the credential lookup.
 *
 * | step                     | calls                                                                                     |
 * |--------------------------|-------------------------------------------------------------------------------------------|
 * | 1. status change         | GetItem order + [command ids ADD, when the package has commands of the stage] and         |
 * |                          | [BatchGet the order's commands], in parallel + TransactWrite (order conditioned on        |
 * |                          | APPROVED + coupon use, stock and limit units given back + step 2's writes when they fit)  |
 * | 2. commands (when step 1 | [BatchGet the order's commands] + TransactWrite (flag removed + not-DONE commands CANCELED  |
 * |    could not hold them)  | + the stage's commands queued + their chain); skipped when the order has no commands at all |
 * | 3. commission (ref_code) | [credit still owed by the approval: 1-4 + 1] + reverseCommission (1 when nothing was       |
 * |                          | credited, else 4) + UpdateItem clearing the flag                                           |
 * | already in that state    | GetItem: 1                                                                                 |
 *
 * A sequence, not one transaction: the releases alone may take the 100 items of a transaction (an
 * order's creation fits them exactly), and the commands up to 100 more. Step 1 is the commit
 * point: it changes the status (so exactly one of racing calls wins) and, in the same write, flags
 * what is still owed (`reversal_commands`, `reversal_commission`) and records the first id of the
 * stage's commands. Steps 2 and 3 each remove their flag in the write that does their work,
 * conditioned on it, so each happens once. A crash between steps leaves a REFUNDED (CHARGEBACK)
 * order with a flag; the next call of the same route finds the order already in that state, sees
 * the flag and finishes the step, with the same command ids and the same refund time (execute_at).
 * Racing calls that lose step 1 do the same; only one of them gets each flag's write through.
 */
export async function reverseOrder(storeId: number, orderId: number, target: ReversalStatus, justRead?: OrderItem): Promise<Order> {
  const reserve: ReversalReserve = { gone: new Set() };
  // The order as the caller just read it (consistently) saves the first round's GetItem; a lost round reads again.
  let known = justRead;
  const order = await retrying(async () => {
    const read = known ?? (await getOrderItem(storeId, orderId));
    known = undefined;
    if (reversal(read.status, target) === 'already') return read;
    return reverseRound(read, target, reserve);
  });
  await finishReversal(order, target);
  return orderResponse(order);
}

/** What a lost round leaves for the next: the stage's command ids allocated, release targets found missing (a deleted coupon or package). */
export interface ReversalReserve {
  firstCommandId?: number;
  gone: Set<string>;
}

/** A TransactWrite holds at most 100 items. */
const TRANSACTION_ITEMS_MAX = 100;

/**
 * Step 1 over the order as read (APPROVED): the status change and the releases, with `writes`
 * in the same transaction (a payment's decision: section 13 rules 5 and 6), and step 2 too when
 * everything fits one transaction: the order's commands are then read beside the id allocation,
 * and no second transaction follows. StaleRead when the order, the payment or a command changed
 * since read.
 */
export async function reverseRound(read: OrderItem, target: ReversalStatus, reserve: ReversalReserve, writes: readonly GuardedWrite[] = []): Promise<OrderItem> {
  const storeId = read.store_id;
  const stage = planCommands(read.deliveries, target);
  const releases = [...releaseCouponUse(storeId, read, reserve.gone), ...releasePackages(storeId, read, reserve.gone), ...writes];
  const owesCommands = stage.length > 0 || read.command_ids.length > 0;
  // At most: the order, the releases, the counts, a cancel per command, each queued command with
  // its player's queue entry, their chain. Past 100, step 2 stays a transaction of its own.
  const together = owesCommands && 1 + releases.length + 1 + read.command_ids.length + 2 * stage.length + 1 <= TRANSACTION_ITEMS_MAX;
  const [firstCommandId, commands] = await Promise.all([
    // Ids allocated by a lost round are kept for the next one (the stage's deliveries never change).
    reserve.firstCommandId ?? (stage.length > 0 ? allocateCommandIds(storeId, stage.length) : 0),
    together && read.command_ids.length > 0 ? getCommandRecords(storeId, read.command_ids) : [],
  ]);
  reserve.firstCommandId = firstCommandId;
  const at = new Date(currentTimeMs()).toISOString();
  const owed = { at, commands: owesCommands, firstCommandId };
  return markReversed(read, target, owed, releases, together ? commandReversal(read, stage, firstCommandId, at, commands) : undefined);
}

/** The commands' writes of a reversal: the order's commands not DONE become CANCELED, the stage's are queued (from `firstId`) with their chain. */
function commandReversal(order: OrderItem, stage: ReturnType<typeof planCommands>, firstId: number, at: string, commands: readonly (CommandRecord | undefined)[]): CommandReversal {
  const ids = stage.map((_, index) => firstId + index);
  // A leased one too: its lease_id stays, so the holder's later ack is recorded and changes nothing.
  const cancels = commands.flatMap((command) =>
    command && command.status !== 'DONE' && command.status !== 'CANCELED' ? [commandWrite(canceled(command, Date.parse(at)), command.rev)] : [],
  );
  return { queuedIds: ids, writes: [...cancels, ...commandPuts(order.store_id, order.id, commandContext(order), stage, newChain(ids, stage), firstId, at)] };
}

/** Steps 2 and 3, each once (their flags): a repeated call finishes what a crash left. */
export async function finishReversal(order: OrderItem, target: ReversalStatus): Promise<void> {
  const storeId = order.store_id;
  if (order.reversal_commands) await reverseCommands(order, target);
  if (order.reversal_commission && order.ref_code !== null) {
    const at = reversedAt(order, target);
    // An approval that died before crediting: credit first, so there is a credit to take back.
    await settleCommission(storeId, order);
    await retrying(() => reverseCommission(storeId, order.id, order.ref_code!, at));
    await clearCommissionReversal(order);
  }
}

const reversedAt = (order: OrderItem, target: ReversalStatus) => (target === 'REFUNDED' ? order.refunded_at : order.chargeback_at) ?? order.updated_at;

/** Step 2 apart (an order too large for one transaction, or a crash after step 1): the commands' writes in a transaction of their own. */
async function reverseCommands(order: OrderItem, target: ReversalStatus): Promise<void> {
  const storeId = order.store_id;
  const at = reversedAt(order, target);
  const stage = planCommands(order.deliveries, target);
  const firstId = order.reversal_first_command_id ?? 0;
  try {
    await retrying(async () => {
      const commands = order.command_ids.length > 0 ? await getCommandRecords(storeId, order.command_ids) : [];
      const { queuedIds, writes } = commandReversal(order, stage, firstId, at, commands);
      await finishCommandReversal(order, queuedIds, writes);
    });
  } catch (error) {
    // Another call for this order did step 2 first.
    if (!(error instanceof WrittenConcurrently)) throw error;
  }
}
