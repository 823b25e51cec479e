import { randomBytes } from 'node:crypto';
import { nowIso } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { hashSecret } from '#lib/crypto.ts';
import { carriedNotifyKeySeal, notifyKeyUnder, providerAccountResponse } from '#lib/flows/payment-provider-read.ts';
import { readProviderAccount, saveProviderAccount, type ProviderAccount } from '#lib/db/payment-provider.ts';
import { retrying } from '#lib/db/transact.ts';
import { notFound, providerUnavailable, unprocessable } from '#lib/errors.ts';
import { ProviderError, type ProviderAdapter } from '#lib/payments/adapter.ts';
import { loadProviderAdapter } from '#lib/payments/index.ts';
import { maskSecrets, sealSecrets } from '#lib/payments/secrets.ts';
import { testAccountOf } from '#lib/payments/test-gateway.ts';
import { GATEWAY_PROVIDER, type Gateway, type Provider } from '#lib/schemas/payment.ts';
import {
  PIX_EXPIRATION_DEFAULT,
  SUPPORTED_PROVIDERS,
  type CheckedAccount,
  type ProviderAccountBody,
  type ProviderAccountResource,
  type SupportedProvider,
} from '#lib/schemas/payment-provider.ts';
import { serverKeys } from '#lib/server-secret.ts';

/*
 * A store's provider accounts (extensions section 13): `PUT|GET|DELETE /app/payment/provider...`.
 *
 * A PUT checks the credentials with one provider call before anything is stored (refused: 422
 * PROVIDER_CREDENTIALS; no answer: 502 PROVIDER_UNAVAILABLE; nothing stored either way), seals the
 * secrets for this store and provider (the only route granted `kms:Encrypt`), and answers them
 * masked with the `notification_url`.
 *
 * The notify key and the masked answer: lib/flows/payment-provider-read.ts.
 */

/** The adapter a provider account's credentials are checked with (loaded for its provider only; the TEST one needs no ledger for that). */
async function credentialChecker(provider: SupportedProvider): Promise<Pick<ProviderAdapter, 'checkCredentials'>> {
  if (provider === 'test') return { checkCredentials: async (secrets) => ({ accountId: testAccountOf(secrets.signing_secret ?? '') }) };
  return loadProviderAdapter(provider);
}

/** The field a refusal of the credentials names: the secret the provider judged. */
const CREDENTIAL_FIELD: Record<SupportedProvider, keyof ProviderAccountBody | undefined> = {
  mercadopago: 'access_token',
  stripe: 'secret_key',
  // PayPal answers `invalid_client` for a wrong id or secret alike.
  paypal: 'client_secret',
  test: undefined,
};

/** A provider outside this build's list: a clear 422, not a 404 that reads like a typo. */
function supported(provider: Provider): SupportedProvider {
  const found = SUPPORTED_PROVIDERS.find((entry) => entry === provider);
  if (!found) throw unprocessable(`Provider ${provider} is not yet supported; supported: ${SUPPORTED_PROVIDERS.join(', ')}`, 'provider');
  if (found === 'test' && !config.testGatewayAllowed) throw notFound('Payment provider');
  return found;
}

const FIELDS_OF: Record<SupportedProvider, readonly (keyof ProviderAccountBody)[]> = {
  mercadopago: ['access_token', 'webhook_secret', 'gateways', 'pix_expiration_minutes', 'enabled'],
  stripe: ['secret_key', 'webhook_secret', 'enabled'],
  paypal: ['client_id', 'client_secret', 'webhook_id', 'environment', 'enabled'],
  test: ['enabled'],
};

/** Stripe's endpoint secrets all start `whsec_`: anything else pasted there would refuse every event. */
const STRIPE_WEBHOOK_SECRET = /^whsec_/;

/**
 * The body as the provider takes it: a field of another provider is 422 naming it; a required one
 * missing is 422 naming it. TEST's signing secret is made here; `putProviderAccount` keeps the
 * first one made (the notifications its buttons sign must keep verifying).
 */
