import { fieldsOf, getMany, readItem, type Fields, type StoredItem } from '#lib/db/entity.ts';
import { entitySk, padId, storePk } from '#lib/db/keys.ts';
import { queryItems, queryPage, queryPages, type QueryInput } from '#lib/db/query.ts';
import { allocateIds } from '#lib/db/sequence.ts';
import { forgetRosterEntry, INDEX_SETTLE_MS, rosterOf, rosterWrite, type RosterEntry } from '#lib/db/offline-roster.ts';
import { put, putNewItem, StaleRead, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import {
  COMMAND_STATUSES,
  type Chain,
  type ChainEntry,
  type Command,
  type CommandRecord,
  type PlannedCommand,
  type QueuedCommand,
  type QueuedCommandOrder,
} from '#lib/schemas/command.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { COMMAND_STAGES } from '#lib/schemas/package.ts';

/**
 * Delivery commands: what an approved order asks the store's game servers to run, and the chain
 * items that order them. The rules (what a claim, an ack, a report changes) are in
 * lib/domain/delivery.ts; this module stores whole command records, each write conditioned on the
 * revision it read (`rev`), and derives every index attribute from the record it writes.
 *
 * | access pattern                          | key / index                                                                  | calls    |
 * |-----------------------------------------|------------------------------------------------------------------------------|----------|
 * | ids for an approval's commands          | `STORE#<s> / #SEQ#COMMAND`, one `ADD n`                                        | 1        |
 * | create (on approval)                    | Put `STORE#<s> / COMMAND#<id>` (+ the chain item) in the approval's TransactWrite | 0 extra |
 * | get, get many                           | GetItem / BatchGetItem `COMMAND#<id>` (consistent)                            | 1        |
 * | claim queue of a server, due first      | Query gsi2 `STORE#<s>#QUEUE#SERVER#<id>` and `STORE#<s>#QUEUE#ANY`, gsi2sk `<claimable at>#<id>` < `<now>$` | 2 per page |
 * | ... offline-only, of the online players | roster Query per queue (lib/db/offline-roster.ts), then Query gsi2 `<queue>#PLAYER#<client_identifier>` per online player on it | 2 + 1 per such player |
 * | operator's view: PENDING and due        | Query gsi1 `STORE#<s>#COMMAND#PENDING`, gsi1sk `<execute_at>#<id>`, until 500 or 5 MB | 1 per MB |
 * | list, newest first                      | lib/db/command-list.ts                                                        |          |
 * | a change (claim, ack, report, retry)    | Put conditioned on `rev` (in a TransactWrite when the chain moves)           | 1        |
 * | PENDING commands of a server           | Query gsi1 `STORE#<s>#COMMAND#PENDING` + FilterExpression `server_id`         | 1 per MB |
 * | chain of a batch                        | `STORE#<s> / COMMAND_CHAIN#<first id>`, Put conditioned on its `rev`          | 1 + 1    |
 * | an order's commands and their chain     | one BatchGetItem: the commands and `COMMAND_CHAIN#<first command id>` (an approval's chain is named after its first command) | 1 |
 *
 * Both indexes are sparse. gsi1 holds every PENDING command (the operator's view). gsi2 holds the
 * claimable ones: PENDING and released from the chain, in the partition of the server their template
 * named, or ANY's for a command of any server (for good: a claim binds it to the claimer only while
 * the lease lives, extensions section 9), sorted by when a claim may take them: `execute_at`, or the
 * end of the lease that holds them. A lease therefore needs no separate expiry sweep: a lapsed
 * lease's command is simply due again, in ANY's partition for every server of the store when it is
 * an any-server command. A claim reads only its own two partitions, so its cost follows what it
 * hands out, not how many commands other servers or stores have queued. A command with
 * `offline_execute: false` is queued apart, in a partition of its queue per player
 * (`<queue>#PLAYER#<client_identifier>`), and a claim reads only the partitions of the players it
 * reports online that the queue's roster names (or, when the roster is much longer than the online
 * list, of every online player): thousands of commands waiting for offline players are never read,
 * and never stand before the ones a claim can run.
 *
 * A command carries a copy of its order's client fields and variables (`order`), so the queue
 * answers without reading orders; an order's client fields never change after it is placed.
 */
export const COMMAND = ENTITY.COMMAND;
const CHAIN = ENTITY.COMMAND_CHAIN;
/** The operator's view answers at most this many commands, and stops before 5 MB (a Lambda answers at most 6). */
export const QUEUE_MAX = 500;
export const QUEUE_BYTES_MAX = 5_000_000;

export const commandKey = (storeId: number, commandId: number) => ({ pk: storePk(storeId), sk: entitySk(COMMAND, commandId) });
const chainKey = (storeId: number, chainId: number) => ({ pk: storePk(storeId), sk: entitySk(CHAIN, chainId) });
const pendingPk = (storeId: number) => `${storePk(storeId)}#${COMMAND}#PENDING`;
export const queuePk = (storeId: number, serverId: number | null) => `${storePk(storeId)}#QUEUE#${serverId === null ? 'ANY' : `${ENTITY.SERVER}#${serverId}`}`;
const claimableAt = (record: CommandRecord) => (record.lease_until !== null && record.lease_until > record.execute_at ? record.lease_until : record.execute_at);
const queueSk = (record: CommandRecord) => `${claimableAt(record)}#${padId(record.id)}`;
const playerQueuePk = (queue: string, player: string) => `${queue}#PLAYER#${player}`;

/** Where a claimable offline-only command waits: its queue (server or ANY) and its player; null for any other record. */
function offlinePlace(record: CommandRecord): { queue: string; player: string } | null {
  if (record.status !== 'PENDING' || record.waiting || record.offline_execute) return null;
  return { queue: queuePk(record.store_id, record.any_server ? null : record.server_id), player: record.order.client_identifier };
}

/**
 * The index attributes of a record: present exactly while it is PENDING (gsi1) and claimable (gsi2).
 * An any-server command stays in ANY's queue whoever claimed it last (its `server_id`), so that once
 * that claimer's lease lapses any server of the store may claim it again.
 */
function indexAttributes(record: CommandRecord): Record<string, string> {
  if (record.status !== 'PENDING') return {};
  const pending = { gsi1pk: pendingPk(record.store_id), gsi1sk: `${record.execute_at}#${padId(record.id)}` };
  if (record.waiting) return pending;
  const offline = offlinePlace(record);
  const queue = offline ? playerQueuePk(offline.queue, offline.player) : queuePk(record.store_id, record.any_server ? null : record.server_id);
  return { ...pending, gsi2pk: queue, gsi2sk: queueSk(record) };
}

const orderFromFields = (field: Fields): QueuedCommandOrder => ({
  client_identifier: field.string('client_identifier'),
  client_email: field.string('client_email'),
  client_name: field.string('client_name'),
  client_social: field.stringOrNull('client_social'),
  internal_id: field.string('internal_id'),
  variables: field.objects('variables', (variable) => ({ name: variable.string('name'), value: variable.string('value') })),
});

/** A stored command; commands stored before servers, stages, chains and leases existed read as any-server, APPROVED, unchained, unleased. */
export function commandFromItem(item: StoredItem): CommandRecord {
  const field = fieldsOf(item, COMMAND);
  const serverId = field.numberOrNull('server_id');
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    order_id: field.number('order_id'),
    package_id: field.number('package_id'),
    command: field.string('command'),
    offline_execute: field.boolean('offline_execute'),
    execute_at: field.string('execute_at'),
    status: field.oneOf('status', COMMAND_STATUSES),
    tries: field.number('tries'),
    response: field.stringOrNull('response'),
    server_id: serverId,
    stage: field.oneOf('stage', COMMAND_STAGES, 'APPROVED'),
    attempt: field.number('attempt', 0),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
    order: field.object('order', orderFromFields),
    any_server: field.boolean('any_server', serverId === null),
    chain: field.numberOrNull('chain'),
    releases: field.boolean('releases', false),
    waiting: field.boolean('waiting', false),
    lease_id: field.stringOrNull('lease_id'),
    lease_until: field.stringOrNull('lease_until'),
    acked: field.boolean('acked', false),
    rev: field.number('rev', 0),
  };
}

