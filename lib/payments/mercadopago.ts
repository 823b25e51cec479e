import { createHmac, timingSafeEqual } from 'node:crypto';
import { nowIso } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import {
  idempotencyKey,
  ProviderError,
  type ChargeRequest,
  type CreatedCharge,
  type NotificationCheck,
  type NotificationInput,
  type PaymentAtProvider,
  type ProviderAdapter,
  type ProviderCredentials,
} from '#lib/payments/adapter.ts';
import { callProvider, type CallOptions, type ProviderRequest, type ProviderResponse } from '#lib/payments/http.ts';
import type { ProviderSnapshot } from '#lib/schemas/payment.ts';

/**
 * Mercado Pago, spoken with `fetch` (docs/payments.md, "SDK or fetch": the official SDK has no
 * base-URL option, leaks one call's idempotency key into the next on a shared config
 * (sdk-nodejs #481), and defaults to 60 s and 3 retries; its bundle and cold start are measured there).
 *
 * | gateway       | create                                        | the buyer gets                                 |
 * |---------------|-----------------------------------------------|------------------------------------------------|
 * | `PIX`         | `POST /v1/payments` `payment_method_id: pix`  | `pix_code` (EMV copy-and-paste), `qr_code` (base64 PNG), `expires_at` |
 * | `MERCADOPAGO` | `POST /checkout/preferences` (Checkout Pro)   | `checkout_url` (`init_point`)                  |
 *
 * Then `GET /v1/payments/{id}` (fetch), `GET /v1/payments/search?external_reference=` (a
 * preference's payments), `POST /v1/payments/{id}/refunds`, `PUT /v1/payments/{id}`
 * `{status: cancelled}`, `GET /users/me` (the credential check). Every write carries
 * `X-Idempotency-Key` (`create:<payment id>`, `refund:...`, `cancel:...`), mandatory at Mercado
 * Pago for payments and refunds.
 */
export const MERCADOPAGO_API = 'https://api.mercadopago.com';

interface MercadoPagoPayment {
  id: number | string;
  status: string;
  status_detail?: string | null;
  external_reference?: string | null;
  collector_id?: number | string | null;
  transaction_amount: number;
  transaction_amount_refunded?: number | null;
  currency_id: string;
  date_approved?: string | null;
  date_of_expiration?: string | null;
  point_of_interaction?: { transaction_data?: { qr_code?: string | null; qr_code_base64?: string | null; ticket_url?: string | null } | null } | null;
}

const cents = (amount: number | null | undefined) => Math.round((amount ?? 0) * 100);

/**
 * Mercado Pago's payment statuses as the rules read them. `cancelled` is "cancelled by one of the
 * parties or expired" (`status_detail: expired`); `in_mediation` is a dispute the buyer opened;
 * `charged_back` is money taken back (`status_detail: reimbursed` when Mercado Pago covered it:
 * read as a dispute won, checked only against the docs).
 */
export function mercadoPagoSnapshot(payment: MercadoPagoPayment): ProviderSnapshot {
  const base = {
    provider_ref: String(payment.id),
    reference: payment.external_reference ?? null,
    account: payment.collector_id === undefined || payment.collector_id === null ? null : String(payment.collector_id),
    amount_cents: cents(payment.transaction_amount),
    currency: (payment.currency_id ?? '').toUpperCase(),
    refunded_cents: cents(payment.transaction_amount_refunded),
    dispute: null,
    paid_at: payment.date_approved ?? null,
  } satisfies Omit<ProviderSnapshot, 'status'>;
  switch (payment.status) {
    case 'approved':
      return { ...base, status: 'PAID' };
    case 'in_mediation':
      return { ...base, status: 'PAID', dispute: 'OPEN' };
    case 'refunded':
      return { ...base, status: 'REFUNDED' };
    case 'charged_back':
      return { ...base, status: 'CHARGEBACK', dispute: payment.status_detail === 'reimbursed' ? 'WON' : 'LOST' };
    case 'rejected':
      return { ...base, status: 'FAILED' };
    case 'cancelled':
      return { ...base, status: payment.status_detail === 'expired' ? 'EXPIRED' : 'CANCELED' };
    default:
      // pending, in_process, authorized, and any status added later: not paid yet.
      return { ...base, status: 'PENDING' };
  }
}

