import { pendingCommandsOf } from '#lib/db/command.ts';
import { deleteServer } from '#lib/db/server.ts';
import { afterServerDeleted } from '#lib/domain/delivery.ts';
import { changeCommand } from '#lib/flows/command.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';

/**
 * Deleting a game server: the server and its keys go (lib/db/server.ts; 409 while a package's
 * templates name it), then its PENDING commands are settled (lib/domain/delivery.ts
 * `afterServerDeleted`): the ones bound to it are canceled, each through the same guarded change as
 * any report, so the commands waiting behind them in their orders are released; the any-server ones
 * it claimed last go back to the queue for the store's other servers (extensions section 9).
 *
 * | use case | calls (excluding the credential)                                                            |
 * |----------|----------------------------------------------------------------------------------------------|
 * | delete   | DeleteItem + Query keys + [TransactWrite per 50 keys] + Query PENDING (per MB) + per command |
 * |          | PutItem (or chain GetItem + [BatchGet] + TransactWrite)                                      |
 */
const SETTLED_AT_ONCE = 10;

const settleOne = (storeId: number, serverId: number, first: CommandRecord) =>
  changeCommand(
    storeId,
    first.id,
    // Finished (or claimed by another server) since the list was read: nothing to do.
    (read, now) => ({ next: afterServerDeleted(read, serverId, now), answer: undefined }),
    { record: first },
  );

export async function removeServer(storeId: number, serverId: number): Promise<void> {
  await deleteServer(storeId, serverId);
  const pending = await pendingCommandsOf(storeId, serverId);
  for (let start = 0; start < pending.length; start += SETTLED_AT_ONCE) {
    await Promise.all(pending.slice(start, start + SETTLED_AT_ONCE).map((record) => settleOne(storeId, serverId, record)));
  }
}
