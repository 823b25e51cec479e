import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { commandPuts } from '#lib/db/command.ts';
import { claimCommands } from '#lib/flows/delivery.ts';
import { approvedOrder, createServer } from '../support/delivery.ts';
import { newStore } from '../support/client.ts';

/**
 * What a claim costs with 10 and with 10,000 due commands queued for other servers and stores:
 * the same calls and the same capacity, because a claim reads only its own two queue partitions.
 * Measured on DynamoDB Local (calls counted, ConsumedCapacity summed as DynamoDB reports it) and
 * printed; docs/integrators/game-servers.md names this test instead of quoting them.
 */
const usage = { calls: 0, read: 0, write: 0 };
let measuring = false;
db.middlewareStack.add(
  (next, context) => async (args) => {
    if (!measuring) return next(args);
    usage.calls += 1;
    (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
    // DynamoDB Local reports only CapacityUnits (table and indexes together): the operation says which kind.
    const reads = /^(Get|BatchGet|Query)/.test(context.commandName ?? '');
    for (const entry of [consumed ?? []].flat() as { CapacityUnits?: number }[]) usage[reads ? 'read' : 'write'] += entry.CapacityUnits ?? 0;
    return result;
  },
  { step: 'initialize', name: 'measureConsumedCapacity' },
);

/** `count` due commands for servers other than the claimer's (half in another store). */
async function queueForeign(storeId: number, otherStoreId: number, count: number) {
  const order = { client_identifier: 'Other', client_email: 'o@example.com', client_name: 'Other', client_social: null, internal_id: 'x', variables: [] };
  const plan = (server: number) => ({
    delivery: { package_id: 1, command: 'say foreign', offline_execute: true, delay_seconds: 0 },
    server_id: server,
    stage: 'APPROVED' as const,
    waiting: false,
    releases: false,
  });
  const items = Array.from({ length: count }, (_, index) => {
    const store = index % 2 ? storeId : otherStoreId;
    const [put] = commandPuts(store, 1, order, [plan(900 + (index % 7))], null, 1_000_000 + index, '2020-01-01T00:00:00.000Z');
    return put!.item.Put!.Item!;
  });
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
  Object.assign(usage, { calls: 0, read: 0, write: 0 });
  measuring = true;
  const claimed = await claimCommands(store.storeId, server.id, { online: [], limit: 50, lease_seconds: 60 });
  measuring = false;
  expect(claimed.commands.map((command) => command.command)).toEqual(['mine 0', 'mine 1', 'mine 2', 'mine 3', 'mine 4']);
  return { foreign, handed_out: claimed.commands.length, ...usage };
}

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