export const commandResponse = (record: CommandRecord): Command => ({
  id: record.id,
  store_id: record.store_id,
  order_id: record.order_id,
  package_id: record.package_id,
  command: record.command,
  offline_execute: record.offline_execute,
  execute_at: record.execute_at,
  status: record.status,
  tries: record.tries,
  response: record.response,
  server_id: record.server_id,
  stage: record.stage,
  attempt: record.attempt,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

/** The command as the delivery queue hands it out. */
export const queuedCommandResponse = (record: CommandRecord): QueuedCommand => ({
  id: record.id,
  store_id: record.store_id,
  command: record.command,
  offline_execute: record.offline_execute,
  execute_at: record.execute_at,
  order: record.order,
});

const CHAIN_STATES = ['WAITING', 'RELEASED', 'FINAL'] as const satisfies readonly ChainEntry['state'][];

export function chainFromItem(item: StoredItem, chainId: number): Chain {
  const field = fieldsOf(item, CHAIN);
  const entries = field.objects('entries', (entry) => ({ id: entry.number('id'), server: entry.numberOrNull('server'), state: entry.oneOf('state', CHAIN_STATES) }));
  return { id: chainId, entries, rev: field.number('rev') };
}

/** The ids of an approval's `count` commands (consecutive, one ADD); returns the first. */
export const allocateCommandIds = (storeId: number, count: number) => allocateIds(storeId, COMMAND, count);

/**
 * The Puts of an approval's commands (ids from `firstId` on, in hand-out order) and of their
 * chain item when some of them wait, for the approval's transaction.
 */
export function commandPuts(
  storeId: number,
  orderId: number,
  order: QueuedCommandOrder,
  plan: readonly PlannedCommand[],
  chain: readonly ChainEntry[] | null,
  firstId: number,
  approvedAt: string,
): GuardedWrite[] {
  const records = plan.map((planned, index): CommandRecord => {
    const id = firstId + index;
    const record: CommandRecord = {
      id,
      store_id: storeId,
      order_id: orderId,
      package_id: planned.delivery.package_id,
      command: planned.delivery.command,
      offline_execute: planned.delivery.offline_execute,
      execute_at: new Date(Date.parse(approvedAt) + planned.delivery.delay_seconds * 1000).toISOString(),
      status: 'PENDING',
      tries: 0,
      response: null,
      server_id: planned.server_id,
      stage: planned.stage,
      attempt: 0,
      created_at: approvedAt,
      updated_at: approvedAt,
      order,
      any_server: planned.server_id === null,
      chain: chain ? firstId : null,
      releases: planned.releases,
      waiting: planned.waiting,
      lease_id: null,
      lease_until: null,
      acked: false,
      rev: 0,
    };
    return record;
  });
  const puts = records.map(
    (record): GuardedWrite => ({
      item: putNewItem({ ...commandKey(storeId, record.id), entity: COMMAND, ...indexAttributes(record), ...record }),
      onConditionFailed: () => new Error(`command id ${record.id} allocated twice in store ${storeId}`),
    }),
  );
  const all = [
    ...puts,
    ...rosterWrites(
      storeId,
      records.flatMap((record) => offlinePlace(record) ?? []),
      approvedAt,
    ),
  ];
  if (!chain) return all;
  return [...all, chainWrite(storeId, { id: firstId, entries: [...chain], rev: -1 })];
}

/** The consistent read of one command (undefined when missing). */
export async function getCommandRecord(storeId: number, commandId: number): Promise<CommandRecord | undefined> {
  const item = await readItem(commandKey(storeId, commandId), true);
  return item ? commandFromItem(item) : undefined;
}

/** Commands by id, in the order asked (undefined where missing); one BatchGetItem per 100. */
export async function getCommandRecords(storeId: number, commandIds: readonly number[]): Promise<(CommandRecord | undefined)[]> {
  const items = await getMany(commandIds.map((id) => commandKey(storeId, id)));
  return items.map((item) => (item ? commandFromItem(item) : undefined));
}

/**
 * Commands by id and the chains the caller expects them in, in one BatchGetItem (per 100 keys):
 * the commands in the order asked (undefined where missing), the chains found by id. A command
 * naming a chain that was not asked for still gets it, in one more read.
 */
export async function getCommandsWithChains(
  storeId: number,
  commandIds: readonly number[],
  expectedChainIds: readonly number[],
): Promise<{ records: (CommandRecord | undefined)[]; chains: Map<number, Chain> }> {
  const items = await getMany([...commandIds.map((id) => commandKey(storeId, id)), ...expectedChainIds.map((id) => chainKey(storeId, id))]);
  const records = items.slice(0, commandIds.length).map((item) => (item ? commandFromItem(item) : undefined));
  const chains = new Map<number, Chain>();
  items.slice(commandIds.length).forEach((item, index) => {
    if (item) chains.set(expectedChainIds[index]!, chainFromItem(item, expectedChainIds[index]!));
  });
  for (const chainId of new Set(records.flatMap((record) => (record?.chain == null ? [] : [record.chain])))) {
    if (!chains.has(chainId)) chains.set(chainId, await getChain(storeId, chainId));
  }
  return { records, chains };
}

/** Written only if nobody wrote the command since `readRev` was read. */
const revisionCondition = (readRev: number) => ({
  ConditionExpression: readRev === 0 ? 'attribute_exists(pk) AND (attribute_not_exists(rev) OR rev = :rev)' : 'rev = :rev',
  ExpressionAttributeValues: { ':rev': readRev },
});

function commandItem(record: CommandRecord, readRev: number) {
  return { ...commandKey(record.store_id, record.id), entity: COMMAND, ...indexAttributes(record), ...record, rev: readRev + 1 };
}

/** The command as changed from the revision read, for a transaction; StaleRead when it changed meanwhile. */
export function commandWrite(record: CommandRecord, readRev: number): GuardedWrite {
  return {
    item: put({ Item: commandItem(record, readRev), ...revisionCondition(readRev) }),
    onConditionFailed: () => new StaleRead(),
  };
}

/** The roster entries for `places`, one per queue and player (a transaction may name an item once). */
function rosterWrites(storeId: number, places: readonly { queue: string; player: string }[], at: string): GuardedWrite[] {
  const distinct = new Map(places.map((place) => [`${place.queue}\n${place.player}`, place]));
  return [...distinct.values()].map((place) => rosterWrite(storeId, place.queue, place.player, at));
}

/** Where `after` joins a player's queue partition it was not in (a claim, an ack, a backoff keep it where it was). */
function joinedPlace(before: CommandRecord, after: CommandRecord) {
  const place = offlinePlace(after);
  const was = offlinePlace(before);
  return place !== null && (was === null || was.queue !== place.queue || was.player !== place.player) ? [place] : [];
}

/**
 * The writes of changes from `before` (as read) to `after`, for one transaction: the commands, and
 * the roster entry of each player's queue that an offline-only command joins.
 */
export function commandChanges(changes: readonly { before: CommandRecord; after: CommandRecord }[]): GuardedWrite[] {
  const writes = changes.map(({ before, after }) => commandWrite(after, before.rev));
  const joined = changes.flatMap(({ before, after }) => joinedPlace(before, after));
  return joined.length === 0 ? writes : [...writes, ...rosterWrites(changes[0]!.after.store_id, joined, changes[0]!.after.updated_at)];
}

/** The same change alone (one PutItem, half a transaction's cost, unless it joins a player's queue); StaleRead when the command changed meanwhile. */
export async function saveChange(before: CommandRecord, after: CommandRecord): Promise<CommandRecord> {
  await writeGuarded(commandChanges([{ before, after }]));
  return { ...after, rev: before.rev + 1 };
}

export async function getChain(storeId: number, chainId: number): Promise<Chain> {
  const item = await readItem(chainKey(storeId, chainId), true);
  if (!item) throw new Error(`chain ${chainId} of store ${storeId} is missing`);
  return chainFromItem(item, chainId);
}

/** The chain as changed from `chain.rev` (-1: a new chain); StaleRead when another change of the batch came first. */
export function chainWrite(storeId: number, chain: Chain): GuardedWrite {
  const fresh = chain.rev < 0;
  return {
    item: put({
      Item: { ...chainKey(storeId, chain.id), entity: CHAIN, store_id: storeId, entries: chain.entries, rev: chain.rev + 1 },
      ConditionExpression: fresh ? 'attribute_not_exists(pk)' : 'rev = :rev',
      ...(fresh ? {} : { ExpressionAttributeValues: { ':rev': chain.rev } }),
    }),
    onConditionFailed: () => (fresh ? new Error(`chain ${chain.id} of store ${storeId} written twice`) : new StaleRead()),
  };
}

/** `<now>$` sorts after every `<now>#<id>` and before any later timestamp. */
const dueBefore = (now: string) => `${now}$`;

/** A claim reads the roster of a queue only while it is at most this many entries per online player; beyond, it asks per online player. */
const ROSTER_PER_ONLINE = 40;
/** Player partitions a claim reads at once. */
const PARTITIONS_AT_ONCE = 32;

interface QueuePartition {
  pk: string;
  /** For a player's partition found through the roster: the entry to forget if the partition is empty. */
  roster?: { queue: string; entry: RosterEntry };
}

/** The online players whose partitions of `queue` may hold commands: the roster's, unless it is much longer than the online list. */
async function onlinePartitions(queue: string, online: ReadonlySet<string>): Promise<QueuePartition[]> {
  const roster = await rosterOf(queue, ROSTER_PER_ONLINE * online.size);
  if (roster === null) return [...online].map((player) => ({ pk: playerQueuePk(queue, player) }));
  return roster.filter((entry) => online.has(entry.player)).map((entry) => ({ pk: playerQueuePk(queue, entry.player), roster: { queue, entry } }));
}

export interface ClaimQueue {
  /** The due commands, oldest first, read a page of `pageSize` per partition at a time, only as far as the caller iterates. */
  commands: AsyncGenerator<CommandRecord>;
  /** Forgets the roster entries of online players whose partitions were found empty (written long enough ago to be in the index). */
  settle(): Promise<void>;
}

/**
 * The claim queue of a server: its partition and ANY's, and the partitions of the offline-only
 * commands of the players it reports `online` (nobody online: the two partitions alone).
 */
export async function claimQueue(storeId: number, serverId: number, online: ReadonlySet<string>, now: string, pageSize: number): Promise<ClaimQueue> {
  const queues = [queuePk(storeId, serverId), queuePk(storeId, null)];
  const players = online.size === 0 ? [] : (await Promise.all(queues.map((queue) => onlinePartitions(queue, online)))).flat();
  const readers = [...queues.map((pk): QueuePartition => ({ pk })), ...players].map((partition) => {
    const query: QueryInput = {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :queue AND gsi2sk < :due',
      ExpressionAttributeValues: { ':queue': partition.pk, ':due': dueBefore(now) },
    };
    return { partition, pages: queryPages(query, { limit: () => pageSize }), buffer: [] as CommandRecord[], done: false, empty: true };
  });
  type Reader = (typeof readers)[number];
  const fill = async (reader: Reader) => {
    if (reader.buffer.length > 0 || reader.done) return;
    const next = await reader.pages.next();
    if (next.done) {
      reader.done = true;
      return;
    }
    reader.buffer = (next.value.Items ?? []).map(commandFromItem);
    if (reader.buffer.length > 0) reader.empty = false;
    reader.done = !next.value.LastEvaluatedKey;
  };
  async function* commands(): AsyncGenerator<CommandRecord> {
    for (;;) {
      for (let start = 0; start < readers.length; start += PARTITIONS_AT_ONCE) await Promise.all(readers.slice(start, start + PARTITIONS_AT_ONCE).map(fill));
      const heads = readers.filter((reader) => reader.buffer.length > 0);
      if (heads.length === 0) return;
      const oldest = heads.reduce((a, b) => (queueSk(a.buffer[0]!) <= queueSk(b.buffer[0]!) ? a : b));
      yield oldest.buffer.shift()!;
    }
  }
  const settle = async () => {
    const settledBefore = new Date(Date.parse(now) - INDEX_SETTLE_MS).toISOString();
    const stale = readers.flatMap((reader) =>
      reader.done && reader.empty && reader.partition.roster && reader.partition.roster.entry.touched_at < settledBefore ? [reader.partition] : [],
    );
    await Promise.all(
      stale.map(async (partition) => {
        // Empty of due commands; a leased or backing-off one is still queued (later), and keeps the entry.
        const page = await queryPage({ IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :queue', ExpressionAttributeValues: { ':queue': partition.pk } }, undefined, 1);
        if ((page.Items ?? []).length === 0) await forgetRosterEntry(partition.roster!.queue, partition.roster!.entry);
      }),
    );
  };
  return { commands: commands(), settle };
}

/** The operator's view: PENDING commands whose execute_at has come, oldest first, at most QUEUE_MAX and under QUEUE_BYTES_MAX of JSON. */
export async function listQueuedCommands(storeId: number, now: string): Promise<QueuedCommand[]> {
  const commands: QueuedCommand[] = [];
  // The array's brackets and commas.
  let bytes = 2;
  const pages = queryPages(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pending AND gsi1sk < :due',
      ExpressionAttributeValues: { ':pending': pendingPk(storeId), ':due': dueBefore(now) },
    },
    { limit: () => QUEUE_MAX - commands.length },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const queued = queuedCommandResponse(commandFromItem(item));
      bytes += Buffer.byteLength(JSON.stringify(queued), 'utf8') + 1;
      if (bytes > QUEUE_BYTES_MAX) return commands;
      commands.push(queued);
    }
    if (commands.length >= QUEUE_MAX) break;
  }
  return commands;
}

/**
 * The PENDING commands of one server, bound to it or claimed by it last (to settle when it is
 * deleted, lib/flows/server.ts): the store's PENDING commands filtered by server, one Query per MB.
 * Deleting a server is rare; no index is kept for it.
 */
export async function pendingCommandsOf(storeId: number, serverId: number): Promise<CommandRecord[]> {
  const items = await queryItems({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pending',
    FilterExpression: 'server_id = :server',
    ExpressionAttributeValues: { ':pending': pendingPk(storeId), ':server': serverId },
  });
  return items.map(commandFromItem);
}
