import { DamagedItem, fieldsOf, readItem, type StoredItem } from '#lib/db/entity.ts';
import { storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { put, putNewItem, StaleRead, update, writeGuarded, writeIf, type GuardedWrite } from '#lib/db/transact.ts';
import { notFound } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { GATEWAYS, PROVIDERS, type Gateway, type Provider } from '#lib/schemas/payment.ts';
import { PAYPAL_ENVIRONMENTS, type PayPalEnvironment, type ProviderSettings } from '#lib/schemas/payment-provider.ts';

/**
 * A store's provider accounts and the notify keys that name them (extensions section 13).
 *
 * | access pattern                         | key                                                       | calls |
 * |----------------------------------------|-----------------------------------------------------------|-------|
 * | the account of a provider              | GetItem `STORE#<s> / PAYMENT_PROVIDER#<provider>`, consistent | 1 |
 * | the store's accounts                   | Query `STORE#<s>`, sk begins_with `PAYMENT_PROVIDER#`     | 1     |
 * | first PUT                              | TransactWrite: Put account (new) + Put notify key (new)   | 1     |
 * | later PUT                              | Put account if `revision` is the one read (StaleRead otherwise) | 1 |
 * | DELETE                                 | UpdateItem `removed = true` if not removed (404 otherwise) | 1    |
 * | account of a notify key                | GetItem `PAYMENT_NOTIFY_KEY#<sha256 of the key> / PAYMENT_NOTIFY_KEY`, then the account | 2 |
 * | carry the notify key to a new server key | UpdateItem `notify_key_sealed` if `notify_key_hash` is the one read (once per rotation) | 1 |
 *
 * Secrets are stored only as `secrets_ct` (lib/payments/secrets.ts: KMS on AWS, AES-GCM locally,
 * bound to the store and the provider) and `secrets_hint` (each masked). The notify key never is
 * in clear: it is a keyed hash of `notify_nonce` under the server secret (lib/flows/payment-provider.ts),
 * carried across rotations sealed under the server secret (`notify_key_sealed`), so a table dump
 * gives neither the key nor the means to compute it, and its look-up item is filed under the
 * key's SHA-256 (the key has 256 bits: a fast hash cannot be reversed).
 *
 * A DELETE keeps the item, marked `removed`: the payments already made through it keep settling
 * (their notifications still find the store by the notify key, and the flows still decrypt the
 * secrets), while every operator read and the buyers' gateway list treat it as absent. A later
 * PUT revives it with the same notify key.
 */
const PAYMENT_PROVIDER = ENTITY.PAYMENT_PROVIDER;
const PAYMENT_NOTIFY_KEY = ENTITY.PAYMENT_NOTIFY_KEY;

export const providerAccountKey = (storeId: number, provider: Provider) => ({ pk: storePk(storeId), sk: `${PAYMENT_PROVIDER}#${provider}` });
export const notifyKeyKey = (keyHash: string) => ({ pk: `${PAYMENT_NOTIFY_KEY}#${keyHash}`, sk: PAYMENT_NOTIFY_KEY });

/** A provider account as stored: everything but the secrets in clear. */
export interface ProviderAccount {
  store_id: number;
  provider: Provider;
  enabled: boolean;
  gateways: Gateway[];
  /** The account the credential check found (Mercado Pago's user id, TEST's `test_...`): what rule 2 binds to. */
  account_id: string;
  /** The secrets' JSON, sealed for this store and provider. */
  secrets_ct: string;
  /** Each secret masked (`...1234`): what the answers show. */
  secrets_hint: Record<string, string>;
  settings: ProviderSettings;
  notify_nonce: string;
  notify_key_hash: string;
  /**
   * The notify key sealed under the server key of its last carry (lib/crypto.ts `sealUnder`), or
   * null: how the key outlives the server secret it was derived under (lib/flows/payment-provider-read.ts).
   */
  notify_key_sealed: string | null;
  /** DELETEd: no new payments, no operator read; its live payments keep settling. */
  removed: boolean;
  /** Raised by every write: the condition of the next one. */
  revision: number;
  created_at: string;
  updated_at: string;
}

/** The store and provider a notify key names. */
export interface NotifyKeyTarget {
  store_id: number;
  provider: Provider;
}

const providerAccountItem = (account: ProviderAccount) => ({ ...providerAccountKey(account.store_id, account.provider), entity: PAYMENT_PROVIDER, ...account });

export function providerAccountFromItem(item: StoredItem): ProviderAccount {
  const field = fieldsOf(item, PAYMENT_PROVIDER);
  const hint = field.raw('secrets_hint');
  return {
    store_id: field.number('store_id'),
    provider: field.oneOf('provider', PROVIDERS),
    enabled: field.boolean('enabled'),
    gateways: field.strings('gateways').map((gateway) => {
      if (!GATEWAYS.some((known) => known === gateway)) throw new DamagedItem(`${PAYMENT_PROVIDER} item ${String(item.pk)} / ${String(item.sk)}: gateways holds ${gateway}`);
      return gateway as Gateway;
    }),
    account_id: field.string('account_id'),
    secrets_ct: field.string('secrets_ct'),
    secrets_hint: Object.fromEntries(Object.entries(hint && typeof hint === 'object' ? hint : {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
    settings: field.object('settings', (settings) => {
      const minutes = settings.optionalNumber('pix_expiration_minutes');
      const environment = settings.optionalString('environment');
      if (environment !== undefined && !PAYPAL_ENVIRONMENTS.some((known) => known === environment)) {
        throw new DamagedItem(`${PAYMENT_PROVIDER} item ${String(item.pk)} / ${String(item.sk)}: settings.environment is ${environment}`);
      }
      return {
        ...(minutes === undefined ? {} : { pix_expiration_minutes: minutes }),
        ...(environment === undefined ? {} : { environment: environment as PayPalEnvironment }),
      };
    }),
    notify_nonce: field.string('notify_nonce'),
    notify_key_hash: field.string('notify_key_hash'),
    notify_key_sealed: field.stringOrNull('notify_key_sealed'),
    removed: field.boolean('removed', false),
    revision: field.number('revision'),
    created_at: field.string('created_at'),
    updated_at: field.string('updated_at'),
  };
}

function notifyKeyFromItem(item: StoredItem): NotifyKeyTarget {
  const field = fieldsOf(item, PAYMENT_NOTIFY_KEY);
  return { store_id: field.number('store_id'), provider: field.oneOf('provider', PROVIDERS) };
}

/** The account as stored, removed or not (the notify and payment flows need a removed one's secrets). */
export async function readProviderAccount(storeId: number, provider: Provider): Promise<ProviderAccount | undefined> {
  const item = await readItem(providerAccountKey(storeId, provider), true);
  return item ? providerAccountFromItem(item) : undefined;
}

/** The account as the operator sees it: a removed one is 404. */
export async function getProviderAccount(storeId: number, provider: Provider): Promise<ProviderAccount> {
  const account = await readProviderAccount(storeId, provider);
  if (!account || account.removed) throw notFound('Payment provider');
  return account;
}

/** The store's accounts not removed, in provider order. */
export async function listProviderAccounts(storeId: number): Promise<ProviderAccount[]> {
  const items = await queryAll({ pk: storePk(storeId), skPrefix: `${PAYMENT_PROVIDER}#` });
  return items.map(providerAccountFromItem).filter((account) => !account.removed);
}

/**
 * Stores an account: the first time with its notify key's look-up item, in one transaction (both
 * new); afterwards only the account, if it is still at the revision `previous` was read at. A
 * concurrent PUT makes the other one a StaleRead (the caller reads again and writes over it).
 */
export async function saveProviderAccount(account: ProviderAccount, previous: ProviderAccount | undefined): Promise<void> {
  if (!previous) {
    await writeGuarded([
      { item: putNewItem(providerAccountItem(account)), onConditionFailed: () => new StaleRead() },
      {
        item: putNewItem({ ...notifyKeyKey(account.notify_key_hash), entity: PAYMENT_NOTIFY_KEY, store_id: account.store_id, provider: account.provider }),
        // 256 random bits met twice: a bug, never a collision.
        onConditionFailed: () => new Error('a notify key was issued twice'),
      },
    ]);
    return;
  }
  const write: GuardedWrite = {
    item: put({ Item: providerAccountItem(account), ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': previous.revision } }),
    onConditionFailed: () => new StaleRead(),
  };
  await writeGuarded([write]);
}

/**
 * The notify key sealed anew (a rotation of the server secret carried over): only while the
 * account still names the key that was sealed. False when it no longer does (a concurrent PUT of
 * another key cannot happen today: a PUT keeps the key; this is the guard should that change).
 */
export function storeNotifyKeySeal(storeId: number, provider: Provider, keyHash: string, sealed: string): Promise<boolean> {
  return writeIf(
    update({
      Key: providerAccountKey(storeId, provider),
      UpdateExpression: 'SET notify_key_sealed = :sealed ADD revision :one',
      ConditionExpression: 'notify_key_hash = :hash',
      ExpressionAttributeValues: { ':sealed': sealed, ':hash': keyHash, ':one': 1 },
    }),
  );
}

/** DELETE: no new payments through it; the item stays for the payments it already made (see the header). */
export async function removeProviderAccount(storeId: number, provider: Provider, now: string): Promise<void> {
  await writeGuarded([
    {
      item: update({
        Key: providerAccountKey(storeId, provider),
        UpdateExpression: 'SET removed = :true, enabled = :false, updated_at = :now ADD revision :one',
        ConditionExpression: 'attribute_exists(pk) AND removed <> :true',
        ExpressionAttributeValues: { ':true': true, ':false': false, ':now': now, ':one': 1 },
      }),
      onConditionFailed: () => notFound('Payment provider'),
    },
  ]);
}

/** The store and provider of a notify key's hash, or undefined: one GetItem, before any decryption. */
export async function notifyKeyTarget(keyHash: string): Promise<NotifyKeyTarget | undefined> {
  const item = await readItem(notifyKeyKey(keyHash), true);
  return item ? notifyKeyFromItem(item) : undefined;
}
