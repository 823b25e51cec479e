import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { storePk } from '#lib/db/keys.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Delivery leases: what one claim handed out, so that an ack can be checked against it.
 *
 * | access pattern          | key                                        | calls                                  |
 * |-------------------------|--------------------------------------------|----------------------------------------|
 * | record a claim's lease  | Put `STORE#<s> / LEASE#<lease id>`          | 1 (only when it hands something out)   |
 * | read it (ack)           | in the ack's BatchGetItem with the commands | 0 extra                                |
 *
 * The lease item is not the lock (each command carries its own `lease_id`/`lease_until`, written
 * by a conditional Put): it says which server a lease belongs to (an ack by another server's key
 * is a 403, by another store's a 404) and which commands it handed out. It outlives the lease
 * (an ack after expiry is accepted while nobody claimed the command again) and is then removed by
 * TTL after a week.
 */
const KEEP_SECONDS = 7 * 24 * 3600;
export const leaseKey = (storeId: number, leaseId: string) => ({ pk: storePk(storeId), sk: `LEASE#${leaseId}` });

export interface LeaseRecord {
  id: string;
  server_id: number;
  expires_at: string;
  command_ids: number[];
}

export async function putLease(storeId: number, lease: LeaseRecord): Promise<void> {
  const expiresEpoch = Math.floor(Date.parse(lease.expires_at) / 1000) + KEEP_SECONDS;
  await db.send(new PutCommand({ TableName: TABLE, Item: { ...leaseKey(storeId, lease.id), entity: ENTITY.LEASE, store_id: storeId, ...lease, expires_epoch: expiresEpoch } }));
}

/** A lease item as read (undefined when missing, or past its TTL but not yet deleted). */
export function toLease(item: Record<string, unknown> | undefined, nowEpochSeconds: number): LeaseRecord | undefined {
  if (!item || (item.expires_epoch as number) <= nowEpochSeconds) return undefined;
  return { id: item.id as string, server_id: item.server_id as number, expires_at: item.expires_at as string, command_ids: item.command_ids as number[] };
}
