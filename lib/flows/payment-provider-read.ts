import { nowIso } from '#lib/clock.ts';
import { hashSecret, keyedHash, type ServerKeys } from '#lib/crypto.ts';
import { getProviderAccount, listProviderAccounts, removeProviderAccount, type ProviderAccount } from '#lib/db/payment-provider.ts';
import type { Provider } from '#lib/schemas/payment.ts';
import type { ProviderAccountResource } from '#lib/schemas/payment-provider.ts';
import { serverKeys } from '#lib/server-secret.ts';

/**
 * The provider accounts as the operator reads them (`GET|DELETE /app/payment/provider...`), and the
 * notify key they show. A module apart from the PUT's (lib/flows/payment-provider.ts): these
 * functions decrypt nothing and call no provider, so they bundle neither the KMS client nor an
 * adapter, and hold no KMS grant.
 *
 * The notify key: `notify_key = HMAC(server secret, "payment-notify:<store>:<provider>:<nonce>")`
 * with a random 256-bit nonce made by the first PUT and kept by later ones. The table holds the
 * nonce and the key's SHA-256 (its look-up), never the key: a dump of the table cannot produce
 * the URL without the server secret, yet every GET can show the URL again without decrypting
 * anything. After a rotation of the server secret the key is derived under the previous key, still
 * accepted; after two, the URL is gone (null) while the old key still routes (issuing a new key is
 * not built: docs/payments.md, "What remains").
 */
export const notifyKeyUnder = (key: string, storeId: number, provider: Provider, nonce: string) => keyedHash(key, `payment-notify:${storeId}:${provider}:${nonce}`);

/** The notify key of an account, derived under whichever server key made it, or null when none does any longer. */
function notifyKeyOf(keys: ServerKeys, account: Pick<ProviderAccount, 'store_id' | 'provider' | 'notify_nonce' | 'notify_key_hash'>): string | null {
  const candidates = [keys.current, ...(keys.previous ? [keys.previous] : [])].map((key) => notifyKeyUnder(key, account.store_id, account.provider, account.notify_nonce));
  return candidates.find((candidate) => hashSecret(candidate) === account.notify_key_hash) ?? null;
}

/** Where a provider sends its notifications for this account. */
export const notificationUrl = (apiBase: string, provider: Provider, notifyKey: string) => `${apiBase}/v1/payment/notify/${provider}/${notifyKey}`;

/** The account's `notification_url`, sent with every charge where the provider takes one (null once its key cannot be derived). */
export function accountNotificationUrl(account: ProviderAccount, keys: ServerKeys, apiBase: string): string | null {
  const key = notifyKeyOf(keys, account);
  return key ? notificationUrl(apiBase, account.provider, key) : null;
}

export function providerAccountResponse(account: ProviderAccount, keys: ServerKeys, apiBase: string): ProviderAccountResource {
  return {
    provider: account.provider,
    enabled: account.enabled,
    gateways: account.gateways,
    account_id: account.account_id,
    secrets: account.secrets_hint,
    settings: account.settings,
    notification_url: accountNotificationUrl(account, keys, apiBase),
    created_at: account.created_at,
    updated_at: account.updated_at,
  };
}

export async function providerAccount(storeId: number, provider: Provider, apiBase: string): Promise<ProviderAccountResource> {
  const [account, keys] = await Promise.all([getProviderAccount(storeId, provider), serverKeys()]);
  return providerAccountResponse(account, keys, apiBase);
}

export async function providerAccounts(storeId: number, apiBase: string): Promise<ProviderAccountResource[]> {
  const [accounts, keys] = await Promise.all([listProviderAccounts(storeId), serverKeys()]);
  return accounts.map((account) => providerAccountResponse(account, keys, apiBase));
}

export const deleteProviderAccount = (storeId: number, provider: Provider) => removeProviderAccount(storeId, provider, nowIso());