/** Mercado Pago dates carry an offset (`2026-11-26T10:30:00.000-03:00`); UTC is written as +00:00. */
const mercadoPagoDate = (iso: string) => iso.replace(/Z$/, '+00:00');

function failureOf(response: ProviderResponse, what: string): ProviderError {
  const body = (response.body ?? {}) as { message?: unknown };
  const message = typeof body.message === 'string' ? body.message.slice(0, 200) : `HTTP ${response.status}`;
  if (response.status === 401 || response.status === 403) return new ProviderError('mercadopago', 'credentials', `${what}: ${message}`, response.status);
  if (response.status === 404) return new ProviderError('mercadopago', 'not_found', `${what}: ${message}`, response.status);
  return new ProviderError('mercadopago', 'refused', `${what}: ${message}`, response.status);
}

function asPayment(body: unknown, what: string): MercadoPagoPayment {
  const payment = body as MercadoPagoPayment | null;
  if (!payment || (typeof payment.id !== 'number' && typeof payment.id !== 'string') || typeof payment.status !== 'string' || typeof payment.transaction_amount !== 'number') {
    throw new ProviderError('mercadopago', 'unavailable', `${what}: an answer that is not a payment`);
  }
  return payment;
}

// ---- notifications -------------------------------------------------------------------------------

/** The signed string: `id:<data.id>;request-id:<x-request-id>;ts:<ts>;`, an absent part left out, the last `;` kept. */
export function mercadoPagoManifest(dataId: string | undefined, requestId: string | undefined, ts: string): string {
  return [dataId ? `id:${dataId}` : null, requestId ? `request-id:${requestId}` : null, `ts:${ts}`].filter(Boolean).join(';') + ';';
}

export function signMercadoPago(secret: string, manifest: string): string {
  return createHmac('sha256', secret).update(manifest, 'utf8').digest('hex');
}

function parseSignature(header: string): { ts?: string; v1?: string } {
  const parts: { ts?: string; v1?: string } = {};
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim().toLowerCase();
    const value = part.slice(at + 1).trim();
    if (key === 'ts' || key === 'v1') parts[key] = value;
  }
  return parts;
}

const sameHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The `x-signature` check. It covers the resource id, the request id and `ts`, not the body, so
 * the body is never acted on: the flow fetches the payment. `ts` gets no age limit (its unit is
 * disputed between Mercado Pago's docs and SDK, and retries 15 minutes apart may not re-sign); a
 * replay can only make us fetch again. The id is the query's `data.id` as the docs say; an
 * alphanumeric id is also tried lower-cased, as some integrations report Mercado Pago signs it.
 */
export function verifyMercadoPagoNotification({ rawBody, headers, query, secret }: NotificationInput): NotificationCheck {
  let body: { type?: unknown; action?: unknown; data?: { id?: unknown } } = {};
  try {
    const parsed = JSON.parse(rawBody || '{}') as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as typeof body;
  } catch {
    // A body that is not JSON still names its id in the query; the signature decides.
  }
  const queryId = query['data.id'] ?? query.id;
  const bodyId = typeof body.data?.id === 'string' || typeof body.data?.id === 'number' ? String(body.data.id) : undefined;
  const type = typeof body.type === 'string' ? body.type : (query.type ?? query.topic);

  if (secret !== null) {
    const header = headers['x-signature'];
    if (!header) return { outcome: 'refused', reason: 'no x-signature header' };
    const { ts, v1 } = parseSignature(header);
    if (!ts || !/^\d+$/.test(ts) || !v1) return { outcome: 'refused', reason: 'malformed x-signature header' };
    const requestId = headers['x-request-id'];
    const candidates = queryId && queryId !== queryId.toLowerCase() ? [queryId, queryId.toLowerCase()] : [queryId];
    const signed = candidates.some((id) => sameHex(signMercadoPago(secret, mercadoPagoManifest(id, requestId, ts)), v1.toLowerCase()));
    if (!signed) return { outcome: 'refused', reason: 'x-signature does not match' };
  }
  if (type !== 'payment') return { outcome: 'ignored' };
  const usable = (id: string | undefined): id is string => typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id);
  // Only the query's id is covered by the signature: it may name a payment the store does not know yet.
  if (secret !== null && usable(queryId)) return { outcome: 'verified', refs: [queryId] };
  // An id nothing signed (no secret, or only in the body) is a hint: fetched only if the store knows it.
  const refs = [...new Set([queryId, bodyId].filter(usable))];
  return refs.length === 0 ? { outcome: 'ignored' } : { outcome: 'hint', refs };
}

