import { nowIso } from '#lib/clock.ts';
import { hashSecret, keyedHash, sealUnder, unsealUnder, type ServerKeys } from '#lib/crypto.ts';
import { getProviderAccount, listProviderAccounts, removeProviderAccount, storeNotifyKeySeal, type ProviderAccount } from '#lib/db/payment-provider.ts';
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
 * nonce and the key's SHA-256 (its look-up, which alone routes a notification: no server secret
 * is needed to recognise the key, so a notify URL keeps working whatever the rotations), never the
 * key: a dump of the table cannot produce the URL without the server secret, yet every GET can
 * show the URL again without decrypting anything. A rotation of the server secret would lose the
 * means to show it (and to send it with a charge) once `previous` is dropped, so the key is
 * carried: a write that meets it under `previous` only (a checkout's charge, a PUT) seals it under
 * `current` (`carryNotifyKey`, `notify_key_sealed`), once per rotation. An account with neither
 * while `previous` is set shows `notification_url: null` afterwards; its old URL still routes
 * (docs/operations.md, "The server secret").
 */
export const notifyKeyUnder = (key: string, storeId: number, provider: Provider, nonce: string) => keyedHash(key, `payment-notify:${storeId}:${provider}:${nonce}`);

const NOTIFY_KEY_SEAL = 'payment-notify-key';

type NotifyKeyAccount = Pick<ProviderAccount, 'store_id' | 'provider' | 'notify_nonce' | 'notify_key_hash' | 'notify_key_sealed'>;

/**
 * The notify key of an account, derived or unsealed under whichever server key gives it, and
 * whether that is the current one; null when none does any longer.
 */
function notifyKeyOf(keys: ServerKeys, account: NotifyKeyAccount): { key: string; underCurrent: boolean } | null {
  const serverKeys = [keys.current, ...(keys.previous ? [keys.previous] : [])];
  for (const [index, serverKey] of serverKeys.entries()) {
    const derived = notifyKeyUnder(serverKey, account.store_id, account.provider, account.notify_nonce);
    const unsealed = account.notify_key_sealed === null ? undefined : unsealUnder(serverKey, NOTIFY_KEY_SEAL, account.notify_key_sealed);
    const key = [derived, unsealed].find((candidate) => candidate !== undefined && hashSecret(candidate) === account.notify_key_hash);
    if (key) return { key, underCurrent: index === 0 };
  }
  return null;
}

/**
 * Carries the account's notify key to the current server key when only the previous one gives it:
 * sealed under `current` and stored (one UpdateItem, once per rotation; none otherwise). True when
 * it wrote. For flows that may write and hold the server keys: a checkout's charge, the PUT.
 */
export async function carryNotifyKey(account: NotifyKeyAccount, keys: ServerKeys): Promise<boolean> {
  const found = notifyKeyOf(keys, account);
  if (!found || found.underCurrent) return false;
  return storeNotifyKeySeal(account.store_id, account.provider, account.notify_key_hash, sealUnder(keys.current, NOTIFY_KEY_SEAL, found.key));
}

/** The seal an account's next write carries: the key sealed under `current` when only `previous` gives it, else the seal it has. */
export function carriedNotifyKeySeal(account: NotifyKeyAccount, keys: ServerKeys): string | null {
  const found = notifyKeyOf(keys, account);
  return found && !found.underCurrent ? sealUnder(keys.current, NOTIFY_KEY_SEAL, found.key) : account.notify_key_sealed;
}

/** Where a provider sends its notifications for this account. */
export const notificationUrl = (apiBase: string, provider: Provider, notifyKey: string) => `${apiBase}/v1/payment/notify/${provider}/${notifyKey}`;

/** The account's `notification_url`, sent with every charge where the provider takes one (null once its key cannot be derived). */
export function accountNotificationUrl(account: NotifyKeyAccount, keys: ServerKeys, apiBase: string): string | null {
  const found = notifyKeyOf(keys, account);
  return found ? notificationUrl(apiBase, account.provider, found.key) : null;
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