function accountInput(provider: SupportedProvider, body: ProviderAccountBody): CheckedAccount {
  for (const name of Object.keys(body) as (keyof ProviderAccountBody)[]) {
    if (!FIELDS_OF[provider].includes(name)) throw unprocessable(`${name} is not a setting of ${provider}`, name);
  }
  const enabled = body.enabled ?? true;
  if (provider === 'test') return { provider, enabled, gateways: ['TEST'], settings: {}, secrets: { signing_secret: randomBytes(32).toString('base64url') } };
  const required = <Name extends 'access_token' | 'webhook_secret' | 'secret_key' | 'client_id' | 'client_secret' | 'webhook_id' | 'environment'>(name: Name) => {
    const value = body[name];
    if (value === undefined) throw unprocessable(`${name} is required`, name);
    return value as NonNullable<ProviderAccountBody[Name]>;
  };
  if (provider === 'stripe') {
    const secrets = { secret_key: required('secret_key'), webhook_secret: required('webhook_secret') };
    if (!STRIPE_WEBHOOK_SECRET.test(secrets.webhook_secret)) throw unprocessable('webhook_secret must be a Stripe endpoint secret (whsec_...)', 'webhook_secret');
    return { provider, enabled, gateways: ['STRIPE'], settings: {}, secrets };
  }
  if (provider === 'paypal') {
    const secrets = { client_id: required('client_id'), client_secret: required('client_secret'), webhook_id: required('webhook_id') };
    return { provider, enabled, gateways: ['PAYPAL'], settings: { environment: required('environment') }, secrets };
  }
  const secrets = { access_token: required('access_token'), webhook_secret: required('webhook_secret') };
  const gateways = body.gateways;
  if (gateways === undefined) throw unprocessable('gateways is required', 'gateways');
  const foreign = gateways.find((gateway) => GATEWAY_PROVIDER[gateway] !== provider);
  if (foreign) throw unprocessable(`gateway ${foreign} is not one of ${provider}'s`, 'gateways');
  return { provider, enabled, gateways: [...new Set<Gateway>(gateways)], settings: { pix_expiration_minutes: body.pix_expiration_minutes ?? PIX_EXPIRATION_DEFAULT }, secrets };
}

async function accountIdOf(checked: CheckedAccount): Promise<string> {
  try {
    return (await (await credentialChecker(checked.provider)).checkCredentials(checked.secrets, checked.settings)).accountId;
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.failure === 'credentials') {
      throw unprocessable(`${checked.provider} refused these credentials`, CREDENTIAL_FIELD[checked.provider], 'PROVIDER_CREDENTIALS');
    }
    throw providerUnavailable(`${checked.provider} could not check these credentials; nothing was stored, try again`);
  }
}

export async function putProviderAccount(storeId: number, provider: Provider, body: ProviderAccountBody, apiBase: string): Promise<ProviderAccountResource> {
  const which = supported(provider);
  const checked = accountInput(which, body);
  const existing = await readProviderAccount(storeId, which);
  // TEST keeps its signing secret (and so its account) once made: no decryption needed to keep it.
  const keepTestSecret = which === 'test' && existing !== undefined;
  const accountId = keepTestSecret ? existing.account_id : await accountIdOf(checked);
  const sealed = keepTestSecret ? existing.secrets_ct : await sealSecrets(checked.secrets, { store_id: storeId, provider: which });
  const hint = keepTestSecret ? existing.secrets_hint : maskSecrets(checked.secrets);
  const keys = await serverKeys();
  // The first attempt writes over the account read above; a lost race (StaleRead) reads it again.
  let attempts = 0;
  const account = await retrying(async () => {
    const previous = attempts++ === 0 ? existing : await readProviderAccount(storeId, which);
    const now = nowIso();
    const nonce = previous?.notify_nonce ?? randomBytes(32).toString('base64url');
    const next: ProviderAccount = {
      store_id: storeId,
      provider: which,
      enabled: checked.enabled,
      gateways: checked.gateways,
      account_id: accountId,
      secrets_ct: sealed,
      secrets_hint: hint,
      settings: checked.settings,
      notify_nonce: nonce,
      notify_key_hash: previous?.notify_key_hash ?? hashSecret(notifyKeyUnder(keys.current, storeId, which, nonce)),
      // Carried to the current server key when only the previous one gives it (a rotation under way).
      notify_key_sealed: previous ? carriedNotifyKeySeal(previous, keys) : null,
      removed: false,
      revision: (previous?.revision ?? 0) + 1,
      created_at: previous && !previous.removed ? previous.created_at : now,
      updated_at: now,
    };
    await saveProviderAccount(next, previous);
    return next;
  });
  return providerAccountResponse(account, keys, apiBase);
}
