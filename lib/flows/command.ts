import { currentTimeMs } from '#lib/clock.ts';
import { chainWrite, commandChanges, getChain, getCommandRecord, getCommandRecords, getCommandsWithChains, saveChange, commandResponse } from '#lib/db/command.ts';
import type { ServerKeys } from '#lib/crypto.ts';
import { decodeCommandCursor, encodeCommandCursor, listCommandsPage } from '#lib/db/command-list.ts';
import { getOrderItem, type OrderItem } from '#lib/db/order.ts';
import { serverNames } from '#lib/db/server.ts';
import { retrying, writeGuarded } from '#lib/db/transact.ts';
import { buyerDeliveries, finishesInChain, finishInChain, released, reported, resent, restartChain, retried, type BuyerDelivery } from '#lib/domain/delivery.ts';
import { HttpError, notFound } from '#lib/errors.ts';
import type { Command, CommandCursorPage, CommandListQuery, CommandRecord, CommandReport } from '#lib/schemas/command.ts';

/*
 * The operator's side of delivery: reports, retries, resends and the views; and the one way every
 * change of a command is written (`applyChange`), claims' and acks' too (lib/flows/delivery.ts).
 * Calls exclude the credential lookup.
 *
 * | use case                 | calls                                                                                  |
 * |--------------------------|----------------------------------------------------------------------------------------|
 * | report (PATCH), retry    | GetItem + PutItem: 2; finishing a command others wait on: GetItem + chain GetItem +    |
 * |                          | [BatchGet of the released commands] + TransactWrite: 3-4                                |
 * | resend                   | (order GetItem) + BatchGet (commands and their chain) + TransactWrite: 2 (3)           |
 * | get                      | GetItem: 1                                                                              |
 * | list                     | Query (up to 5 with status/server filters); `order` filter: order GetItem + BatchGet: 2 |
 * | order's commands         | GetItem order + BatchGet: 2                                                             |
 *
 * Every write is conditioned on the revision read; a change that lost a race reads again and
 * decides again (`retrying`), so two writers never both act on the same state.
 */

/**
 * Writes `after` over `before` (as read). When the change finishes a command that others wait
 * on, the chain moves in the same transaction and the commands it releases join the queue, so
 * a finished command and its successors can never be seen half done.
 */
export async function applyChange(storeId: number, before: CommandRecord, after: CommandRecord, now: number): Promise<CommandRecord> {
  if (!finishesInChain(before, after)) return saveChange(before, after);
  const chain = await getChain(storeId, before.chain!);
  const moved = finishInChain(chain.entries, [before.id]);
  const freed = moved.released.length === 0 ? [] : await getCommandRecords(storeId, moved.released);
  await writeGuarded([
    ...commandChanges([{ before, after }, ...freed.flatMap((record) => (record ? [{ before: record, after: released(record, now) }] : []))]),
    chainWrite(storeId, { ...chain, entries: moved.entries }),
  ]);
  return { ...after, rev: before.rev + 1 };
}

/** A rule's decision on a command as read: the command to write (null: no change) and what to answer. */
export type Decision<T> = (read: CommandRecord | undefined, now: number) => { next: CommandRecord | null; answer: T };

/**
 * Reads the command (on the first round `first.record`, when the caller has read it already),
 * lets `decide` say what changes, and writes it with `applyChange`; when the command changed in
 * between, reads again and decides again.
 */
export function changeCommand<T>(storeId: number, commandId: number, decide: Decision<T>, first?: { record: CommandRecord | undefined }): Promise<T> {
  let read = first?.record;
  let reread = first === undefined;
  return retrying(async () => {
    if (reread) read = await getCommandRecord(storeId, commandId);
    reread = true;
    const now = currentTimeMs();
    const { next, answer } = decide(read, now);
    if (next) await applyChange(storeId, read!, next, now);
    return answer;
  });
}

function existing(record: CommandRecord | undefined): CommandRecord {
  if (!record) throw notFound('Command');
  return record;
}

/** Changes an existing command (404 otherwise) by `rule`, answering it as changed. */
const changeBy = (storeId: number, commandId: number, rule: (record: CommandRecord, now: number) => CommandRecord) =>
  changeCommand(storeId, commandId, (read, now) => {
    const next = rule(existing(read), now);
    return { next, answer: commandResponse(next) };
  });

