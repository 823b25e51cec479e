import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import type { IndexName } from '#lib/db/table.ts';

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
export async function queryAll<T = Record<string, unknown>>(query: PrefixQuery): Promise<T[]> {
  const pkName = query.index ? `${query.index}pk` : 'pk';
  const skName = query.index ? `${query.index}sk` : 'sk';
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: TABLE,
        IndexName: query.index,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        FilterExpression: query.filter?.FilterExpression,
        ExpressionAttributeNames: { '#pk': pkName, '#sk': skName, ...query.filter?.ExpressionAttributeNames },
        ExpressionAttributeValues: { ':pk': query.pk, ':prefix': query.skPrefix, ...query.filter?.ExpressionAttributeValues },
        ScanIndexForward: !query.descending,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...((page.Items ?? []) as T[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * Every item of one partition with `from <= sk <= to`, consistently read: an item and the items
 * filed under it (an order and its notes, a chat sentinel and its messages) in one Query.
 */
export async function queryBetween(pk: string, from: string, to: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}
