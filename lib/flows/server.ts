import { pendingCommandsOf } from '#lib/db/command.ts';
import { deleteServer } from '#lib/db/server.ts';
import { canceled } from '#lib/domain/delivery.ts';
import { changeCommand } from '#lib/flows/command.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';

/**
 * Deleting a game server: the server and its keys go (lib/db/server.ts; 409 while a package's
 * templates name it), then its PENDING commands are canceled, each through the same guarded
 * change as any report, so the commands waiting behind them in their orders are released.
 *
 * | use case | calls (excluding the credential)                                                            |
 * |----------|----------------------------------------------------------------------------------------------|
 * | delete   | DeleteItem + Query keys + [TransactWrite per 50 keys] + Query PENDING (per MB) + per command |
 * |          | PutItem (or chain GetItem + [BatchGet] + TransactWrite)                                      |
 */
const CANCELS_AT_ONCE = 10;

const cancelOne = (storeId: number, serverId: number, first: CommandRecord) =>
  changeCommand(
    storeId,
    first.id,
    // Finished (or run elsewhere) since the list was read: nothing to cancel.
    (read, now) => ({ next: read?.status === 'PENDING' && read.server_id === serverId ? canceled(read, now) : null, answer: undefined }),
    { record: first },
  );

export async function removeServer(storeId: number, serverId: number): Promise<void> {
  await deleteServer(storeId, serverId);
  const pending = await pendingCommandsOf(storeId, serverId);
  for (let start = 0; start < pending.length; start += CANCELS_AT_ONCE) {
    await Promise.all(pending.slice(start, start + CANCELS_AT_ONCE).map((record) => cancelOne(storeId, serverId, record)));
  }
}
