import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { patchOne } from '#lib/db/entity.ts';
import { retrying, StaleRead, transactGuarded } from '#lib/db/transact.ts';
import { nowIso, storePk, stripKeys } from '#lib/db/keys.ts';
import { nextStoreId } from '#lib/db/sequence.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict, notFound } from '#lib/errors.ts';
import type { StorePatchBody as StorePatch } from '#lib/schemas/store.ts';

/**
 * Stores and their domains.
 *
 * | access pattern            | key                                   |
 * |---------------------------|---------------------------------------|
 * | store by id               | pk `STORE#<id>`, sk `#STORE`          |
 * | store id by domain        | pk `DOMAIN#<domain>`, sk `#DOMAIN`    |
 *
 * The domain item doubles as the uniqueness sentinel: it is written in the same transaction
 * as the store with `attribute_not_exists`.
 */
export interface AffiliateSettings {
  self_registration: boolean;
  percent_commission: number;
  min_withdraw: number;
}

export interface Store {
  id: number;
  store_id: number;
  name: string;
  domain: string;
  affiliate: AffiliateSettings;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_AFFILIATE_SETTINGS: AffiliateSettings = { self_registration: true, percent_commission: 10, min_withdraw: 0 };

export const storeKey = (storeId: number) => ({ pk: storePk(storeId), sk: '#STORE' });
export const domainKey = (domain: string) => ({ pk: `DOMAIN#${domain.toLowerCase()}`, sk: '#DOMAIN' });

function domainItem(domain: string, storeId: number) {
  return { ...domainKey(domain), entity: 'domain', domain: domain.toLowerCase(), store_id: storeId };
}

const domainInUse = () => conflict('Domain already in use by another store', 'domain');

export async function createStore(input: { name: string; domain: string }): Promise<Store> {
  const id = await nextStoreId();
  const now = nowIso();
  const store: Store = {
    id,
    store_id: id,
    name: input.name,
    domain: input.domain.toLowerCase(),
    affiliate: { ...DEFAULT_AFFILIATE_SETTINGS },
    created_at: now,
    updated_at: now,
  };
  // Two creations racing for one domain collide on its sentinel: retried, the loser gets 409.
  await retrying(() =>
    transactGuarded([
      {
        item: { Put: { TableName: TABLE, Item: { ...storeKey(id), entity: 'store', ...store }, ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: () => new Error(`store id ${id} allocated twice`),
      },
      { item: { Put: { TableName: TABLE, Item: domainItem(store.domain, id), ConditionExpression: 'attribute_not_exists(pk)' } }, onConditionFailed: domainInUse },
    ]),
  );
  return store;
}

export async function getStore(storeId: number): Promise<Store | undefined> {
  const result = await db.send(new GetCommand({ TableName: TABLE, Key: storeKey(storeId) }));
  return result.Item ? (stripKeys(result.Item) as Store) : undefined;
}

export async function getStoreOrThrow(storeId: number): Promise<Store> {
  const store = await getStore(storeId);
  if (!store) throw notFound('Store');
  return store;
}


/**
 * Changes the domain (and the rest of the patch) in one transaction that moves the domain
 * sentinel; the condition on the domain we read turns a concurrent change into a retry.
 * Undefined when the domain is already the store's.
 */
async function moveDomain(storeId: number, newDomain: string, patch: StorePatch): Promise<Store | undefined> {
  const current = await getStoreOrThrow(storeId);
  if (newDomain === current.domain) return undefined;
  const updatedAt = nowIso();
  const update = setExpression({ ...patch, domain: newDomain, updated_at: updatedAt }, ['name', 'domain', 'affiliate', 'updated_at'], ['affiliate']);
  update.values[':old_domain'] = current.domain;
  await transactGuarded([
    {
      item: {
        Update: {
          TableName: TABLE,
          Key: storeKey(storeId),
          UpdateExpression: `SET ${update.sets.join(', ')}`,
          ConditionExpression: '#domain = :old_domain',
          ExpressionAttributeNames: update.names,
          ExpressionAttributeValues: update.values,
        },
      },
      // The domain changed since the read: read again.
      onConditionFailed: () => new StaleRead(),
    },
    { item: { Delete: { TableName: TABLE, Key: domainKey(current.domain) } } },
    { item: { Put: { TableName: TABLE, Item: domainItem(newDomain, storeId), ConditionExpression: 'attribute_not_exists(pk)' } }, onConditionFailed: domainInUse },
  ]);
  // The transaction succeeded against the store we read, so the result is known without a re-read.
  return {
    ...current,
    name: patch.name ?? current.name,
    domain: newDomain,
    affiliate: { ...current.affiliate, ...patch.affiliate },
    updated_at: updatedAt,
  };
}

/** One UpdateItem; or, when the domain changes, a read and one transaction (moveDomain). */
export async function updateStore(storeId: number, patch: StorePatch): Promise<Store> {
  const newDomain = patch.domain?.toLowerCase();
  if (newDomain) {
    const moved = await retrying(() => moveDomain(storeId, newDomain, patch));
    if (moved) return moved;
  }
  return patchOne<Store>(storeKey(storeId), 'Store', { ...patch }, ['name', 'affiliate'], { nested: ['affiliate'] });
}
