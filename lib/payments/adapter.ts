import type { Gateway, Provider, ProviderSnapshot } from '#lib/schemas/payment.ts';
import type { ProviderSettings } from '#lib/schemas/payment-provider.ts';

/*
 * What every payment provider adapter does (extensions section 13). An adapter is the only code
 * that speaks a provider's wire format: it turns our payment into the provider's request and the
 * provider's answers into a `ProviderSnapshot`, the only shape lib/domain/payment.ts `settle` acts
 * on. Adapters hold no state and read no table: the flow hands them the store's decrypted
 * credentials for the one call, and a function loads only the adapters it uses (lib/payments/index.ts).
 */

/**
 * Which of an account's secrets its notifications are checked with: the HMAC secret of Mercado
 * Pago and Stripe, the webhook id PayPal's signed message names, the TEST gateway's signing secret.
 */
export const NOTIFICATION_SECRET: Readonly<Record<Provider, string>> = {
  mercadopago: 'webhook_secret',
  stripe: 'webhook_secret',
  paypal: 'webhook_id',
  test: 'signing_secret',
};

/** The store's account at the provider, decrypted for one call. Never logged, never returned. */
export interface ProviderCredentials {
  /**
   * The secrets as the operator gave them (Mercado Pago `access_token` and `webhook_secret`; Stripe
   * `secret_key` and `webhook_secret`; PayPal `client_id`, `client_secret` and `webhook_id`; TEST `signing_secret`).
   */
  secrets: Readonly<Record<string, string>>;
  /** The account the credential check found: what the binding check (rule 2) compares to. */
  accountId: string | null;
  /** The account's settings that decide where to call (PayPal `environment`: sandbox or live). */
  settings?: Readonly<ProviderSettings>;
}

export interface ChargeRequest {
  payment: { id: string; gateway: Gateway; amount: number; currency: string; expires_at: string | null };
  order: { id: number; internal_id: string; description: string; payer: { email: string; name: string; document?: string | null } };
  /**
   * The order's lines as the buyer sees them (Stripe's line items, PayPal's items), prices in the
   * store's currency. Sent only when they add up to the payment's amount; otherwise (a coupon, a
   * discount) one line of the order's total, as providers take no negative lines.
   */
  lines?: readonly ChargeLine[];
  /** `<API base>/v1/payment/notify/{provider}/{notify_key}`, sent with the charge where the provider takes one. */
  notificationUrl: string | null;
  /** Where the buyer comes back to after a redirect checkout (already checked: no open redirect). */
  returnUrl: string | null;
}

export interface ChargeLine {
  name: string;
  quantity: number;
  unit_price: number;
}

/** What the buyer needs to pay, and the provider's first word on the payment. */
export interface CreatedCharge {
  /** The object created: a Mercado Pago PIX payment id, a Checkout Pro preference id, a TEST payment id. */
  provider_ref: string;
  /** The state the create call answered, when it answered a payment (a preference is not one yet). */
  snapshot: ProviderSnapshot | null;
  pix_code: string | null;
  /** The QR image, base64 PNG. */
  qr_code: string | null;
  checkout_url: string | null;
  expires_at: string | null;
}

/** What a notification's headers and body say, once checked. Never acted on: only a hint of what to fetch. */
export type NotificationCheck =
  /** Signed with the store's webhook secret: the ids may be fetched, even ones the store does not know yet. */
  | { outcome: 'verified'; refs: string[] }
  /** No webhook secret configured (Mercado Pago's hint-only mode): fetch only payments the store already knows. */
  | { outcome: 'hint'; refs: string[] }
  /** Signed, but about nothing payments use (another topic): answered 200, nothing fetched. */
  | { outcome: 'ignored' }
  /** Missing or wrong signature: 401, nothing fetched. `reason` is for the log, never the answer. */
  | { outcome: 'refused'; reason: string };

