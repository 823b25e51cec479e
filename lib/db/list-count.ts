import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { storePk } from '#lib/db/keys.ts';
import { isTransactionConflict } from '#lib/db/errors.ts';
import { getMany, queryPages, readItem, type QueryInput, type StartKey } from '#lib/db/query.ts';
import { LIST_COUNT_PK_PREFIX, type IndexName } from '#lib/db/table.ts';
import { check, putNewItem, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { ORDER_STATUSES } from '#lib/schemas/order.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * The `total` of page-mode lists, kept as counters, and pages read with `Limit`: a page costs
 * what it holds (plus a skip for deep pages), not what the store holds.
 *
 * | access pattern                         | key / index                                                     | calls             |
 * |----------------------------------------|-----------------------------------------------------------------|-------------------|
 * | move a count (create, delete, a move    | UpdateItem `COUNT#<s> / <LIST>` `ADD n :delta` (a sharded list: | 0 (joins the      |
 * | between filtered sets)                 | the writer's shard), one write of its own TransactWrite         | transaction)      |
 * | a page's total                         | GetItem `COUNT#<s> / <LIST>`, consistent (a sharded list:       | 1                 |
 * |                                        | BatchGet of it and its shards, consistent)                      |                   |
 * | a page (page 1)                        | Query of the list's key range, `Limit` = limit                  | 1                 |
 * | a page (page N > 1)                    | Query `Select COUNT`, `Limit` = (N-1)*limit (the skip, 1 per MB)| 1 + skip calls    |
 * |                                        | + Query `Limit` = limit from where the skip ended               |                   |
 * | first count of a list (data older than | Query `Select COUNT` of the list (consistent, 1 per MB) +       | 1 per MB + 1      |
 * | its counter)                           | UpdateItem SET n, counted if no move landed meanwhile (a sharded |                   |
 * |                                        | list: TransactWrite of that update + a ConditionCheck per shard) |                   |
 *
 * A counter item is `{n, counted, moves}`. Every write that adds an item to a list or takes one
 * out (a create, a delete, a status change) ADDs to `n` in its own transaction, so the count and
 * the list never disagree: parallel writers queue on the counter item (TransactionConflict is
 * retried, lib/db/transact.ts) and a failed write moves neither. Stores that held items before
 * counters existed have a counter that is absent or not `counted` (ADDs made since are only a
 * delta), so their first read counts the list. That count is stored only if no move landed while
 * it ran, and `n` alone cannot tell (a +1 and a -1 leave it unchanged): each move also raises
 * `moves`, and the store of the count is conditioned on it. Otherwise the reader keeps its fresh
 * answer and stores nothing; the next read counts again. The count is read from the table
 * itself, consistently, never from an index that lags.
 *
 * One counter item may hold several counts, one attribute each (`field`): the order list keeps
 * all orders (`n`) and each status (`n_<STATUS>`, flag `counted_<STATUS>`) in one item (each of its
 * shards likewise), so that a status change adds one item to its transaction, not two (an approval's transaction has room for
 * one, lib/domain/order.ts). Each field is counted, flagged and its moves kept on its own
 * (`counted_<STATUS>`, `moves_<STATUS>`).
 *
 * A counter item is one item every writer of the list updates, and on AWS two transactions on one
 * item at once cancel each other (TransactionConflict): retried, they queue, but a list written
 * many times a second (a store's orders in its busy hour) meets a ceiling (docs/decisions.md,
 * test/bench/contention.ts). Such a list is sharded (`shards`): each write moves the count in one
 * of N shard items (`<LIST>#SHARD#<k>`, chosen by the writer from its item's id, so a status
 * change moves the same shard the create did), and the total is the base item (`<LIST>`) plus
 * the shards, read in one consistent BatchGet. The base keeps what was counted or moved before the
 * shards (a store older than them answers right with no migration) and is the one that carries
 * `counted`: shards hold deltas only. A first count of a sharded list stores `counted - sum of the
 * shards` in the base, in one transaction with a ConditionCheck of every shard's `moves` as read,
 * so a move landing during the count (on any shard) stores nothing, as for one item.
 *
 * Counters live in a partition of their own per store, `COUNT#<s>`, so that the list routes,
 * whose access is `read`, may be granted that one-time write (and the shards' ConditionChecks) on those partitions only
 * (`listCountTableActions`, IAM dynamodb:LeadingKeys), never a write to the store's data.
 */
export const listCounterKey = (storeId: number, list: string) => ({ pk: `${LIST_COUNT_PK_PREFIX}${storeId}`, sk: list });

/** Where a list's items are, in the order pages are cut from; the count reads the table with the same range (and filter). */
export interface ListRange {
  pk: string;
  /** Absent: the whole partition (an index partition holding only the list). */
  skPrefix?: string;
  index?: IndexName;
  descending?: boolean;
}

/**
 * A counted list: its counter's name within the store (one per filter value where a list is
 * filtered by a stored field, e.g. `WITHDRAWAL#PENDING`), the range its pages are read from, and
 * the range (of the table, with an optional filter on stored fields) its first count reads.
 */
export interface CountedList {
  counter: string;
  /** The count's attribute when the counter item holds several (absent: the item's only count, `n`). */
  field?: string;
  /** The shard counters whose counts add to `counter`'s (absent: `counter` alone; see the header). */
  shards?: readonly string[];
  page: ListRange;
  count: ListRange & { index?: undefined; filter?: Pick<QueryCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> };
}

/**
 * The store-wide counted lists, by counter name (each entity module counts under its own name):
 * a new store starts each of them counted at 0 (`startCounted`), so that only stores older than the
 * counters ever pay a first count. A list missing here still answers right, after one count.
 */
export const STORE_WIDE_LISTS = [
  ENTITY.AFFILIATE,
  ENTITY.TAG,
  ENTITY.CATEGORY,
  ENTITY.PACKAGE,
  `${ENTITY.PACKAGE}#ENABLED`,
  ENTITY.PROMO,
  ENTITY.VARIABLE,
  ENTITY.DISCOUNT,
  ENTITY.SERVER,
  ENTITY.WEBHOOK,
  ENTITY.WITHDRAWAL,
  `${ENTITY.WITHDRAWAL}#PENDING`,
  `${ENTITY.WITHDRAWAL}#PAID`,
  `${ENTITY.WITHDRAWAL}#REJECTED`,
] as const;

/** The storefront's enabled packages of one category (lib/db/package.ts); a new category starts it counted at 0. */
export const enabledInCategoryCounter = (categoryId: number) => `${ENTITY.PACKAGE}#ENABLED#${ENTITY.CATEGORY}#${categoryId}`;

/** The storefront's categories with enabled packages, a snapshot (`ListSnapshot`) made old by every package write that moves a category's enabled count. */
export const STOREFRONT_CATEGORIES = `${ENTITY.CATEGORY}#STOREFRONT`;

/**
 * The order list's counts, all orders and each status (see the header): the base item, and the
 * shards every order write moves (16: the modelled ceiling of one store's order writes is 16 times
 * that of one item, test/bench/contention.ts; a total reads 17 small items, 17 read units).
 */
export const ORDER_COUNTER = ENTITY.ORDER;
export const ORDER_COUNT_SHARDS = 16;
/** The shard an order's moves go to: its id's, so its create and every later status change move the same one, and consecutive orders spread over all. */
export const orderCountShard = (orderId: number) => `${ORDER_COUNTER}#SHARD#${orderId % ORDER_COUNT_SHARDS}`;
export const ORDER_COUNT_SHARD_NAMES = Array.from({ length: ORDER_COUNT_SHARDS }, (_, shard) => orderCountShard(shard));
const ORDER_COUNT_FIELDS = [undefined, ...ORDER_STATUSES];

/** The attributes of one count in its counter item: the count and the flag saying it is exact. */
const countAttributes = (field: string | undefined) =>
  field === undefined ? { n: 'n', counted: 'counted', moves: 'moves' } : { n: `n_${field}`, counted: `counted_${field}`, moves: `moves_${field}` };

/** A counter known to be exact from the start, each of its `fields` at 0: written with the item whose creation starts the list (a store, a category). */
export function startCounted(storeId: number, counter: string, fields: readonly (string | undefined)[] = [undefined]): GuardedWrite {
  const counts = Object.fromEntries(
    fields.flatMap((field) => {
      const names = countAttributes(field);
      return [
        [names.n, 0],
        [names.counted, true],
      ];
    }),
  );
  return {
    item: putNewItem({ ...listCounterKey(storeId, counter), ...counts, store_id: storeId }),
    onConditionFailed: () => new Error(`list counter ${counter} of store ${storeId} started twice`),
  };
}

/** The write that moves a list's count, to put in the transaction that adds or removes the item. */
export const countMove = (storeId: number, counter: string, delta: number): GuardedWrite => countMoves(storeId, counter, [{ delta }]);

/** The write that moves several counts of one counter item at once (e.g. an order leaving one status for another). */
export function countMoves(storeId: number, counter: string, moves: readonly { field?: string; delta: number }[]): GuardedWrite {
  const adds = moves.map((_, index) => `#n${index} :d${index}, #m${index} :one`);
  return {
    item: update({
      Key: listCounterKey(storeId, counter),
      UpdateExpression: `ADD ${adds.join(', ')} SET store_id = :store`,
      ExpressionAttributeNames: Object.fromEntries(
        moves.flatMap(({ field }, index) => [
          [`#n${index}`, countAttributes(field).n],
          [`#m${index}`, countAttributes(field).moves],
        ]),
      ),
      ExpressionAttributeValues: { ...Object.fromEntries(moves.map(({ delta }, index) => [`:d${index}`, delta])), ':one': 1, ':store': storeId },
    }),
  };
}

/** A new store's order counts, all exact at 0. */
export const startOrderCounts = (storeId: number): GuardedWrite => startCounted(storeId, ORDER_COUNTER, ORDER_COUNT_FIELDS);

/**
 * Forgets that the order counts are exact (the base's `counted` flags, not the counts): the next
 * read of each total counts the orders once, as for a store older than the counts, and stores
 * the base from it (the admin command `order recount`, for a total left wrong, docs/operations.md).
 */
export async function forgetOrderCounts(storeId: number): Promise<void> {
  const flags = ORDER_COUNT_FIELDS.map((field) => countAttributes(field).counted);
  await writeIf(update({ Key: listCounterKey(storeId, ORDER_COUNTER), UpdateExpression: `REMOVE ${flags.join(', ')}` }));
}

function keyCondition(range: ListRange): QueryInput & { ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  const pkName = range.index ? `${range.index}pk` : 'pk';
  const skName = range.index ? `${range.index}sk` : 'sk';
  const names: Record<string, string> = { '#pk': pkName };
  const values: Record<string, unknown> = { ':pk': range.pk };
  if (range.skPrefix !== undefined) {
    names['#sk'] = skName;
    values[':prefix'] = range.skPrefix;
  }
  return {
    IndexName: range.index,
    KeyConditionExpression: range.skPrefix === undefined ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: !range.descending,
  };
}

/** Every item of the range (with the filter), counted without reading them out: one consistent Query per MB. */
async function countRange(range: CountedList['count']): Promise<number> {
  const base = keyCondition(range);
  let count = 0;
  const pages = queryPages({
    ...base,
    Select: 'COUNT',
    ConsistentRead: true,
    FilterExpression: range.filter?.FilterExpression,
    ExpressionAttributeNames: { ...base.ExpressionAttributeNames, ...range.filter?.ExpressionAttributeNames },
    ExpressionAttributeValues: { ...base.ExpressionAttributeValues, ...range.filter?.ExpressionAttributeValues },
  });
  for await (const page of pages) count += page.Count ?? 0;
  return count;
}

/** The counter items of a list, its base first: one consistent GetItem, or one BatchGet with its shards. */
async function readCounters(storeId: number, list: CountedList): Promise<[Record<string, unknown> | undefined, ...(Record<string, unknown> | undefined)[]]> {
  const base = listCounterKey(storeId, list.counter);
  if (!list.shards?.length) return [await readItem(base, true)];
  const [stored, ...shards] = await getMany([base, ...list.shards.map((shard) => listCounterKey(storeId, shard))]);
  return [stored, ...shards];
}

/** The failed condition of a first count's store: a move landed meanwhile. */
class MovedMeanwhile extends Error {}

/** `attribute = :value` as read, or absent as read: the condition that nothing moved since. */
const asRead = (attribute: string, value: unknown, placeholder: string) =>
  value === undefined ? { condition: `attribute_not_exists(${attribute})`, values: {} } : { condition: `${attribute} = ${placeholder}`, values: { [placeholder]: value } };

/** The list's total: its counter (plus its shards), or (once per list, for data older than counters) a count written to it. */
async function listTotal(storeId: number, list: CountedList): Promise<number> {
  const [stored, ...shards] = await readCounters(storeId, list);
  return listTotalOf(storeId, list, stored, shards);
}

/**
 * The same from the counter item as the caller read it (consistently, `listCounterKey`), in a
 * BatchGet with other items its answer needs; a sharded list's caller passes its shards as read too.
 */
export async function listTotalOf(
  storeId: number,
  list: CountedList,
  stored: Record<string, unknown> | undefined,
  shards: readonly (Record<string, unknown> | undefined)[] = [],
): Promise<number> {
  const names = countAttributes(list.field);
  const moved = shards.reduce((sum, shard) => sum + Number(shard?.[names.n] ?? 0), 0);
  if (stored?.[names.counted] === true) return Number(stored[names.n]) + moved;
  const seen = stored?.[names.n] === undefined ? undefined : Number(stored[names.n]);
  const seenMoves = stored?.[names.moves] === undefined ? undefined : Number(stored[names.moves]);
  const counted = await countRange(list.count);
  // Unchanged since the read: no move at all (`moves`), nor one by a writer older than `moves` (`n`).
  const movesAsRead = asRead('#moves', seenMoves, ':moves');
  const nAsRead = asRead('#n', seen, ':seen');
  const store = update({
    Key: listCounterKey(storeId, list.counter),
    UpdateExpression: 'SET #n = :base, #counted = :true, store_id = :store',
    ConditionExpression: ['attribute_not_exists(#counted)', movesAsRead.condition, nAsRead.condition].join(' AND '),
    ExpressionAttributeNames: { '#n': names.n, '#counted': names.counted, '#moves': names.moves },
    // The shards keep their deltas: the base holds the rest.
    ExpressionAttributeValues: { ':base': counted - moved, ':true': true, ':store': storeId, ...movesAsRead.values, ...nAsRead.values },
  });
  // A failed condition: a write moved the counter while we counted (or another reader counted first): keep the answer, store nothing.
  if (!list.shards?.length) {
    await writeIf(store);
    return counted;
  }
  const shardsUnmoved = list.shards.map((shard, index): GuardedWrite => {
    const shardMoves = asRead('#moves', shards[index]?.[names.moves], ':moves');
    return {
      item: check({
        Key: listCounterKey(storeId, shard),
        ConditionExpression: shardMoves.condition,
        ExpressionAttributeNames: { '#moves': names.moves },
        ...(Object.keys(shardMoves.values).length > 0 ? { ExpressionAttributeValues: shardMoves.values } : {}),
      }),
      onConditionFailed: () => new MovedMeanwhile(),
    };
  });
  try {
    await writeGuarded([{ item: store, onConditionFailed: () => new MovedMeanwhile() }, ...shardsUnmoved]);
  } catch (error) {
    // A move in flight on a shard (TransactionConflict) is a move meanwhile too.
    if (!(error instanceof MovedMeanwhile) && !isTransactionConflict(error)) throw error;
  }
  return counted;
}

/** The most items one skip Query is asked to count (well below DynamoDB's 32-bit `Limit`). */
const SKIP_BATCH_MAX = 1_000_000;

/**
 * The key the page starts after: page N skips (N-1)*limit items with Select COUNT queries (read
 * units for what is skipped, nothing sent back), or null when the list ends before.
 */
async function skipTo(range: ListRange, skip: number): Promise<StartKey | null> {
  let left = skip;
  // `page` may be any positive integer: DynamoDB refuses a Limit past a 32-bit integer, and one
  // COUNT response stops at 1 MB anyway, so a skip beyond the list ends when the range does.
  const pages = queryPages({ ...keyCondition(range), Select: 'COUNT' }, { limit: () => Math.min(left, SKIP_BATCH_MAX) });
  for await (const page of pages) {
    left -= page.Count ?? 0;
    // No key to go on from: the range has nothing after what was skipped.
    if (!page.LastEvaluatedKey) return null;
    if (left <= 0) return page.LastEvaluatedKey;
  }
  return null;
}

/** `limit` items of the range from `startKey` (a response stops at 1 MB: read on until the page is full or the range ends). */
async function readItems(range: ListRange, limit: number, startKey: StartKey | undefined): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(keyCondition(range), { startKey, limit: () => limit - items.length })) {
    items.push(...(page.Items ?? []));
    if (items.length >= limit) break;
  }
  return items;
}

/**
 * Page `page` of a counted list: its items (each through `present`, the entity's reader) and the
 * list's total, the counter read in parallel with the page.
 */
export async function countedPage<T>(
  storeId: number,
  list: CountedList,
  page: number,
  limit: number,
  present: (item: Record<string, unknown>) => T,
): Promise<{ total: number; data: T[] }> {
  const [total, data] = await Promise.all([listTotal(storeId, list), listPageItems(list, page, limit, present)]);
  return { total, data };
}

/** Page `page` of a counted list without its total: for a caller that reads the counter with other items (`listTotalOf`). */
export async function listPageItems<T>(list: CountedList, page: number, limit: number, present: (item: Record<string, unknown>) => T): Promise<T[]> {
  const startKey = page === 1 ? undefined : await skipTo(list.page, (page - 1) * limit);
  return startKey === null ? [] : (await readItems(list.page, limit, startKey)).map(present);
}

/** The list of every `entity` item of a store (`STORE#<s> / <ENTITY>#<id>`), in id order, counted under the entity's name. */
export function storeList(storeId: number, entity: string): CountedList {
  const range = { pk: storePk(storeId), skPrefix: `${entity}#` };
  return { counter: entity, page: range, count: range };
}

/**
 * A list whose set no write can keep counted (the storefront's promos in force follow the clock;
 * the categories with enabled packages follow counts that package writes move) is kept as a
 * snapshot, `COUNT#<s> / <name>`: the ids in the list's order, when it was computed (`at`) and
 * until when it holds (`until`, null: until a write), and `of`, the `version` it was computed at.
 * Every write that may change the set ADDs 1 to `version` in its own transaction
 * (`snapshotBump`); a read whose snapshot is of an older version, or does not hold at its time,
 * computes the set once and stores it conditioned on the version it read (a write meanwhile wins:
 * the next read computes again). In the counters' partition, so a read route may store it.
 */
export interface ListSnapshot {
  ids: number[];
  at: string | null;
  until: string | null;
  of: number;
  version: number;
}

export const snapshotBump = (storeId: number, name: string): GuardedWrite => ({
  item: update({
    Key: listCounterKey(storeId, name),
    UpdateExpression: 'ADD #version :one SET store_id = :store',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':one': 1, ':store': storeId },
  }),
});

