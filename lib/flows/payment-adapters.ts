import { currentTimeMs } from '#lib/clock.ts';
import type { ProviderAccount } from '#lib/db/payment-provider.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import type { ProviderAdapter, ProviderCredentials } from '#lib/payments/adapter.ts';
import { ProviderError } from '#lib/payments/adapter.ts';
import { mercadoPagoAdapter } from '#lib/payments/mercadopago.ts';
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

/** The adapter of `provider`; stripe and paypal are not in this build (a ProviderError the caller answers as an outage). */
export function providerAdapter(provider: Provider, apiBase: string): ProviderAdapter {
  if (provider === 'mercadopago') return mercadoPagoAdapter();
  if (provider === 'test') return testGatewayAdapter({ ledger: testChargeLedger, pageUrl: (ref) => testPageUrl(apiBase, ref), now: currentTimeMs });
  throw new ProviderError(provider, 'unavailable', `${provider} is not supported by this build`);
}

/** The account's secrets, decrypted for this call (bound to its store and provider), and the account rule 2 binds to. Never logged. */
export async function providerCredentials(account: ProviderAccount): Promise<ProviderCredentials> {
  const secrets = await openSecrets(account.secrets_ct, { store_id: account.store_id, provider: account.provider });
  return { secrets, accountId: account.account_id };
}

/** The secret a provider signs its notifications with (Mercado Pago `webhook_secret`, TEST `signing_secret`), or null when none is set. */
export const notificationSecretOf = (provider: Provider, credentials: ProviderCredentials): string | null =>
  (provider === 'test' ? credentials.secrets.signing_secret : credentials.secrets.webhook_secret) ?? null;
