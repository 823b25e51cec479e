import * as v from 'valibot';
import { timestamp } from '#lib/schemas/common.ts';
import { GATEWAYS, PROVIDERS, type Gateway, type Provider } from '#lib/schemas/payment.ts';

/*
 * A store's account at a payment provider (extensions section 13): the body of
 * `PUT /app/payment/provider/{provider}` and the masked answer of every provider route.
 *
 * One body schema for every provider, each field optional here: which fields a provider takes,
 * and which it requires, is decided per provider by lib/flows/payment-provider.ts (`accountInput`),
 * so that a field another provider takes is a 422 naming that field, never a silent drop.
 */

/** The providers whose accounts this build can hold (all of section 13's). */
export const SUPPORTED_PROVIDERS = ['mercadopago', 'stripe', 'paypal', 'test'] as const satisfies readonly Provider[];
export type SupportedProvider = (typeof SUPPORTED_PROVIDERS)[number];

export const providerParams = v.object({
  provider: v.picklist(PROVIDERS, `provider must be one of ${PROVIDERS.join(', ')}`),
});

/** Provider secrets: printable, no whitespace, and short enough for KMS's 4 KB plaintext once all are joined. */
const SECRET_MAX = 512;
const secret = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(SECRET_MAX, `${name} must be at most ${SECRET_MAX} characters`),
    v.regex(/^[\x21-\x7e]+$/, `${name} must be printable ASCII without spaces`),
  );

/** A secret with the prefix its provider gives it (a Stripe `sk_`/`rk_` key, a `whsec_` endpoint secret): a pasted wrong value is a 422, not a provider call. */
const prefixedSecret = (name: string, prefix: RegExp, what: string) => v.pipe(secret(name), v.regex(prefix, `${name} must be ${what}`));

export const PAYPAL_ENVIRONMENTS = ['sandbox', 'live'] as const;
export type PayPalEnvironment = (typeof PAYPAL_ENVIRONMENTS)[number];

export const PIX_EXPIRATION_MIN = 30;
export const PIX_EXPIRATION_MAX = 1440;
export const PIX_EXPIRATION_DEFAULT = 30;

export const providerAccountBody = v.strictObject({
  access_token: v.optional(secret('access_token')),
  webhook_secret: v.optional(secret('webhook_secret')),
  gateways: v.optional(
    v.pipe(
      v.array(v.picklist(GATEWAYS, `gateways must hold only ${GATEWAYS.join(', ')}`), 'gateways must be an array'),
      v.minLength(1, 'gateways must not be empty'),
      v.maxLength(GATEWAYS.length, `gateways must hold at most ${GATEWAYS.length} gateways`),
    ),
  ),
  pix_expiration_minutes: v.optional(
    v.pipe(
      v.number('pix_expiration_minutes must be a number'),
      v.integer('pix_expiration_minutes must be a whole number'),
      v.minValue(PIX_EXPIRATION_MIN, `pix_expiration_minutes must be at least ${PIX_EXPIRATION_MIN}`),
      v.maxValue(PIX_EXPIRATION_MAX, `pix_expiration_minutes must be at most ${PIX_EXPIRATION_MAX}`),
    ),
  ),
  /** Stripe: a secret key (`sk_...`) or, as advised, a restricted key (`rk_...`). */
  secret_key: v.optional(prefixedSecret('secret_key', /^(sk|rk)_(test|live)_/, 'a Stripe secret key (sk_...) or restricted key (rk_...)')),
  client_id: v.optional(secret('client_id')),
  client_secret: v.optional(secret('client_secret')),
  /** PayPal: the id of the webhook made in the app's dashboard; its signatures name it. */
  webhook_id: v.optional(secret('webhook_id')),
  environment: v.optional(v.picklist(PAYPAL_ENVIRONMENTS, `environment must be one of ${PAYPAL_ENVIRONMENTS.join(', ')}`)),
  enabled: v.optional(v.boolean('enabled must be a boolean')),
});
export type ProviderAccountBody = v.InferOutput<typeof providerAccountBody>;

export const providerAccountResource = v.object({
  provider: v.picklist(PROVIDERS),
  enabled: v.boolean(),
  gateways: v.array(v.picklist(GATEWAYS)),
  account_id: v.string(),
  /** Each secret as `...<last 4>` (or `...` for a short one): which one it is, never what it is. */
  secrets: v.record(v.string(), v.string()),
  settings: v.object({ pix_expiration_minutes: v.optional(v.number()), environment: v.optional(v.picklist(PAYPAL_ENVIRONMENTS)) }),
  /** Paste into the provider's dashboard; null only after the server secret was rotated twice since the last PUT (PUT again). */
  notification_url: v.nullable(v.string()),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ProviderAccountResource = v.InferOutput<typeof providerAccountResource>;

/** One entry of `GET /webstore/gateway` (the shape the real system's clients read). */
export const gatewayChoiceResource = v.object({
  gateway: v.picklist(GATEWAYS),
  display: v.string(),
  /** The lower-case method name, for icons (`pix`). */
  name: v.string(),
  fee: v.literal(0),
  is_percentage_fee: v.literal(false),
});

export interface ProviderSettings {
  pix_expiration_minutes?: number;
  /** PayPal: which of its hosts the account lives on. */
  environment?: PayPalEnvironment;
}

/** What a provider account holds once checked: the operator's choices, and its secrets still in clear (sealed by the flow). */
export interface CheckedAccount {
  provider: SupportedProvider;
  enabled: boolean;
  gateways: Gateway[];
  settings: ProviderSettings;
  secrets: Record<string, string>;
}
