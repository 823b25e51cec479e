import { createHmac, timingSafeEqual } from 'node:crypto';
import { wallClockMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import {
  idempotencyKey,
  ProviderError,
  type NotificationCheck,
  type NotificationInput,
  type PaymentAtProvider,
  type ProviderAdapter,
  type ProviderCredentials,
} from '#lib/payments/adapter.ts';
import { chargeLines } from '#lib/payments/lines.ts';
import { callProvider, type CallOptions, type ProviderRequest, type ProviderResponse } from '#lib/payments/http.ts';
import type { DisputeStage, ProviderSnapshot } from '#lib/schemas/payment.ts';

/**
 * Stripe Checkout, spoken with `fetch` (the official `stripe` package is a devDependency: the
 * tests check our signature verification against its `webhooks.constructEvent`).
 *
 * | what                 | call                                                                                   |
 * |----------------------|----------------------------------------------------------------------------------------|
 * | credential check     | `GET /v1/account` (its `id`, `acct_...`, is the account every payment binds to)        |
 * | create (`STRIPE`)    | `POST /v1/checkout/sessions` mode payment; `checkout_url` = the session's `url`        |
 * | fetch                | the session (`cs_`, or found by its payment intent `pi_`) with `payment_intent.latest_charge` expanded, and `GET /v1/disputes?payment_intent=` when the charge is disputed |
 * | find by our id       | `GET /v1/payment_intents/search` on `metadata['payment_id']`                           |
 * | refund               | `POST /v1/refunds {payment_intent}`, `Idempotency-Key: refund:<id>`                    |
 * | cancel               | `POST /v1/checkout/sessions/{id}/expire`, `Idempotency-Key: cancel:<id>`               |
 *
 * Bodies are form-encoded (`a[b][0][c]=v`), every POST carries `Idempotency-Key` (Stripe replays
 * a key's first answer for 24 hours), and `Stripe-Version` is pinned so the shapes read here do
 * not change when the account's default API version does.
 *
 * The account: Stripe objects name no account outside Connect; an object fetched with the store's
 * key exists only in that key's account (another account's id answers 404), so a snapshot's
 * account is the key's, checked at PUT with `GET /v1/account`.
 */
export const STRIPE_API = 'https://api.stripe.com';
export const STRIPE_API_VERSION = '2026-10-28.endive';
/** `constructEvent`'s default: a signature older than 5 minutes is refused; a future one is not (one-sided, as the SDK does). */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;
/** Stripe takes `expires_at` 30 minutes to 24 hours after the session's creation; a minute's margin for the clocks. */
const SESSION_MIN_LIFETIME_S = 31 * 60;
const SESSION_MAX_LIFETIME_S = 24 * 60 * 60;

interface StripeCharge {
  id: string;
  amount: number;
  amount_refunded: number;
  refunded: boolean;
  disputed: boolean;
  created: number;
  status: string;
}

interface StripePaymentIntent {
  id: string;
  status: string;
  latest_charge: StripeCharge | string | null;
}

interface StripeSession {
  id: string;
  object: 'checkout.session';
  status: 'open' | 'complete' | 'expired' | null;
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  amount_total: number | null;
  currency: string | null;
  client_reference_id: string | null;
  payment_intent: StripePaymentIntent | string | null;
  url: string | null;
  expires_at: number;
}

interface StripeDispute {
  id: string;
  status: string;
  balance_transactions?: unknown[];
}

const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * A dispute as the rules read it (section 13 rule 6, payments-providers.md section 6):
 * inquiries (`warning_*`) and disputes awaiting an answer are OPEN; `lost` is LOST; `won` and an
 * inquiry closed without a dispute (`warning_closed`) are WON. `withdrawn`: Stripe took the money
 * from the balance (`charge.dispute.funds_withdrawn`: a balance transaction on an open dispute),
 * which is the money taken back.
 */
export function stripeDisputeStage(dispute: StripeDispute): { stage: DisputeStage; withdrawn: boolean } {
  if (dispute.status === 'lost') return { stage: 'LOST', withdrawn: true };
  if (dispute.status === 'won' || dispute.status === 'warning_closed') return { stage: 'WON', withdrawn: false };
  return { stage: 'OPEN', withdrawn: (dispute.balance_transactions?.length ?? 0) > 0 };
}

/**
 * A Checkout Session (its payment intent and charge expanded) as the rules read it:
 * open -> PENDING; expired -> EXPIRED; complete and paid -> PAID; complete and unpaid -> PENDING
 * (an asynchronous method still on its way) until the intent fails (FAILED); then the charge's
 * refunds and the dispute. The provider ref is the payment intent once there is one (what a refund
 * targets), the session before.
 */
export function stripeSnapshot(session: StripeSession, accountId: string | null, dispute: StripeDispute | null): ProviderSnapshot {
  const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
  const intentId = typeof session.payment_intent === 'string' ? session.payment_intent : (intent?.id ?? null);
  const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  const base = {
    provider_ref: intentId ?? session.id,
    reference: session.client_reference_id ?? null,
    account: accountId,
    amount_cents: session.amount_total ?? 0,
    currency: (session.currency ?? '').toUpperCase(),
    refunded_cents: charge?.amount_refunded ?? 0,
    dispute: null as DisputeStage | null,
    paid_at: charge && charge.status === 'succeeded' ? isoOf(charge.created) : null,
  };
  if (session.status === 'expired') return { ...base, status: 'EXPIRED' };
  if (session.status !== 'complete') return { ...base, status: 'PENDING' };
  if (session.payment_status !== 'paid') {
    const failed = intent !== null && (intent.status === 'requires_payment_method' || intent.status === 'canceled');
    return { ...base, status: failed ? 'FAILED' : 'PENDING' };
  }
  const seen = dispute ? stripeDisputeStage(dispute) : null;
  const paid = { ...base, dispute: seen?.stage ?? null };
  if (charge?.refunded) return { ...paid, status: 'REFUNDED' };
  if (seen?.withdrawn && seen.stage === 'OPEN') return { ...paid, status: 'CHARGEBACK' };
  return { ...paid, status: 'PAID' };
}

/** Stripe's form encoding: nested keys in brackets, arrays by index (`line_items[0][quantity]=1`). */
export function stripeForm(fields: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  const add = (key: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) value.forEach((item, index) => add(`${key}[${index}]`, item));
    else if (typeof value === 'object') for (const [name, inner] of Object.entries(value)) add(`${key}[${name}]`, inner);
    else form.append(key, String(value));
  };
  for (const [key, value] of Object.entries(fields)) add(key, value);
  return form;
}

