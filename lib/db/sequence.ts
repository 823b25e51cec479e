import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { storePk } from '#lib/db/keys.ts';

/**
 * Id sequences: one counter item per store and resource type (`STORE#1 / #SEQ#TAG`), and one
 * global counter for store ids (`#SEQ / STORE`). `ADD` is atomic, so parallel creations never
 * share an id. One UpdateItem per allocated id.
 */
async function increment(pk: string, sk: string, storeId: number | undefined): Promise<number> {
  const result = await db.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: { pk, sk },
      UpdateExpression: storeId === undefined ? 'ADD #value :one' : 'ADD #value :one SET store_id = :store',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: storeId === undefined ? { ':one': 1 } : { ':one': 1, ':store': storeId },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(result.Attributes?.value);
}

export function nextId(storeId: number, resource: string): Promise<number> {
  return increment(storePk(storeId), `#SEQ#${resource}`, storeId);
}

export function nextStoreId(): Promise<number> {
  return increment('#SEQ', 'STORE', undefined);
}
