import { startCartIndex } from '#lib/db/cart-index.ts';
import { fieldsOf, getMany, newItemWrite, patchOne, readItem, type StoredItem } from '#lib/db/entity.ts';
import { nowIso, storePk } from '#lib/db/keys.ts';
import { startCounted, startOrderCounts, STORE_WIDE_LISTS } from '#lib/db/list-count.ts';
import { queryPage } from '#lib/db/query.ts';
import { nextStoreId, storeIdsAllocated } from '#lib/db/sequence.ts';
import { startApplyAll } from '#lib/db/tag.ts';
import { put, putNewItem, remove, retrying, StaleRead, update, writeGuarded, type GuardedWrite } from '#lib/db/transact.ts';
import { setExpression } from '#lib/db/update.ts';
import { conflict, notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { CHARGEBACK_ON, type ChargebackOn } from '#lib/schemas/payment.ts';
import { DEFAULT_CURRENCY, DEFAULT_THEME, type StorePatchBody as StorePatch } from '#lib/schemas/store.ts';

/**
 * Stores, their domains and the web origins allowed to call their storefront.
 *
 * | access pattern                    | key                                              | calls |
 * |-----------------------------------|--------------------------------------------------|-------|
 * | store by id                       | pk `STORE#<id>`, sk `#STORE`                     | 1     |
 * | every store (admin `store list`)  | GetItem `#SEQ / STORE` (ids 1..n), BatchGet per 100 | 1 + n/100 |
 * | store id (+ allowed origins) by domain | pk `DOMAIN#<domain>`, sk `#DOMAIN`          | 1     |
 * | is an origin some store's          | Query pk `ORIGIN#<origin>` (one item per store listing it), Limit 1 | 1 |
 * | change name or affiliate settings | UpdateItem                                       | 1     |
 * | change domain or allowed_origins  | GetItem + TransactWrite (store, domain items, origin items) | 2 |
 *
 * The domain item doubles as the uniqueness sentinel: it is written in the same transaction
 * as the store with `attribute_not_exists`. It also carries a copy of `allowed_origins`, so the
 * lookup every storefront request makes anyway (lib/http/auth.ts) tells which origins get CORS
 * headers without another read. A preflight carries no domain, only its Origin: it is allowed
 * when the origin's host is a store domain (that same GetItem) or when an `ORIGIN#<origin>` item
 * exists. Those items are written and deleted in the transaction that changes the store's
 * `allowed_origins` (at most 10 each side), one per store, so two stores may list one origin.
 */
export interface AffiliateSettings {
  self_registration: boolean;
  percent_commission: number;
  min_withdraw: number;
}

export interface StoreTheme {
  primary_color: string;
  logo: string | null;
  banner: string | null;
}

export interface Store {
  id: number;
  store_id: number;
  name: string;
  domain: string;
  affiliate: AffiliateSettings;
  allowed_origins: string[];
  currency: string;
  theme: StoreTheme;
  payments: { chargeback_on: ChargebackOn };
  /** When set, a buyer must accept these terms (`terms: true`) to get a quote or check out. */
  terms_url: string | null;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_AFFILIATE_SETTINGS: AffiliateSettings = { self_registration: true, percent_commission: 10, min_withdraw: 0 };

export const storeKey = (storeId: number) => ({ pk: storePk(storeId), sk: '#STORE' });
export const domainKey = (domain: string) => ({ pk: `${ENTITY.DOMAIN}#${domain.toLowerCase()}`, sk: '#DOMAIN' });

const originPk = (origin: string) => `${ENTITY.ORIGIN}#${origin}`;
const originKey = (origin: string, storeId: number) => ({ pk: originPk(origin), sk: storePk(storeId) });
const originItem = (origin: string, storeId: number) => ({ ...originKey(origin, storeId), entity: ENTITY.ORIGIN, store_id: storeId });

/** What a store domain's item tells: its store, and the origins its storefront allows (CORS). */
export interface DomainEntry {
  storeId: number;
  allowedOrigins: string[];
}

/** Domain items written before `allowed_origins` existed allow none. */
export function domainFromItem(item: StoredItem): DomainEntry {
  const field = fieldsOf(item, ENTITY.DOMAIN);
  return { storeId: field.number('store_id'), allowedOrigins: field.strings('allowed_origins') };
}

function domainItem(domain: string, storeId: number, allowedOrigins: readonly string[]) {
  return { ...domainKey(domain), entity: ENTITY.DOMAIN, domain: domain.toLowerCase(), store_id: storeId, allowed_origins: allowedOrigins };
}

/**
 * The currency, theme and payment settings are top-level attributes of the item (`currency`,
 * `theme_primary_color`, `theme_logo`, `theme_banner`, `chargeback_on`), not maps: one UpdateItem
 * sets any of them, on stores made before they existed too (a nested SET needs its map to exist).
 */
const SETTINGS_ATTRIBUTES = ['currency', 'theme_primary_color', 'theme_logo', 'theme_banner', 'chargeback_on', 'terms_url'] as const;

function settingsAttributes(settings: Partial<Pick<StorePatch, 'currency' | 'theme' | 'payments' | 'terms_url'>>): Record<string, unknown> {
  return {
    currency: settings.currency,
    theme_primary_color: settings.theme?.primary_color,
    theme_logo: settings.theme?.logo,
    theme_banner: settings.theme?.banner,
    chargeback_on: settings.payments?.chargeback_on,
    terms_url: settings.terms_url,
  };
}

const storeItem = ({ theme, payments, terms_url, ...store }: Store) => ({
  ...storeKey(store.id),
  entity: ENTITY.STORE,
  ...store,
  ...settingsAttributes({ theme, payments, terms_url }),
});

/** A new store's chargeback setting, and what stores made before payments existed read as. */
const DEFAULT_CHARGEBACK_ON: ChargebackOn = 'DISPUTE_OPENED';

/** Stores written before `allowed_origins`, the currency, the theme or the payment settings existed read with their defaults. */
export function storeFromItem(item: StoredItem): Store {
  const field = fieldsOf(item, ENTITY.STORE);
  return {
    id: field.number('id'),
    store_id: field.number('store_id'),
    name: field.string('name'),
    domain: field.string('domain'),
    affiliate: field.object('affiliate', (settings) => ({
      self_registration: settings.boolean('self_registration'),
      percent_commission: settings.number('percent_commission'),
      min_withdraw: settings.number('min_withdraw'),
    })),
    allowed_origins: field.strings('allowed_origins'),
    currency: field.string('currency', DEFAULT_CURRENCY),
    terms_url: field.stringOrNull('terms_url'),
    theme: {
      primary_color: field.string('theme_primary_color', DEFAULT_THEME.primary_color),
      logo: field.stringOrNull('theme_logo'),
      banner: field.stringOrNull('theme_banner'),
    },
    payments: { chargeback_on: field.oneOf('chargeback_on', CHARGEBACK_ON, DEFAULT_CHARGEBACK_ON) },
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

/** `value` when the patch gives it, else what it was (a patch's null is a value: a cleared logo). */
const patched = <T>(value: T | undefined, current: T): T => (value === undefined ? current : value);

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
    allowed_origins: [],
    currency: DEFAULT_CURRENCY,
    theme: { ...DEFAULT_THEME },
    payments: { chargeback_on: DEFAULT_CHARGEBACK_ON },
    terms_url: null,
    created_at: now,
    updated_at: now,
  };
  // Two creations racing for one domain collide on its sentinel: retried, the loser gets 409.
  await retrying(() =>
    writeGuarded([
      newItemWrite(storeItem(store)),
      { item: putNewItem(domainItem(store.domain, id, [])), onConditionFailed: domainInUse },
      // A new store's lists are empty: their counters start exact, and no list of it ever counts its items.
      ...STORE_WIDE_LISTS.map((counter) => startCounted(id, counter)),
      startOrderCounts(id),
      // Nor does it have tags applied to all packages: nothing to derive from older data.
      startApplyAll(id),
      // Nor promos and variables for its carts to find.
      startCartIndex(id, now),
    ]),
  );
  return store;
}

/** Every store, in id order (the admin command line's `store list`): the id counter, then BatchGets of 100. */
export async function listStores(): Promise<Pick<Store, 'id' | 'name' | 'domain' | 'created_at'>[]> {
  const items = await getMany(Array.from({ length: await storeIdsAllocated() }, (_, at) => storeKey(at + 1)));
  return items
    .filter((item) => item !== undefined)
    .map((item) => {
      const { id, name, domain, created_at } = storeFromItem(item);
      return { id, name, domain, created_at };
    });
}

export async function getStore(storeId: number): Promise<Store | undefined> {
  const item = await readItem(storeKey(storeId));
  return item ? storeFromItem(item) : undefined;
}

export async function getStoreOrThrow(storeId: number): Promise<Store> {
  const store = await getStore(storeId);
  if (!store) throw notFound('Store');
  return store;
}

/** Whether some store lists this origin in its `allowed_origins`. One Query. */
export async function isAllowedOriginOfAStore(origin: string): Promise<boolean> {
  const page = await queryPage({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': originPk(origin) } }, undefined, 1);
  return (page.Items ?? []).length > 0;
}

/**
 * Changes the domain or the allowed origins (and the rest of the patch) in one transaction
 * conditioned on the store as read: the domain sentinel moves (or its copy of the origins
 * changes) and the origin items follow the list. Undefined when neither actually changes.
 */
async function changeAddresses(storeId: number, patch: StorePatch): Promise<Store | undefined> {
  const current = await getStoreOrThrow(storeId);
  const domain = patch.domain?.toLowerCase() ?? current.domain;
  const origins = patch.allowed_origins ?? current.allowed_origins;
  const added = origins.filter((origin) => !current.allowed_origins.includes(origin));
  const removed = current.allowed_origins.filter((origin) => !origins.includes(origin));
  const domainMoves = domain !== current.domain;
  if (!domainMoves && added.length === 0 && removed.length === 0) return undefined;
  const updatedAt = nowIso();
  const parts = setExpression(
    { ...patch, ...settingsAttributes(patch), domain, allowed_origins: origins, updated_at: updatedAt },
    ['name', 'domain', 'affiliate', 'allowed_origins', ...SETTINGS_ATTRIBUTES, 'updated_at'],
    ['affiliate'],
  );
  const domainWrites: GuardedWrite[] = domainMoves
    ? [
        { item: remove({ Key: domainKey(current.domain) }), onConditionFailed: () => new StaleRead() },
        { item: putNewItem(domainItem(domain, storeId, origins)), onConditionFailed: domainInUse },
      ]
    : [
        {
          item: update({ Key: domainKey(domain), UpdateExpression: 'SET allowed_origins = :origins', ExpressionAttributeValues: { ':origins': origins } }),
          onConditionFailed: () => new StaleRead(),
        },
      ];
  await writeGuarded([
    {
      item: update({
        Key: storeKey(storeId),
        UpdateExpression: `SET ${parts.sets.join(', ')}`,
        ConditionExpression: '#updated_at = :was_updated_at',
        ExpressionAttributeNames: parts.names,
        ExpressionAttributeValues: { ...parts.values, ':was_updated_at': current.updated_at },
      }),
      onConditionFailed: () => new StaleRead(),
    },
    ...domainWrites,
    ...removed.map((origin) => ({ item: remove({ Key: originKey(origin, storeId) }), onConditionFailed: () => new StaleRead() })),
    ...added.map((origin) => ({ item: put({ Item: originItem(origin, storeId) }), onConditionFailed: () => new StaleRead() })),
  ]);
  // The transaction succeeded against the store we read, so the result is known without a re-read.
  return {
    ...current,
    name: patch.name ?? current.name,
    domain,
    affiliate: { ...current.affiliate, ...patch.affiliate },
    allowed_origins: origins,
    currency: patch.currency ?? current.currency,
    theme: {
      primary_color: patched(patch.theme?.primary_color, current.theme.primary_color),
      logo: patched(patch.theme?.logo, current.theme.logo),
      banner: patched(patch.theme?.banner, current.theme.banner),
    },
    payments: { chargeback_on: patched(patch.payments?.chargeback_on, current.payments.chargeback_on) },
    terms_url: patched(patch.terms_url, current.terms_url),
    updated_at: updatedAt,
  };
}

/** One UpdateItem; or, when the domain or the allowed origins change, a read and one transaction. */
export async function updateStore(storeId: number, patch: StorePatch): Promise<Store> {
  if (patch.domain !== undefined || patch.allowed_origins !== undefined) {
    const changed = await retrying(() => changeAddresses(storeId, patch));
    if (changed) return changed;
  }
  return patchOne(storeKey(storeId), 'Store', { ...patch, ...settingsAttributes(patch) }, ['name', 'affiliate', ...SETTINGS_ATTRIBUTES], storeFromItem, { nested: ['affiliate'] });
}