/**
 * Stripe's error envelope `{error: {type, code?, message}}` as a failure: 401/403 the key; 404 no
 * such object; 409 a request with the same idempotency key still running at Stripe (transient:
 * the same request again is answered once the first ends); any other 4xx Stripe saying no (an
 * `invalid_request_error` such as `charge_disputed` or `charge_expired_for_refund`), its code kept.
 */
function failureOf(response: ProviderResponse, what: string): ProviderError {
  const error = (response.body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const text = typeof error?.message === 'string' ? error.message.slice(0, 200) : `HTTP ${response.status}`;
  const message = `${what}: ${text}${typeof error?.code === 'string' ? ` (${error.code.slice(0, 60)})` : ''}`;
  if (response.status === 401 || response.status === 403) return new ProviderError('stripe', 'credentials', message, response.status);
  if (response.status === 404) return new ProviderError('stripe', 'not_found', message, response.status);
  if (response.status === 409) return new ProviderError('stripe', 'unavailable', message, response.status);
  return new ProviderError('stripe', 'refused', message, response.status);
}

const errorCode = (response: ProviderResponse) => (response.body as { error?: { code?: unknown } } | null)?.error?.code;

function asSession(body: unknown, what: string): StripeSession {
  const session = body as StripeSession | null;
  if (session?.object !== 'checkout.session' || typeof session.id !== 'string') {
    throw new ProviderError('stripe', 'unavailable', `${what}: an answer that is not a Checkout Session`);
  }
  return session;
}

// ---- notifications -------------------------------------------------------------------------------

/** `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>...]` (several v1 while the endpoint secret rolls). */
export function parseStripeSignature(header: string): { t: string | null; v1: string[] } {
  let t: string | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') t = value;
    if (key === 'v1') v1.push(value);
  }
  return { t, v1 };
}

