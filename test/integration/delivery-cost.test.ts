import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { commandPuts } from '#lib/db/command.ts';
import { claimCommands } from '#lib/flows/delivery.ts';
import { approvedOrder, createServer } from '../support/delivery.ts';
import { newStore } from '../support/client.ts';
import { capacityMeter } from '../support/capacity.ts';

/**
 * What a claim costs with 10 and with 10,000 due commands queued for other servers and stores:
 * the same calls and the same capacity, because a claim reads only its own two queue partitions.
 * Measured on DynamoDB Local (calls counted, ConsumedCapacity summed as DynamoDB reports it) and
 * printed; docs/integrators/game-servers.md names this test instead of quoting them.
 */
const meter = capacityMeter(db);

const orderOf = (player: string) => ({ client_identifier: player, client_email: 'o@example.com', client_name: player, client_social: null, internal_id: 'x', variables: [] });
const planOf = (server: number | null, offlineExecute: boolean) => ({
  delivery: { package_id: 1, command: offlineExecute ? 'say foreign' : 'give offline player', offline_execute: offlineExecute, delay_seconds: 0 },
  server_id: server,
  stage: 'APPROVED' as const,
  waiting: false,
  releases: false,
});

/** Every item of these commands' approval writes (the commands and the roster entries of their players), each key once. */
function itemsOf(writes: ReturnType<typeof commandPuts>[]) {
  const items = new Map<string, Record<string, unknown>>();
  for (const write of writes.flat()) {
    const item = write.item.Put!.Item!;
    items.set(`${item.pk}\n${item.sk}`, item);
  }
  return [...items.values()];
}

/** `count` due commands for servers other than the claimer's (half in another store). */
async function queueForeign(storeId: number, otherStoreId: number, count: number) {
  const writes = Array.from({ length: count }, (_, index) => {
    const store = index % 2 ? storeId : otherStoreId;
    return commandPuts(store, 1, orderOf('Other'), [planOf(900 + (index % 7), true)], null, 1_000_000 + index, '2020-01-01T00:00:00.000Z');
  });
  await writeAll(itemsOf(writes));
}

/**
 * `count` offline-only commands (`offline_execute: false`) of this server and of any server,
 * older than everything else, for `players` players who are not online.
 */
async function queueOffline(storeId: number, serverId: number, count: number, players: number) {
  const writes = Array.from({ length: count }, (_, index) =>
    commandPuts(storeId, 1, orderOf(`Away${index % players}`), [planOf(index % 3 ? serverId : null, false)], null, 2_000_000 + index, '2020-01-01T00:00:00.000Z'),
  );
  await writeAll(itemsOf(writes));
}

async function writeAll(items: Record<string, unknown>[]) {
  const batches = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  for (let start = 0; start < batches.length; start += 20) {
    await Promise.all(
      batches.slice(start, start + 20).map((batch) => db.send(new BatchWriteCommand({ RequestItems: { [TABLE]: batch.map((Item) => ({ PutRequest: { Item } })) } }))),
    );
  }
}

async function measureClaim(foreign: number) {
  const store = await newStore();
  const other = await newStore();
  const server = await createServer(store);
  await queueForeign(store.storeId, other.storeId, foreign);
  for (let i = 0; i < 5; i++) await approvedOrder(store, [{ command: `mine ${i}`, servers: [server.id] }]);
  const { result: claimed, usage } = await meter.measure(() => claimCommands(store.storeId, server.id, { online: [], limit: 50, lease_seconds: 60 }));
  expect(claimed.commands.map((command) => command.command)).toEqual(['mine 0', 'mine 1', 'mine 2', 'mine 3', 'mine 4']);
  return { foreign, handed_out: claimed.commands.length, ...usage };
}

/**
 * A claim of a server with one player online, behind `offline` older offline-only commands of
 * `players` players who are not: the 5 commands it can run and the online player's one, whatever
 * waits for the others.
 */
async function measureClaimBehindOffline(offline: number, players: number) {
  const store = await newStore();
  const server = await createServer(store);
  await queueOffline(store.storeId, server.id, offline, players);
  for (let i = 0; i < 5; i++) await approvedOrder(store, [{ command: `mine ${i}`, servers: [server.id] }]);
  await approvedOrder(store, [{ command: 'for Here', servers: [server.id], offline_execute: false }], { client_identifier: 'Here' });
  const { result: claimed, usage } = await meter.measure(() => claimCommands(store.storeId, server.id, { online: ['Here', 'Nobody'], limit: 50, lease_seconds: 60 }));
  expect(claimed.commands.map((command) => command.command)).toEqual(['mine 0', 'mine 1', 'mine 2', 'mine 3', 'mine 4', 'for Here']);
  return { offline, players, handed_out: claimed.commands.length, ...usage };
}

describe('a claim is not held up by commands waiting for players who are not online', () => {
  it('hands out every runnable command at the same cost behind 10 and 10,000 offline-only commands, of few players or of many', { timeout: 300_000 }, async () => {
    const few = await measureClaimBehindOffline(10, 5);
    const manyOfFew = await measureClaimBehindOffline(10_000, 5);
    const manyOfMany = await measureClaimBehindOffline(10_000, 5_000);
    console.log(JSON.stringify({ claim_behind_offline: [few, manyOfFew, manyOfMany] }));
    // server UpdateItem + 2 roster Queries + 2 Queries + 1 (the rosters name Here in the server's queue) + 6 Puts + the lease Put
    expect(few.calls).toBe(13);
    expect(manyOfFew).toEqual({ ...few, offline: 10_000 });
    // The rosters (5,000 players) are longer than 40 per online player: both online players' partitions are asked instead.
    expect(manyOfMany.calls).toBe(few.calls + 3);
    expect(manyOfMany.read).toBeLessThanOrEqual(few.read + 2);
    expect(manyOfMany.write).toBe(few.write);
  });
});

describe("the cost of a claim does not grow with other servers' queues", () => {
  it('costs the same with 10 and with 10,000 due commands of other servers and stores', { timeout: 300_000 }, async () => {
    const few = await measureClaim(10);
    const many = await measureClaim(10_000);
    console.log(JSON.stringify({ claim_cost: [few, many] }));
    // server UpdateItem + 2 Queries + 5 conditional Puts + the lease Put
    expect(few.calls).toBe(9);
    expect(many).toEqual({ ...few, foreign: 10_000 });
  });
});
