import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { nowIso, stripKeys } from '#lib/db/keys.ts';
import { countMove } from '#lib/db/list-count.ts';
import { retrying, transactGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { notFound, unavailable } from '#lib/errors.ts';

/**
 * The single-item operations every entity module shares. Each is one DynamoDB call, and each
 * answers 404 (`<what> not found`) when the key does not exist: keys always include the
 * caller's store, so another store's item is exactly as absent as a missing one.
 */
export type Key = { pk: string; sk: string };

export async function getOne<T>(key: Key, what: string): Promise<T> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: key }));
  if (!result.Item) throw notFound(what);
  return stripKeys(result.Item) as T;
}

/** Put a new item; the condition guards against overwriting an id that already exists. */
export async function putNew(key: Key, entity: string, attributes: Record<string, unknown>): Promise<void> {
  await db.send(
    new PutCommand({ TableName: TABLE, Item: { ...key, entity, ...attributes }, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
}

/**
 * Put a new item of a counted list (lib/db/list-count.ts): the item and its list's count in one
 * TransactWrite, the same one call as a Put.
 */
export async function putNewCounted(
  key: Key,
  entity: string,
  attributes: Record<string, unknown>,
  storeId: number,
  counter: string,
  alsoWrite: readonly GuardedWrite[] = [],
): Promise<void> {
  await retrying(() =>
    transactGuarded([
      {
        item: { Put: { TableName: TABLE, Item: { ...key, entity, ...attributes }, ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`${key.pk} / ${key.sk} written twice`),
      },
      countMove(storeId, counter, 1),
      ...alsoWrite,
    ]),
  );
}

/** Delete an item of a counted list and take it off its list's count, in one TransactWrite (404 when it is not there). */
export async function deleteOneCounted(key: Key, what: string, storeId: number, counter: string, alsoWrite: readonly GuardedWrite[] = []): Promise<void> {
  await retrying(() =>
    transactGuarded([
      {
        item: { Delete: { TableName: TABLE, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
        onConditionFailed: () => notFound(what),
      },
      countMove(storeId, counter, -1),
      ...alsoWrite,
    ]),
  );
}

/** A condition of its own for patchOne, and the error its failure stands for. */
export interface PatchCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  failure: () => Error;
}

/**
 * SET the allowed fields of a validated patch (plus `updated_at`) on an existing item and
 * return the item as it now is. By default the item must exist (404 otherwise); a caller that
 * read the item first passes its own condition (e.g. the revision it read).
 */
export async function patchOne<T>(
  key: Key,
  what: string,
  patch: Record<string, unknown>,
  allowed: readonly string[],
  options: { nested?: readonly string[]; extraSets?: Record<string, unknown>; condition?: PatchCondition } = {},
): Promise<T> {
  const update = setExpression({ ...patch, ...options.extraSets, updated_at: nowIso() }, [...allowed, ...Object.keys(options.extraSets ?? {}), 'updated_at'], options.nested);
  const condition = options.condition;
  try {
    const result = await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: key,
        UpdateExpression: `SET ${update.sets.join(', ')}`,
        ConditionExpression: condition?.expression ?? 'attribute_exists(pk)',
        ExpressionAttributeNames: { ...update.names, ...condition?.names },
        ExpressionAttributeValues: { ...update.values, ...condition?.values },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return stripKeys(result.Attributes ?? {}) as T;
  } catch (error) {
    if (isConditionalFailure(error)) throw condition ? condition.failure() : notFound(what);
    throw error;
  }
}

export async function deleteOne(key: Key, what: string): Promise<void> {
  try {
    await db.send(new DeleteCommand({ TableName: TABLE, Key: key, ConditionExpression: 'attribute_exists(pk)' }));
  } catch (error) {
    if (isConditionalFailure(error)) throw notFound(what);
    throw error;
  }
}

/** BatchGetItem takes at most 100 keys a call. */
const BATCH_GET_MAX = 100;

/**
 * Items by key, in key order (undefined where absent): one consistent BatchGetItem per 100 keys,
 * asking again for the keys DynamoDB leaves unprocessed under throttling. Still unprocessed after
 * five tries: 503, like any throttled call. Items are raw (keys included).
 */
export async function getMany(keys: readonly Key[]): Promise<(Record<string, unknown> | undefined)[]> {
  const found = new Map<string, Record<string, unknown>>();
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX) {
    let pending: Record<string, unknown>[] = keys.slice(start, start + BATCH_GET_MAX);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 5) throw unavailable();
      const result = await db.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: pending, ConsistentRead: true } } }));
      for (const item of result.Responses?.[TABLE] ?? []) found.set(`${item.pk}|${item.sk}`, item);
      pending = (result.UnprocessedKeys?.[TABLE]?.Keys as Record<string, unknown>[] | undefined) ?? [];
    }
  }
  return keys.map((key) => found.get(`${key.pk}|${key.sk}`));
}