export interface NotificationInput {
  /** The body exactly as received (the signature of some providers covers it). */
  rawBody: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
  /** The store's webhook secret (PayPal: the `webhook_id` its signatures name), or null when none is configured. */
  secret: string | null;
  now: number;
}

export interface PaymentAtProvider {
  id: string;
  gateway: Gateway;
  amount: number;
  provider_ref: string | null;
  /** The provider's payment that took the money (what a refund targets). */
  charge_ref: string | null;
}

export interface ProviderAdapter {
  readonly provider: Provider;
  /** One provider call that proves the credentials and names their account (Mercado Pago `GET /users/me`, Stripe `GET /v1/account`, PayPal an OAuth token). */
  checkCredentials(secrets: Readonly<Record<string, string>>, settings?: Readonly<ProviderSettings>): Promise<{ accountId: string }>;
  createCharge(credentials: ProviderCredentials, request: ChargeRequest): Promise<CreatedCharge>;
  /** The provider's current state of one of its payments. */
  fetch(credentials: ProviderCredentials, providerRef: string): Promise<ProviderSnapshot>;
  /**
   * The provider's payments made for our payment id (a Checkout Pro preference yields them one by
   * one, none known to us until a notification names it): the poll and the reconciler ask this
   * when no charge is known yet. Newest first, as the provider lists them.
   */
  findByReference(credentials: ProviderCredentials, paymentId: string): Promise<ProviderSnapshot[]>;
  /** Refunds in full; idempotent under `refund:<payment id>`. Answers the payment as it now stands. */
  refund(credentials: ProviderCredentials, payment: PaymentAtProvider): Promise<ProviderSnapshot>;
  /** Stops a live charge from being paid; idempotent under `cancel:<payment id>`. Best effort: callers log, not fail. */
  cancel(credentials: ProviderCredentials, payment: PaymentAtProvider): Promise<void>;
  /**
   * PayPal only: takes the money of an order the buyer approved (`snapshot.capturable`); idempotent
   * under `capture:<payment id>`, so the buyer's return, the notification, the poll and the
   * reconciler may all ask and the money is taken once. Answers the payment as it now stands.
   */
  capture?(credentials: ProviderCredentials, payment: PaymentAtProvider): Promise<ProviderSnapshot>;
  /** Awaited: PayPal's check may fetch its signing certificate (cached per URL); the others answer at once. */
  verifyNotification(input: NotificationInput): NotificationCheck | Promise<NotificationCheck>;
}

/**
 * Why a provider call did not give an answer to act on:
 * - `unavailable`: unreachable, timed out, 5xx or 429 after the one retry (502 to a buyer or an
 *   operator, 503 + Retry-After to a provider's notification, so it sends again);
 * - `credentials`: the provider refused the credentials (422 `PROVIDER_CREDENTIALS` when they are given);
 * - `refused`: the provider refused the request itself (its message kept for the operator's log);
 * - `not_found`: no such object at the provider (a notification naming an id of another account).
 */
export type ProviderFailure = 'unavailable' | 'credentials' | 'refused' | 'not_found';

export class ProviderError extends Error {
  readonly failure: ProviderFailure;
  readonly provider: Provider;
  /** The HTTP status the provider answered, when it answered. */
  readonly status: number | null;
  /** What failed and the provider's own words (`refund: Payment too old to be refunded`), without the provider's name. */
  readonly reason: string;

  constructor(provider: Provider, failure: ProviderFailure, message: string, status: number | null = null) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderError';
    this.reason = message;
    this.provider = provider;
    this.failure = failure;
    this.status = status;
  }
}

export type ProviderAction = 'create' | 'capture' | 'refund' | 'cancel';

/**
 * Every provider POST carries a key derived from the payment and the action, never a random one:
 * a retry after a timeout (ours, or the reconciler's minutes later) is the same request to the
 * provider, which answers the first result instead of charging or refunding twice.
 */
export const idempotencyKey = (action: ProviderAction, paymentId: string) => `${action}:${paymentId}`;