export function signStripe(secret: string, timestamp: number | string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex');
}

const sameHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The events that move a Checkout payment, and where each names it: the session, or the payment intent of a charge or dispute. */
const SESSION_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired']);
const CHARGE_EVENTS = new Set([
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
]);

/**
 * `Stripe-Signature`: HMAC-SHA256 of `<t>.<raw body>` under the endpoint secret, any `v1` matching,
 * `t` at most 5 minutes old (a future `t` is accepted, as `constructEvent` does). The body is
 * signed, so the ids it names may be trusted; the state is still fetched, never read from it.
 */
export function verifyStripeNotification({ rawBody, headers, secret, now }: NotificationInput): NotificationCheck {
  if (secret === null) return { outcome: 'refused', reason: 'no webhook secret configured' };
  const header = headers['stripe-signature'];
  if (!header) return { outcome: 'refused', reason: 'no Stripe-Signature header' };
  const { t, v1 } = parseStripeSignature(header);
  if (t === null || !/^\d+$/.test(t) || v1.length === 0) return { outcome: 'refused', reason: 'malformed Stripe-Signature header' };
  const expected = signStripe(secret, t, rawBody);
  if (!v1.some((candidate) => sameHex(candidate.toLowerCase(), expected))) return { outcome: 'refused', reason: 'Stripe-Signature does not match' };
  if (Math.floor(now / 1000) - Number(t) > STRIPE_SIGNATURE_TOLERANCE_S) return { outcome: 'refused', reason: 'Stripe-Signature older than 5 minutes' };

  let event: { type?: unknown; data?: { object?: Record<string, unknown> } };
  try {
    event = JSON.parse(rawBody) as typeof event;
  } catch {
    return { outcome: 'ignored' };
  }
  const object = event.data?.object ?? {};
  const id = (value: unknown, prefix: RegExp) => (typeof value === 'string' && prefix.test(value) && value.length <= 255 ? value : undefined);
  const type = typeof event.type === 'string' ? event.type : '';
  let refs: (string | undefined)[] = [];
  if (SESSION_EVENTS.has(type)) refs = [id(object.id, /^cs_/)];
  else if (CHARGE_EVENTS.has(type)) refs = [id(object.payment_intent, /^pi_/) ?? id(object.charge, /^ch_/) ?? id(object.id, /^ch_/)];
  const found = refs.filter((ref): ref is string => ref !== undefined);
  return found.length === 0 ? { outcome: 'ignored' } : { outcome: 'verified', refs: found };
}

// ---- the adapter ---------------------------------------------------------------------------------

export interface StripeOptions extends CallOptions {
  /** `STRIPE_API_URL` on the local stack (a fake server); Stripe's own host everywhere else. */
  baseUrl?: string;
  /** The clock for the session's expiry bounds (tests). */
  now?: () => number;
}