/** PATCH /v1/app/command/{id}: the operator reports an execution (lib/domain/delivery.ts `reported`). */
export const reportCommand = (storeId: number, commandId: number, report: CommandReport): Promise<Command> =>
  changeBy(storeId, commandId, (record, now) => reported(record, report, now));

/** POST /v1/app/command/{id}/retry: a FAILED, DEAD or CANCELED command back on the queue with tries 0. */
export const retryCommand = (storeId: number, commandId: number): Promise<Command> => changeBy(storeId, commandId, retried);

export const getCommand = async (storeId: number, commandId: number) => commandResponse(existing(await getCommandRecord(storeId, commandId)));

/**
 * Resend: every command back to PENDING at its own execute_at, their chains restarted, in one
 * transaction (an approval's commands and chain fit one, so a resend does too).
 */
export function resendCommands(storeId: number, commandIds: readonly number[]): Promise<void> {
  // An approval's chain is named after its first command: read with the commands, not after them.
  const expectedChain = commandIds.length === 0 ? [] : [Math.min(...commandIds)];
  return retrying(async () => {
    const { records, chains } = await getCommandsWithChains(storeId, commandIds, expectedChain);
    if (records.some((record) => !record)) throw new Error(`a command of ${commandIds.join(',')} in store ${storeId} is missing`);
    const used = new Set(records.flatMap((record) => (record!.chain === null ? [] : [record!.chain])));
    const restarted = [...chains.values()].filter((chain) => used.has(chain.id)).map((chain) => ({ ...chain, entries: restartChain(chain.entries) }));
    const waiting = new Set(restarted.flatMap((chain) => chain.entries.filter((entry) => entry.state === 'WAITING').map((entry) => entry.id)));
    const now = currentTimeMs();
    await writeGuarded([
      ...commandChanges(records.map((record) => ({ before: record!, after: resent(record!, waiting.has(record!.id), now) }))),
      ...restarted.map((chain) => chainWrite(storeId, chain)),
    ]);
  });
}

/** The commands of an order, in hand-out order (ids are allocated in that order). */
async function commandsOf(storeId: number, order: OrderItem): Promise<CommandRecord[]> {
  const records = await getCommandRecords(storeId, order.command_ids);
  return records.filter((record): record is CommandRecord => record !== undefined).sort((a, b) => a.id - b.id);
}

/** GET /v1/app/order/{id}/command: every command of the order, all stages. */
export async function listOrderCommands(storeId: number, orderId: number): Promise<Command[]> {
  return (await commandsOf(storeId, await getOrderItem(storeId, orderId))).map(commandResponse);
}

/**
 * GET /v1/app/command (cursor mode, newest first). With `order`, the page comes from the order's
 * own command ids (at most 98), never from a filtered walk through the store's history; an order
 * that does not exist simply has no commands.
 */
export async function listCommands(storeId: number, query: CommandListQuery, keys: ServerKeys): Promise<CommandCursorPage> {
  const filters = { status: query.status, server: query.server, order: query.order };
  const cursor = query.page_cursor ?? '';
  if (filters.order === undefined) return listCommandsPage(storeId, filters, cursor, query.page_size, keys);
  const below = cursor === '' ? Number.POSITIVE_INFINITY : decodeCommandCursor(storeId, filters, cursor, keys);
  let order: OrderItem;
  try {
    order = await getOrderItem(storeId, filters.order);
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return { data: [], next_cursor: null };
    throw error;
  }
  const matching = (await commandsOf(storeId, order))
    .filter((record) => record.id < below && (filters.status === undefined || record.status === filters.status))
    .filter((record) => filters.server === undefined || record.server_id === filters.server)
    .reverse();
  const data = matching.slice(0, query.page_size);
  const more = matching.length > query.page_size;
  return { data: data.map(commandResponse), next_cursor: more ? encodeCommandCursor(storeId, filters, data[data.length - 1]!.id, keys) : null };
}

/** What the buyer sees of the order's delivery (never the command text). */
export async function orderDeliveries(storeId: number, order: OrderItem): Promise<BuyerDelivery[]> {
  const records = await commandsOf(storeId, order);
  const names = await serverNames(
    storeId,
    records.flatMap((record) => (record.server_id === null ? [] : [record.server_id])),
  );
  return buyerDeliveries(records, new Map(order.packages.map((line) => [line.package_id, line.name])), names);
}
