import { fieldsOf, type StoredItem } from '#lib/db/entity.ts';
import { queryPages } from '#lib/db/query.ts';
import { put, remove, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/*
 * The roster of a claim queue: which players have offline-only commands in it (lib/db/command.ts
 * keeps those commands apart, one queue partition per player, so that a claim never reads the
 * commands of players who are not online).
 *
 * | access pattern                      | key                                                                  | calls             |
 * |-------------------------------------|----------------------------------------------------------------------|-------------------|
 * | a player's command joins the queue  | Put `<queue>#OFFLINE_PLAYER / OFFLINE_PLAYER#<client_identifier>`, in the command's write | 0 extra (1 item) |
 * | the queue's players, up to n         | Query `<queue>#OFFLINE_PLAYER`, Limit n + 1                           | 1 per 1 MB        |
 * | forget a player with no command left | Delete conditioned on the `touched_at` read                          | 1                 |
 *
 * An entry is written whenever a command enters the player's queue partition (approval, chain
 * release, retry, resend, an operator's PENDING report), never when a command leaves it, so an
 * entry may outlive its commands: a claim that finds the partition of an online player empty
 * forgets the entry, conditioned on the `touched_at` it read (a command that joined meanwhile
 * wrote a newer one) and only when that is older than INDEX_SETTLE_MS (the command index is
 * eventually consistent: a command written a moment ago may not be in it yet).
 */
export const INDEX_SETTLE_MS = 60_000;

const rosterPk = (queue: string) => `${queue}#${ENTITY.OFFLINE_PLAYER}`;
export const rosterKey = (queue: string, player: string) => ({ pk: rosterPk(queue), sk: `${ENTITY.OFFLINE_PLAYER}#${player}` });

export interface RosterEntry {
  player: string;
  touched_at: string;
}

export const rosterEntryFromItem = (item: StoredItem): RosterEntry => {
  const field = fieldsOf(item, ENTITY.OFFLINE_PLAYER);
  return { player: field.string('player'), touched_at: field.string('touched_at') };
};

/** The entry of `player` in `queue`, (re)written by the write that puts one of the player's commands there. */
export const rosterWrite = (storeId: number, queue: string, player: string, at: string): GuardedWrite => ({
  item: put({ Item: { ...rosterKey(queue, player), entity: ENTITY.OFFLINE_PLAYER, store_id: storeId, player, touched_at: at } }),
});

/** The players of `queue`, or null when it holds more than `max` (reading them would cost more than asking per player). */
export async function rosterOf(queue: string, max: number): Promise<RosterEntry[] | null> {
  const entries: RosterEntry[] = [];
  const pages = queryPages({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': rosterPk(queue) } }, { limit: () => max + 1 - entries.length });
  for await (const page of pages) {
    entries.push(...(page.Items ?? []).map(rosterEntryFromItem));
    if (entries.length > max) return null;
  }
  return entries;
}

/** Forgets `entry` unless a command joined the queue since it was read; false when one did. */
export const forgetRosterEntry = (queue: string, entry: RosterEntry): Promise<boolean> =>
  writeIf(
    remove({
      Key: rosterKey(queue, entry.player),
      ConditionExpression: 'touched_at = :read',
      ExpressionAttributeValues: { ':read': entry.touched_at },
    }),
  );
