import { BatchGetCommand, GetCommand, QueryCommand, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import type { IndexName } from '#lib/db/table.ts';
import { unavailable } from '#lib/errors.ts';

/**
 * The one loop over a Query's pages (test/unit/layers.test.ts fails on `ExclusiveStartKey`
 * anywhere else in lib/db). Every list, count and skip reads through `queryPages`; `queryAll`
 * and `queryBetween` are its two common shapes.
 */
export type QueryInput = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;

/** The item under `key` (consistent when asked), raw, or undefined (lib/db/entity.ts re-exports it beside its typed single reads). */
export async function readItem(key: { pk: string; sk: string }, consistent = false): Promise<Record<string, unknown> | undefined> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: key, ...(consistent ? { ConsistentRead: true } : {}) }));
  return result.Item;
}
/** BatchGetItem takes at most 100 keys a call. */
const BATCH_GET_MAX = 100;

/**
 * Items by key, in key order (undefined where absent): one consistent BatchGetItem per 100 keys
 * (eventually consistent, at half the read units, with `consistent: false`), asking again for the
 * keys DynamoDB leaves unprocessed under throttling. Still unprocessed after five tries: 503, like
 * any throttled call. Items are raw (keys included).
 */
export async function getMany(keys: readonly { pk: string; sk: string }[], { consistent = true } = {}): Promise<(Record<string, unknown> | undefined)[]> {
  const found = new Map<string, Record<string, unknown>>();
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX) {
    let pending: Record<string, unknown>[] = keys.slice(start, start + BATCH_GET_MAX);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 5) throw unavailable();
      const result = await db.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: pending, ConsistentRead: consistent } } }));
      for (const item of result.Responses?.[TABLE] ?? []) found.set(`${String(item.pk)}|${String(item.sk)}`, item);
      pending = result.UnprocessedKeys?.[TABLE]?.Keys ?? [];
    }
  }
  return keys.map((key) => found.get(`${key.pk}|${key.sk}`));
}

export type StartKey = Record<string, unknown>;

export interface PagingOptions {
  /** Where to start (a page's LastEvaluatedKey); the range's beginning without it. */
  startKey?: StartKey;
  /** The Limit of the next page, asked before each one (what is still wanted); none when undefined. */
  limit?: () => number | undefined;
}

/**
 * The pages of a Query, one call each, following LastEvaluatedKey for as long as the caller
 * iterates: a caller that has enough stops (`break`), and no further page is read. The last page
 * is the one without a LastEvaluatedKey.
 */
export async function* queryPages(input: QueryInput, options: PagingOptions = {}): AsyncGenerator<QueryCommandOutput> {
  let startKey = options.startKey;
  do {
    const page = await db.send(new QueryCommand({ TableName: TABLE, ...input, Limit: options.limit?.(), ExclusiveStartKey: startKey }));
    yield page;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** One page of a Query from `startKey` (with at most `limit` items examined). */
export async function queryPage(input: QueryInput, startKey?: StartKey, limit?: number): Promise<QueryCommandOutput> {
  const first = await queryPages(input, { startKey, limit: () => limit }).next();
  // The pages always begin with one: only after it can they end.
  if (first.done) throw new Error('a Query answered no page');
  return first.value;
}

/** Every item of a Query (one call per 1 MB read). */
export async function queryItems(input: QueryInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(input)) items.push(...(page.Items ?? []));
  return items;
}

interface PrefixQuery {
  /** Partition key value (of the table, or of the index when `index` is set). */
  pk: string;
  /** Sort keys beginning with this prefix. */
  skPrefix: string;
  index?: IndexName;
  /** Newest/highest first. */
  descending?: boolean;
  filter?: Pick<QueryCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>;
}

/**
 * Every item under one partition and sort-key prefix, following LastEvaluatedKey.
 * One Query call per 1 MB of items read.
 */
export function queryAll(query: PrefixQuery): Promise<Record<string, unknown>[]> {
  const pkName = query.index ? `${query.index}pk` : 'pk';
  const skName = query.index ? `${query.index}sk` : 'sk';
  return queryItems({
    IndexName: query.index,
    KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
    FilterExpression: query.filter?.FilterExpression,
    ExpressionAttributeNames: { '#pk': pkName, '#sk': skName, ...query.filter?.ExpressionAttributeNames },
    ExpressionAttributeValues: { ':pk': query.pk, ':prefix': query.skPrefix, ...query.filter?.ExpressionAttributeValues },
    ScanIndexForward: !query.descending,
  });
}

/**
 * Every item of one partition with `from <= sk <= to`, consistently read: an item and the items
 * filed under it (an order and its notes, a chat sentinel and its messages) in one Query.
 */
export function queryBetween(pk: string, from: string, to: string): Promise<Record<string, unknown>[]> {
  return queryItems({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
    ConsistentRead: true,
  });
}