// ---- the adapter ---------------------------------------------------------------------------------

export interface MercadoPagoOptions extends CallOptions {
  /** `MERCADOPAGO_API_URL` on the local stack (a fake server); Mercado Pago's own host everywhere else. */
  baseUrl?: string;
}

export function mercadoPagoAdapter(options: MercadoPagoOptions = {}): ProviderAdapter {
  const baseUrl = (options.baseUrl ?? config.mercadopagoApiUrl ?? MERCADOPAGO_API).replace(/\/+$/, '');

  const call = (accessToken: string, request: Omit<ProviderRequest, 'url' | 'headers'> & { path: string }) =>
    callProvider('mercadopago', { ...request, url: `${baseUrl}${request.path}`, headers: { authorization: `Bearer ${accessToken}` } }, options);

  const tokenOf = (credentials: Pick<ProviderCredentials, 'secrets'>) => {
    const token = credentials.secrets.access_token;
    if (!token) throw new ProviderError('mercadopago', 'credentials', 'no access_token');
    return token;
  };

  async function fetchPayment(credentials: ProviderCredentials, id: string): Promise<ProviderSnapshot> {
    const response = await call(tokenOf(credentials), { method: 'GET', path: `/v1/payments/${encodeURIComponent(id)}` });
    if (response.status !== 200) throw failureOf(response, 'fetch payment');
    return mercadoPagoSnapshot(asPayment(response.body, 'fetch payment'));
  }

  async function createPix(credentials: ProviderCredentials, { payment, order, notificationUrl }: ChargeRequest): Promise<CreatedCharge> {
    const [firstName, ...lastNames] = order.payer.name.trim().split(/\s+/);
    const response = await call(tokenOf(credentials), {
      method: 'POST',
      path: '/v1/payments',
      idempotencyKey: idempotencyKey('create', payment.id),
      body: {
        transaction_amount: payment.amount,
        description: order.description,
        payment_method_id: 'pix',
        external_reference: payment.id,
        ...(notificationUrl ? { notification_url: notificationUrl } : {}),
        ...(payment.expires_at ? { date_of_expiration: mercadoPagoDate(payment.expires_at) } : {}),
        payer: {
          email: order.payer.email,
          ...(firstName ? { first_name: firstName } : {}),
          ...(lastNames.length ? { last_name: lastNames.join(' ') } : {}),
          ...(order.payer.document ? { identification: { type: 'CPF', number: order.payer.document } } : {}),
        },
      },
    });
    if (response.status !== 200 && response.status !== 201) throw failureOf(response, 'create PIX payment');
    const created = asPayment(response.body, 'create PIX payment');
    const data = created.point_of_interaction?.transaction_data;
    if (!data?.qr_code) throw new ProviderError('mercadopago', 'refused', 'create PIX payment: no qr_code in the answer', response.status);
    return {
      provider_ref: String(created.id),
      snapshot: mercadoPagoSnapshot(created),
      pix_code: data.qr_code,
      qr_code: data.qr_code_base64 ?? null,
      checkout_url: null,
      expires_at: payment.expires_at ?? created.date_of_expiration ?? null,
    };
  }

  async function createPreference(credentials: ProviderCredentials, { payment, order, notificationUrl, returnUrl }: ChargeRequest): Promise<CreatedCharge> {
    const response = await call(tokenOf(credentials), {
      method: 'POST',
      path: '/checkout/preferences',
      idempotencyKey: idempotencyKey('create', payment.id),
      body: {
        items: [{ id: String(order.id), title: order.description, quantity: 1, unit_price: payment.amount, currency_id: payment.currency }],
        payer: { email: order.payer.email },
        external_reference: payment.id,
        ...(notificationUrl ? { notification_url: notificationUrl } : {}),
        ...(returnUrl ? { back_urls: { success: returnUrl, pending: returnUrl, failure: returnUrl }, auto_return: 'approved' } : {}),
        ...(payment.expires_at ? { expires: true, expiration_date_to: mercadoPagoDate(payment.expires_at) } : {}),
      },
    });
    if (response.status !== 200 && response.status !== 201) throw failureOf(response, 'create preference');
    const preference = response.body as { id?: unknown; init_point?: unknown } | null;
    if (typeof preference?.id !== 'string' || typeof preference.init_point !== 'string') {
      throw new ProviderError('mercadopago', 'unavailable', 'create preference: an answer that is not a preference');
    }
    return { provider_ref: preference.id, snapshot: null, pix_code: null, qr_code: null, checkout_url: preference.init_point, expires_at: payment.expires_at };
  }

  return {
    provider: 'mercadopago',

    async checkCredentials(secrets) {
      const response = await call(tokenOf({ secrets }), { method: 'GET', path: '/users/me' });
      if (response.status !== 200) throw failureOf(response, 'check credentials');
      const id = (response.body as { id?: unknown } | null)?.id;
      if (typeof id !== 'number' && typeof id !== 'string') throw new ProviderError('mercadopago', 'unavailable', 'check credentials: an answer with no account id');
      return { accountId: String(id) };
    },

    createCharge(credentials, request) {
      if (request.payment.gateway === 'PIX') return createPix(credentials, request);
      if (request.payment.gateway === 'MERCADOPAGO') return createPreference(credentials, request);
      throw new ProviderError('mercadopago', 'refused', `gateway ${request.payment.gateway} is not Mercado Pago's`);
    },

    fetch: fetchPayment,

    async findByReference(credentials, paymentId) {
      const query = new URLSearchParams({ external_reference: paymentId, sort: 'date_created', criteria: 'desc' });
      const response = await call(tokenOf(credentials), { method: 'GET', path: `/v1/payments/search?${query}` });
      if (response.status !== 200) throw failureOf(response, 'search payments');
      const results = (response.body as { results?: unknown } | null)?.results;
      if (!Array.isArray(results)) throw new ProviderError('mercadopago', 'unavailable', 'search payments: an answer with no results');
      return results.map((result) => mercadoPagoSnapshot(asPayment(result, 'search payments')));
    },

    async refund(credentials, payment: PaymentAtProvider) {
      const target = payment.charge_ref ?? (payment.gateway === 'PIX' ? payment.provider_ref : null);
      if (!target) throw new ProviderError('mercadopago', 'refused', 'refund: no Mercado Pago payment has taken money for it yet');
      const response = await call(tokenOf(credentials), {
        method: 'POST',
        path: `/v1/payments/${encodeURIComponent(target)}/refunds`,
        idempotencyKey: idempotencyKey('refund', payment.id),
        body: {},
      });
      if (response.status === 200 || response.status === 201) return fetchPayment(credentials, target);
      // Refunded already (by the seller's dashboard, or a first try whose answer was lost): the state says so.
      if (response.status === 400) {
        const now = await fetchPayment(credentials, target);
        if (now.status === 'REFUNDED') return now;
      }
      throw failureOf(response, 'refund');
    },

    async cancel(credentials, payment: PaymentAtProvider) {
      if (!payment.provider_ref) return;
      const token = tokenOf(credentials);
      const key = idempotencyKey('cancel', payment.id);
      const response =
        payment.gateway === 'PIX'
          ? await call(token, { method: 'PUT', path: `/v1/payments/${encodeURIComponent(payment.provider_ref)}`, idempotencyKey: key, body: { status: 'cancelled' } })
          : // A preference cannot be cancelled, only ended: it stops accepting new payments at once.
            await call(token, {
              method: 'PUT',
              path: `/checkout/preferences/${encodeURIComponent(payment.provider_ref)}`,
              idempotencyKey: key,
              body: { expires: true, expiration_date_to: mercadoPagoDate(nowIso()) },
            });
      if (response.status !== 200) throw failureOf(response, 'cancel');
    },

    verifyNotification: verifyMercadoPagoNotification,
  };
}
