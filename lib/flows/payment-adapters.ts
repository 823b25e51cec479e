import { currentTimeMs } from '#lib/clock.ts';
import type { ProviderAccount } from '#lib/db/payment-provider.ts';
import { testChargeLedgerOf } from '#lib/db/test-charge.ts';
import { NOTIFICATION_SECRET, type ProviderAdapter, type ProviderCredentials } from '#lib/payments/adapter.ts';
import { loadProviderAdapter } from '#lib/payments/index.ts';
import { openSecrets } from '#lib/payments/secrets.ts';
import { testGatewayAdapter } from '#lib/payments/test-gateway.ts';
import type { Provider } from '#lib/schemas/payment.ts';

/*
 * The adapter of a provider and the store's credentials for it, as the provider-calling flows
 * (settling, notifications) use them. The only module of lib/flows that opens provider secrets:
 * a function that imports it needs `uses: ['provider-secrets-open']` (kms:Decrypt).
 */

/** Where a TEST charge is paid: a page of the API host (`checkout_url`). */
export const testPageUrl = (apiBase: string, ref: string) => `${apiBase}/v1/payment/test/${encodeURIComponent(ref)}`;

/** Whose provider is called: a store's account, or a payment made through it. */
export interface AdapterOwner {
  store_id: number;
  provider: Provider;
}

/**
 * The adapter of the owner's provider: Mercado Pago, Stripe and PayPal loaded on first use
 * (lib/payments/index.ts: a request for one never runs another's code), the TEST gateway with the
 * store's ledger, which files each new charge with its ref's look-up (the TEST page's address).
 */
export async function providerAdapter(owner: AdapterOwner, apiBase: string): Promise<ProviderAdapter> {
  if (owner.provider === 'test') return testGatewayAdapter({ ledger: testChargeLedgerOf(owner.store_id), pageUrl: (ref) => testPageUrl(apiBase, ref), now: currentTimeMs });
  return loadProviderAdapter(owner.provider);
}

/** The account's secrets, decrypted for this call (bound to its store and provider), the account rule 2 binds to, and its settings (PayPal's environment). Never logged. */
export async function providerCredentials(account: ProviderAccount): Promise<ProviderCredentials> {
  const secrets = await openSecrets(account.secrets_ct, { store_id: account.store_id, provider: account.provider });
  return { secrets, accountId: account.account_id, settings: account.settings };
}

/** The secret a provider's notifications are checked with (Mercado Pago and Stripe `webhook_secret`, PayPal `webhook_id`, TEST `signing_secret`), or null when none is set. */
export const notificationSecretOf = (provider: Provider, credentials: ProviderCredentials): string | null => credentials.secrets[NOTIFICATION_SECRET[provider]] ?? null;