export function stripeAdapter(options: StripeOptions = {}): ProviderAdapter {
  const baseUrl = (options.baseUrl ?? config.stripeApiUrl ?? STRIPE_API).replace(/\/+$/, '');
  // Stripe bounds expires_at by its own (real) clock.
  const now = options.now ?? wallClockMs;

  const keyOf = (secrets: Readonly<Record<string, string>>) => {
    const key = secrets.secret_key;
    if (!key) throw new ProviderError('stripe', 'credentials', 'no secret_key');
    return key;
  };

  const call = (secretKey: string, request: Omit<ProviderRequest, 'url' | 'headers'> & { path: string }) =>
    callProvider(
      'stripe',
      {
        ...request,
        idempotencyHeader: 'idempotency-key',
        url: `${baseUrl}${request.path}`,
        headers: { authorization: `Bearer ${secretKey}`, 'stripe-version': STRIPE_API_VERSION },
      },
      options,
    );

  const EXPAND_SESSION = 'expand[]=payment_intent.latest_charge';

  async function disputeOf(secretKey: string, session: StripeSession): Promise<StripeDispute | null> {
    const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
    const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
    if (!intent || !charge?.disputed) return null;
    const response = await call(secretKey, { method: 'GET', path: `/v1/disputes?payment_intent=${encodeURIComponent(intent.id)}&limit=1` });
    if (response.status !== 200) throw failureOf(response, 'list disputes');
    const [latest] = ((response.body as { data?: StripeDispute[] } | null)?.data ?? []) as StripeDispute[];
    return latest ?? null;
  }

  async function snapshotOf(credentials: ProviderCredentials, session: StripeSession): Promise<ProviderSnapshot> {
    return stripeSnapshot(session, credentials.accountId, await disputeOf(keyOf(credentials.secrets), session));
  }

  async function sessionOfIntent(secretKey: string, intentId: string): Promise<StripeSession> {
    const response = await call(secretKey, {
      method: 'GET',
      path: `/v1/checkout/sessions?payment_intent=${encodeURIComponent(intentId)}&expand[]=data.payment_intent.latest_charge`,
    });
    if (response.status !== 200) throw failureOf(response, 'find session');
    const [session] = (response.body as { data?: unknown[] } | null)?.data ?? [];
    if (!session) throw new ProviderError('stripe', 'not_found', `find session: no Checkout Session made ${intentId}`, 404);
    return asSession(session, 'find session');
  }

  async function sessionOf(credentials: ProviderCredentials, ref: string): Promise<StripeSession> {
    const key = keyOf(credentials.secrets);
    if (ref.startsWith('cs_')) {
      const response = await call(key, { method: 'GET', path: `/v1/checkout/sessions/${encodeURIComponent(ref)}?${EXPAND_SESSION}` });
      if (response.status !== 200) throw failureOf(response, 'fetch session');
      return asSession(response.body, 'fetch session');
    }
    if (ref.startsWith('pi_')) return sessionOfIntent(key, ref);
    if (ref.startsWith('ch_')) {
      const response = await call(key, { method: 'GET', path: `/v1/charges/${encodeURIComponent(ref)}` });
      if (response.status !== 200) throw failureOf(response, 'fetch charge');
      const intent = (response.body as { payment_intent?: unknown } | null)?.payment_intent;
      if (typeof intent !== 'string') throw new ProviderError('stripe', 'not_found', 'fetch charge: a charge of no payment intent', 404);
      return sessionOfIntent(key, intent);
    }
    throw new ProviderError('stripe', 'not_found', `no Stripe object of ours is named ${ref.slice(0, 40)}`);
  }

  const fetchSnapshot = async (credentials: ProviderCredentials, ref: string) => snapshotOf(credentials, await sessionOf(credentials, ref));

  /** A session's expiry within what Stripe takes (30 minutes to 24 hours from now): the order's, or the nearest bound. */
  function sessionExpiry(expiresAt: string | null): number {
    const nowS = Math.floor(now() / 1000);
    const wanted = expiresAt ? Math.floor(Date.parse(expiresAt) / 1000) : nowS + SESSION_MIN_LIFETIME_S;
    return Math.min(nowS + SESSION_MAX_LIFETIME_S, Math.max(nowS + SESSION_MIN_LIFETIME_S, wanted));
  }

  return {
    provider: 'stripe',

    async checkCredentials(secrets) {
      const response = await call(keyOf(secrets), { method: 'GET', path: '/v1/account' });
      if (response.status !== 200) throw failureOf(response, 'check credentials');
      const id = (response.body as { id?: unknown } | null)?.id;
      if (typeof id !== 'string' || !id.startsWith('acct_')) throw new ProviderError('stripe', 'unavailable', 'check credentials: an answer with no account id');
      return { accountId: id };
    },

    async createCharge(credentials, request) {
      const { payment, order, returnUrl } = request;
      if (payment.gateway !== 'STRIPE') throw new ProviderError('stripe', 'refused', `gateway ${payment.gateway} is not Stripe's`);
      // Checkout needs somewhere to send the buyer back to; the checkout flow asks for return_url with STRIPE.
      if (!returnUrl) throw new ProviderError('stripe', 'refused', 'a Checkout Session needs a return_url');
      const currency = payment.currency.toLowerCase();
      const response = await call(keyOf(credentials.secrets), {
        method: 'POST',
        path: '/v1/checkout/sessions',
        idempotencyKey: idempotencyKey('create', payment.id),
        body: stripeForm({
          mode: 'payment',
          client_reference_id: payment.id,
          metadata: { payment_id: payment.id, order_id: order.id },
          payment_intent_data: { metadata: { payment_id: payment.id, order_id: order.id } },
          customer_email: order.payer.email,
          success_url: returnUrl,
          cancel_url: returnUrl,
          expires_at: sessionExpiry(payment.expires_at),
          line_items: chargeLines(request).map((line) => ({
            quantity: line.quantity,
            price_data: { currency, unit_amount: line.unit_cents, product_data: { name: line.name } },
          })),
        }),
      });
      if (response.status !== 200) throw failureOf(response, 'create Checkout Session');
      const session = asSession(response.body, 'create Checkout Session');
      if (!session.url) throw new ProviderError('stripe', 'unavailable', 'create Checkout Session: no url in the answer');
      return {
        provider_ref: session.id,
        snapshot: stripeSnapshot(session, credentials.accountId, null),
        pix_code: null,
        qr_code: null,
        checkout_url: session.url,
        expires_at: payment.expires_at ?? isoOf(session.expires_at),
      };
    },

    fetch: fetchSnapshot,

    async findByReference(credentials, paymentId) {
      // Sessions cannot be listed by client_reference_id; their payment intents carry our id in metadata.
      const query = new URLSearchParams({ query: `metadata['payment_id']:'${paymentId.replace(/[^A-Za-z0-9_-]/g, '')}'` });
      const response = await call(keyOf(credentials.secrets), { method: 'GET', path: `/v1/payment_intents/search?${query}` });
      if (response.status !== 200) throw failureOf(response, 'search payment intents');
      const intents = ((response.body as { data?: { id?: unknown }[] } | null)?.data ?? []).map((intent) => intent.id).filter((id): id is string => typeof id === 'string');
      return Promise.all(intents.map((id) => fetchSnapshot(credentials, id)));
    },

    async refund(credentials, payment: PaymentAtProvider) {
      const key = keyOf(credentials.secrets);
      let intent = payment.charge_ref?.startsWith('pi_') ? payment.charge_ref : null;
      if (!intent && payment.provider_ref) {
        const session = await sessionOf(credentials, payment.provider_ref);
        intent = typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
      }
      if (!intent) throw new ProviderError('stripe', 'refused', 'refund: no payment has taken money for it yet');
      const response = await call(key, { method: 'POST', path: '/v1/refunds', idempotencyKey: idempotencyKey('refund', payment.id), body: stripeForm({ payment_intent: intent }) });
      if (response.status === 200) return fetchSnapshot(credentials, intent);
      // Refunded already (from the dashboard, or a first try whose answer was lost): the state says so.
      if (errorCode(response) === 'charge_already_refunded') {
        const current = await fetchSnapshot(credentials, intent);
        if (current.status === 'REFUNDED') return current;
      }
      throw failureOf(response, 'refund');
    },

    async cancel(credentials, payment: PaymentAtProvider) {
      if (!payment.provider_ref?.startsWith('cs_')) return;
      const response = await call(keyOf(credentials.secrets), {
        method: 'POST',
        path: `/v1/checkout/sessions/${encodeURIComponent(payment.provider_ref)}/expire`,
        idempotencyKey: idempotencyKey('cancel', payment.id),
        body: new URLSearchParams(),
      });
      if (response.status !== 200) throw failureOf(response, 'expire Checkout Session');
    },

    verifyNotification: verifyStripeNotification,
  };
}
