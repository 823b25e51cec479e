import { fieldsOf, type StoredItem } from '#lib/db/entity.ts';
import { storePk } from '#lib/db/keys.ts';
import { put, writeGuarded } from '#lib/db/transact.ts';
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
export const leaseKey = (storeId: number, leaseId: string) => ({ pk: storePk(storeId), sk: `${ENTITY.LEASE}#${leaseId}` });

export interface LeaseRecord {
  id: string;
  server_id: number;
  expires_at: string;
  command_ids: number[];
}

export async function putLease(storeId: number, lease: LeaseRecord): Promise<void> {
  const expiresEpoch = Math.floor(Date.parse(lease.expires_at) / 1000) + KEEP_SECONDS;
  await writeGuarded([{ item: put({ Item: { ...leaseKey(storeId, lease.id), entity: ENTITY.LEASE, store_id: storeId, ...lease, expires_epoch: expiresEpoch } }) }]);
}

export function leaseFromItem(item: StoredItem): LeaseRecord & { expires_epoch: number } {
  const field = fieldsOf(item, ENTITY.LEASE);
  return {
    id: field.string('id'),
    server_id: field.number('server_id'),
    expires_at: field.string('expires_at'),
    command_ids: field.numbers('command_ids'),
    expires_epoch: field.number('expires_epoch'),
  };
}

/** A lease item as read (undefined when missing, or past its TTL but not yet deleted: TTL deletion lags). */
export function liveLease(item: StoredItem | undefined, nowEpochSeconds: number): LeaseRecord | undefined {
  if (!item) return undefined;
  const { expires_epoch: expiresEpoch, ...lease } = leaseFromItem(item);
  return expiresEpoch <= nowEpochSeconds ? undefined : lease;
}