/** The snapshot as stored (never computed: no ids, `of` -1). */
export async function readSnapshot(storeId: number, name: string): Promise<ListSnapshot> {
  const item = await readItem(listCounterKey(storeId, name), true);
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    ids: Array.isArray(item?.ids) ? item.ids.map(Number) : [],
    at: text(item?.at),
    until: text(item?.until),
    of: typeof item?.of === 'number' ? item.of : -1,
    version: typeof item?.version === 'number' ? item.version : 0,
  };
}

/** Whether the snapshot answers at `now`: computed at its version, for a time not after now, not past `until`. */
export const snapshotHolds = (snapshot: ListSnapshot, now: number) =>
  snapshot.of === snapshot.version && snapshot.at !== null && Date.parse(snapshot.at) <= now && (snapshot.until === null || Date.parse(snapshot.until) > now);

/** Stores a snapshot computed at `version`, unless a write landed meanwhile (then false: nothing stored). */
export const storeSnapshot = (storeId: number, name: string, snapshot: Omit<ListSnapshot, 'of'>): Promise<boolean> =>
  writeIf(
    update({
      Key: listCounterKey(storeId, name),
      UpdateExpression: 'SET ids = :ids, #at = :at, #until = :until, #of = :version, store_id = :store',
      ConditionExpression: snapshot.version === 0 ? 'attribute_not_exists(#version) OR #version = :version' : '#version = :version',
      ExpressionAttributeNames: { '#at': 'at', '#until': 'until', '#of': 'of', '#version': 'version' },
      ExpressionAttributeValues: { ':ids': snapshot.ids, ':at': snapshot.at, ':until': snapshot.until, ':version': snapshot.version, ':store': storeId },
    }),
  );
