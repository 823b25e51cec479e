import { createHash, verify as verifySignature, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { crc32 } from 'node:zlib';
import { wallClockMs } from '#lib/clock.ts';
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
import { chargeLines } from '#lib/payments/lines.ts';
import type { DisputeStage, ProviderSnapshot } from '#lib/schemas/payment.ts';
import type { PayPalEnvironment, ProviderSettings } from '#lib/schemas/payment-provider.ts';

/**
 * PayPal Orders v2 (intent CAPTURE), spoken with `fetch`: the official server SDK is ~500 KB and
 * has no base-URL option (payments-providers.md 1.3).
 *
 * | what             | call                                                                                     |
 * |------------------|------------------------------------------------------------------------------------------|
 * | credential check | `POST /v1/oauth2/token` (client credentials, Basic): its `app_id` is the account bound    |
 * | create (`PAYPAL`)| `POST /v2/checkout/orders` intent CAPTURE, `custom_id` = our payment id; `checkout_url` = the `payer-action` (or `approve`) link |
 * | fetch            | `GET /v2/checkout/orders/{id}` (a capture id: `GET /v2/payments/captures/{id}` names its order), and the capture's disputes `GET /v1/customer/disputes?disputed_transaction_id=` once paid |
 * | capture          | `POST /v2/checkout/orders/{id}/capture`, `PayPal-Request-Id: capture:<id>`               |
 * | refund           | `POST /v2/payments/captures/{id}/refund`, `PayPal-Request-Id: refund:<id>`                |
 * | cancel           | nothing: an uncaptured order lapses (PayPal reverses an approval not captured in 3 hours) |
 *
 * Every POST carries `PayPal-Request-Id` (PayPal replays a key's first answer for 6 hours). The
 * OAuth token is cached per credentials and host until a minute before it expires.
 *
 * The account: an order read with the store's token is one of that REST app's merchant (another
 * merchant's order answers 404), so a snapshot's account is the app id the token named at PUT.
 */
export const PAYPAL_API: Record<PayPalEnvironment, string> = { live: 'https://api-m.paypal.com', sandbox: 'https://api-m.sandbox.paypal.com' };

/** The hosts PayPal serves its webhook signing certificates from; a `PAYPAL-CERT-URL` anywhere else is refused. */
export const PAYPAL_CERT_HOSTS = ['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com'];
/** The subject (CN) of PayPal's message-verification certificate, live and sandbox. */
export const PAYPAL_CERT_SUBJECTS = ['messageverificationcerts.paypal.com', 'messageverificationcerts.sandbox.paypal.com'];

interface PayPalAmount {
  currency_code: string;
  value: string;
}

interface PayPalCapture {
  id: string;
  status: string;
  amount?: PayPalAmount;
  create_time?: string;
}

interface PayPalOrder {
  id: string;
  status: string;
  links?: { rel: string; href: string }[];
  purchase_units?: {
    custom_id?: string;
    amount?: PayPalAmount;
    payments?: { captures?: PayPalCapture[]; refunds?: { status: string; amount?: PayPalAmount }[] };
  }[];
}

interface PayPalDispute {
  dispute_id: string;
  status: string;
  dispute_life_cycle_stage?: string;
  dispute_outcome?: { outcome_code?: string };
}

const centsOf = (amount: PayPalAmount | undefined) => (amount ? Math.round(Number(amount.value) * 100) : 0);

/** Outcomes where the buyer got the money: the dispute is lost. Any other resolution is won. */
const BUYER_WINS = new Set(['RESOLVED_BUYER_FAVOUR', 'ACCEPTED', 'RESOLVED_WITH_PAYOUT']);

/**
 * A dispute as the rules read it (section 13 rule 6): RESOLVED is LOST when the buyer was paid
 * back, WON otherwise; any other status is OPEN. `withdrawn`: at the CHARGEBACK stage the card
 * issuer has taken the money back.
 */
export function paypalDisputeStage(dispute: PayPalDispute): { stage: DisputeStage; withdrawn: boolean } {
  if (dispute.status === 'RESOLVED') {
    const lost = BUYER_WINS.has(dispute.dispute_outcome?.outcome_code ?? '');
    return { stage: lost ? 'LOST' : 'WON', withdrawn: lost };
  }
  return { stage: 'OPEN', withdrawn: dispute.dispute_life_cycle_stage === 'CHARGEBACK' };
}

/**
 * An order as the rules read it (payments-providers.md section 6): CREATED, SAVED, APPROVED and
 * PAYER_ACTION_REQUIRED are PENDING (APPROVED is `capturable`: the service takes the money);
 * VOIDED is CANCELED; COMPLETED is its capture's status: COMPLETED -> PAID, PENDING -> PENDING,
 * DECLINED/FAILED -> FAILED, PARTIALLY_REFUNDED -> PAID with the refunds summed, REFUNDED ->
 * REFUNDED, REVERSED (`PAYMENT.CAPTURE.REVERSED`: PayPal took the money back) -> CHARGEBACK. The
 * provider ref is the capture once there is one (what a refund targets), the order before.
 */
export function paypalSnapshot(order: PayPalOrder, accountId: string | null, dispute: PayPalDispute | null): ProviderSnapshot {
  const unit = order.purchase_units?.[0];
  const capture = unit?.payments?.captures?.[0] ?? null;
  const refunded = (unit?.payments?.refunds ?? []).filter((refund) => refund.status === 'COMPLETED').reduce((sum, refund) => sum + centsOf(refund.amount), 0);
  const base = {
    provider_ref: capture?.id ?? order.id,
    reference: unit?.custom_id ?? null,
    account: accountId,
    amount_cents: centsOf(unit?.amount),
    currency: (unit?.amount?.currency_code ?? '').toUpperCase(),
    refunded_cents: refunded,
    dispute: null as DisputeStage | null,
    paid_at: capture && capture.status !== 'PENDING' && capture.status !== 'DECLINED' && capture.status !== 'FAILED' ? (capture.create_time ?? null) : null,
  };
  if (order.status === 'VOIDED') return { ...base, status: 'CANCELED' };
  if (order.status !== 'COMPLETED' || capture === null) return { ...base, status: 'PENDING', ...(order.status === 'APPROVED' ? { capturable: true } : {}) };
  switch (capture.status) {
    case 'PENDING':
      return { ...base, status: 'PENDING' };
    case 'DECLINED':
    case 'FAILED':
      return { ...base, status: 'FAILED' };
    default:
  }
  const seen = dispute ? paypalDisputeStage(dispute) : null;
  const paid = { ...base, dispute: seen?.stage ?? null };
  if (capture.status === 'REVERSED' || (seen?.withdrawn && seen.stage === 'OPEN')) return { ...paid, status: 'CHARGEBACK' };
  if (capture.status === 'REFUNDED') return { ...paid, status: 'REFUNDED', refunded_cents: Math.max(refunded, base.amount_cents) };
  return { ...paid, status: 'PAID' };
}

/**
 * PayPal's error envelope `{name, message, details: [{issue, description}]}` (OAuth's
 * `{error, error_description}`) as a failure: 401/403 the credentials or their permissions; 404
 * no such object; 409 a request with the same PayPal-Request-Id still being processed
 * (transient); any other 4xx PayPal saying no (422 UNPROCESSABLE_ENTITY with its issue:
 * REFUND_TIME_LIMIT_EXCEEDED, REFUND_NOT_ALLOWED, TRANSACTION_REFUSED...), the issue kept, since
 * PayPal's `message` is the same generic sentence for all of them.
 */
function failureOf(response: ProviderResponse, what: string): ProviderError {
  const body = (response.body ?? {}) as { message?: unknown; error_description?: unknown; details?: { issue?: unknown; description?: unknown }[] };
  const detail = body.details?.[0];
  const text =
    typeof detail?.issue === 'string'
      ? `${detail.issue}${typeof detail.description === 'string' ? `: ${detail.description}` : ''}`
      : typeof body.message === 'string'
        ? body.message
        : typeof body.error_description === 'string'
          ? body.error_description
          : `HTTP ${response.status}`;
  const message = `${what}: ${text.slice(0, 200)}`;
  if (response.status === 401 || response.status === 403) return new ProviderError('paypal', 'credentials', message, response.status);
  if (response.status === 404) return new ProviderError('paypal', 'not_found', message, response.status);
  if (response.status === 409) return new ProviderError('paypal', 'unavailable', message, response.status);
  return new ProviderError('paypal', 'refused', message, response.status);
}

/** The `issue` of PayPal's error envelope `{name, message, details: [{issue}]}`. */
const issueOf = (response: ProviderResponse) => (response.body as { details?: { issue?: unknown }[] } | null)?.details?.[0]?.issue;

function asOrder(body: unknown, what: string): PayPalOrder {
  const order = body as PayPalOrder | null;
  if (!order || typeof order.id !== 'string' || typeof order.status !== 'string') throw new ProviderError('paypal', 'unavailable', `${what}: an answer that is not an order`);
  return order;
}

const money = (cents: number, currency: string) => ({ currency_code: currency, value: (cents / 100).toFixed(2) });

// ---- notifications: transmission signatures, verified locally ------------------------------------

export interface PayPalVerifierOptions {
  /** PEM roots the certificate must chain to: the runtime's Mozilla roots unless replaced (the local stack's tests only). */
  trustedRoots?: readonly string[];
  /** Where certificate URLs on PayPal's hosts are fetched from: PayPal itself, or `PAYPAL_API_URL`'s fake on the local stack. */
  certOrigin?: string;
  timeoutMs?: number;
}

/** The signed message: `<transmission id>|<transmission time>|<webhook id>|<CRC32 of the raw body, unsigned decimal>`. */
export const paypalSignedMessage = (transmissionId: string, transmissionTime: string, webhookId: string, rawBody: string) =>
  `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(Buffer.from(rawBody, 'utf8'))}`;

const pemBlocks = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/** Why a certificate chain is not PayPal's, or null: each link issued and signed by the next, the last by a trusted root, all in their dates, the leaf named PayPal's. */
export function paypalChainProblem(chainPem: string, roots: readonly X509Certificate[], now: number): string | null {
  let chain: X509Certificate[];
  try {
    chain = pemBlocks(chainPem).map((block) => new X509Certificate(block));
  } catch {
    return 'the certificate does not parse';
  }
  const [leaf] = chain;
  if (!leaf) return 'no certificate at the URL';
  for (const cert of chain) {
    if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) return `a certificate outside its dates (${cert.subject.replace(/\n/g, ', ')})`;
  }
  const cn = /^CN=(.*)$/m.exec(leaf.subject)?.[1];
  if (!cn || !PAYPAL_CERT_SUBJECTS.includes(cn)) return `the certificate is not PayPal's message-verification one (CN=${cn ?? ''})`;
  for (let index = 0; index + 1 < chain.length; index += 1) {
    const [cert, issuer] = [chain[index]!, chain[index + 1]!];
    if (!issuer.ca || !cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) return 'a broken certificate chain';
  }
  const top = chain.at(-1)!;
  const anchored = roots.some((root) => top.fingerprint256 === root.fingerprint256 || (root.ca && top.checkIssued(root) && top.verify(root.publicKey)));
  return anchored ? null : 'a certificate chain to no trusted root';
}

/**
 * Verifies PayPal's transmission signature locally (payments-providers.md 1.3, way b): the
 * certificate URL on PayPal's hosts only (https, `/v1/notifications/certs/`), its chain to a
 * trusted root with the dates and the subject checked, then SHA256withRSA over the signed message.
 * The certificate is fetched once per URL and kept for the life of the function. CRC32 is not a
 * cryptographic hash, so the body is not trusted: its ids are only what to fetch. The
 * transmission time gets no age limit: PayPal retries for 3 days, and a replay can only cause a fetch.
 */
export function paypalVerifier(options: PayPalVerifierOptions = {}) {
  const certificates = new Map<string, Promise<string>>();
  let roots: X509Certificate[] | undefined;
  const trustedRoots = () => {
    roots ??= (options.trustedRoots ?? rootCertificates).map((pem) => new X509Certificate(pem));
    return roots;
  };

  async function certificateAt(url: URL): Promise<string> {
    const key = url.href;
    let pending = certificates.get(key);
    if (!pending) {
      const target = options.certOrigin ? new URL(url.pathname, options.certOrigin) : url;
      pending = fetch(target, { signal: AbortSignal.timeout(options.timeoutMs ?? 5_000), redirect: 'error' }).then(async (response) => {
        if (!response.ok) throw new ProviderError('paypal', 'unavailable', `certificate: HTTP ${response.status}`, response.status);
        return response.text();
      });
      certificates.set(key, pending);
      // A failed fetch is not kept: the next notification tries again.
      pending.catch(() => certificates.delete(key));
    }
    return pending;
  }

  return async function verifyPayPalNotification({ rawBody, headers, secret: webhookId, now }: NotificationInput): Promise<NotificationCheck> {
    if (webhookId === null) return { outcome: 'refused', reason: 'no webhook_id configured' };
    const transmissionId = headers['paypal-transmission-id'];
    const transmissionTime = headers['paypal-transmission-time'];
    const signature = headers['paypal-transmission-sig'];
    const certUrl = headers['paypal-cert-url'];
    const algorithm = headers['paypal-auth-algo'];
    if (!transmissionId || !transmissionTime || !signature || !certUrl) return { outcome: 'refused', reason: 'missing PayPal transmission headers' };
    if (algorithm !== undefined && algorithm !== 'SHA256withRSA') return { outcome: 'refused', reason: `PAYPAL-AUTH-ALGO ${algorithm.slice(0, 40)} is not SHA256withRSA` };
    let url: URL;
    try {
      url = new URL(certUrl);
    } catch {
      return { outcome: 'refused', reason: 'PAYPAL-CERT-URL is not a URL' };
    }
    if (url.protocol !== 'https:' || !PAYPAL_CERT_HOSTS.includes(url.hostname) || url.port !== '' || !url.pathname.startsWith('/v1/notifications/certs/') || url.search !== '') {
      return { outcome: 'refused', reason: 'PAYPAL-CERT-URL is not on PayPal' };
    }
    const chainPem = await certificateAt(url);
    const problem = paypalChainProblem(chainPem, trustedRoots(), now);
    if (problem) return { outcome: 'refused', reason: problem };
    const leaf = new X509Certificate(pemBlocks(chainPem)[0]!);
    const message = paypalSignedMessage(transmissionId, transmissionTime, webhookId, rawBody);
    let signed = false;
    try {
      signed = verifySignature('sha256', Buffer.from(message, 'utf8'), leaf.publicKey, Buffer.from(signature, 'base64'));
    } catch {
      signed = false;
    }
    if (!signed) return { outcome: 'refused', reason: 'PAYPAL-TRANSMISSION-SIG does not match' };
    return paypalEventRefs(rawBody);
  };
}

const PAYPAL_ID = /^[A-Z0-9-]{6,64}$/;

/** The order (or capture) ids a verified event is about; events payments do not use are ignored. */
export function paypalEventRefs(rawBody: string): NotificationCheck {
  let event: { event_type?: unknown; resource?: Record<string, unknown> };
  try {
    event = JSON.parse(rawBody) as typeof event;
  } catch {
    return { outcome: 'ignored' };
  }
  const type = typeof event.event_type === 'string' ? event.event_type : '';
  const resource = event.resource ?? {};
  const id = (value: unknown) => (typeof value === 'string' && PAYPAL_ID.test(value) ? value : undefined);
  let refs: (string | undefined)[] = [];
  if (type === 'CHECKOUT.ORDER.APPROVED' || type === 'CHECKOUT.ORDER.COMPLETED' || type === 'CHECKOUT.PAYMENT-APPROVAL.REVERSED') {
    refs = [id(resource.order_id) ?? id(resource.id)];
  } else if (type.startsWith('PAYMENT.CAPTURE.')) {
    const related = (resource.supplementary_data as { related_ids?: { order_id?: unknown } } | undefined)?.related_ids;
    // A refund or reversal names its capture by the `up` link; a capture is the resource itself.
    const up = (resource.links as { rel?: unknown; href?: unknown }[] | undefined)?.find((link) => link.rel === 'up' && typeof link.href === 'string');
    const captureOfLink = typeof up?.href === 'string' ? /\/v2\/payments\/captures\/([^/?]+)/.exec(up.href)?.[1] : undefined;
    refs = [id(related?.order_id) ?? (type === 'PAYMENT.CAPTURE.REFUNDED' || type === 'PAYMENT.CAPTURE.REVERSED' ? id(captureOfLink) : id(resource.id))];
  } else if (type.startsWith('CUSTOMER.DISPUTE.')) {
    const transactions = (resource.disputed_transactions as { seller_transaction_id?: unknown }[] | undefined) ?? [];
    refs = transactions.map((transaction) => id(transaction.seller_transaction_id));
  }
  const found = [...new Set(refs.filter((ref): ref is string => ref !== undefined))];
  return found.length === 0 ? { outcome: 'ignored' } : { outcome: 'verified', refs: found };
}

// ---- the adapter ---------------------------------------------------------------------------------

export interface PayPalOptions extends CallOptions {
  /** `PAYPAL_API_URL` on the local stack (a fake server, for both environments); PayPal's own hosts everywhere else. */
  baseUrl?: string;
  /** The roots PayPal's webhook certificate must chain to (tests); `PAYPAL_TRUSTED_ROOTS_FILE` on the local stack, else the runtime's. */
  trustedRoots?: readonly string[];
}

interface CachedToken {
  token: string;
  appId: string;
  until: number;
}

/** Tokens by host and credentials (hashed: no secret kept as a map key), for the life of the function. */
const tokens = new Map<string, CachedToken>();

function configuredRoots(): string[] | undefined {
  const file = config.paypalTrustedRootsFile;
  return file ? pemBlocks(readFileSync(file, 'utf8')) : undefined;
}

export function paypalAdapter(options: PayPalOptions = {}): ProviderAdapter {
  const fakeOrigin = (options.baseUrl ?? config.paypalApiUrl)?.replace(/\/+$/, '');
  const baseOf = (settings: Readonly<ProviderSettings> | undefined) => fakeOrigin ?? PAYPAL_API[settings?.environment ?? 'live'];
  const verify = paypalVerifier({ trustedRoots: options.trustedRoots ?? configuredRoots(), certOrigin: fakeOrigin, timeoutMs: options.timeoutMs });

  async function token(secrets: Readonly<Record<string, string>>, settings: Readonly<ProviderSettings> | undefined, fresh = false): Promise<CachedToken> {
    const { client_id: clientId, client_secret: clientSecret } = secrets;
    if (!clientId || !clientSecret) throw new ProviderError('paypal', 'credentials', 'no client_id or client_secret');
    const base = baseOf(settings);
    const key = createHash('sha256').update(`${base}\n${clientId}\n${clientSecret}`).digest('hex');
    const cached = tokens.get(key);
    // A token lives in PayPal's real time, not a request's pinned clock.
    if (!fresh && cached && cached.until > wallClockMs()) return cached;
    const response = await callProvider(
      'paypal',
      {
        method: 'POST',
        url: `${base}/v1/oauth2/token`,
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
        retrySafe: true,
      },
      options,
    );
    if (response.status !== 200) throw failureOf(response, 'OAuth token');
    const body = response.body as { access_token?: unknown; app_id?: unknown; expires_in?: unknown } | null;
    if (typeof body?.access_token !== 'string' || typeof body.app_id !== 'string')
      throw new ProviderError('paypal', 'unavailable', 'OAuth token: an answer with no token or app id');
    const lifetimeS = typeof body.expires_in === 'number' ? body.expires_in : 300;
    const entry = { token: body.access_token, appId: body.app_id, until: wallClockMs() + Math.max(0, lifetimeS - 60) * 1000 };
    tokens.set(key, entry);
    return entry;
  }

  /** One call with the store's token; a token PayPal no longer takes (401) is renewed once. */
  async function call(
    credentials: Pick<ProviderCredentials, 'secrets' | 'settings'>,
    request: Omit<ProviderRequest, 'url' | 'headers'> & { path: string },
  ): Promise<ProviderResponse> {
    const send = async (fresh: boolean) => {
      const { token: bearer } = await token(credentials.secrets, credentials.settings, fresh);
      return callProvider(
        'paypal',
        {
          ...request,
          idempotencyHeader: 'paypal-request-id',
          url: `${baseOf(credentials.settings)}${request.path}`,
          headers: { authorization: `Bearer ${bearer}`, prefer: 'return=representation' },
        },
        options,
      );
    };
    const response = await send(false);
    return response.status === 401 ? send(true) : response;
  }

  async function disputeOf(credentials: ProviderCredentials, order: PayPalOrder): Promise<PayPalDispute | null> {
    const capture = order.purchase_units?.[0]?.payments?.captures?.[0];
    if (!capture || order.status !== 'COMPLETED' || ['PENDING', 'DECLINED', 'FAILED'].includes(capture.status)) return null;
    const listed = await call(credentials, { method: 'GET', path: `/v1/customer/disputes?disputed_transaction_id=${encodeURIComponent(capture.id)}` });
    if (listed.status !== 200) throw failureOf(listed, 'list disputes');
    const [latest] = ((listed.body as { items?: PayPalDispute[] } | null)?.items ?? []) as PayPalDispute[];
    if (!latest) return null;
    if (latest.status !== 'RESOLVED') return latest;
    // The list gives no outcome: a resolved dispute is read whole.
    const detail = await call(credentials, { method: 'GET', path: `/v1/customer/disputes/${encodeURIComponent(latest.dispute_id)}` });
    if (detail.status !== 200) throw failureOf(detail, 'fetch dispute');
    return detail.body as PayPalDispute;
  }

  async function orderOf(credentials: ProviderCredentials, ref: string): Promise<PayPalOrder> {
    const response = await call(credentials, { method: 'GET', path: `/v2/checkout/orders/${encodeURIComponent(ref)}` });
    if (response.status === 200) return asOrder(response.body, 'fetch order');
    if (response.status !== 404) throw failureOf(response, 'fetch order');
    // Not an order: a capture id (refund, reversal and dispute events name the capture), whose order it names.
    const capture = await call(credentials, { method: 'GET', path: `/v2/payments/captures/${encodeURIComponent(ref)}` });
    if (capture.status !== 200) throw failureOf(capture, 'fetch capture');
    const orderId = (capture.body as { supplementary_data?: { related_ids?: { order_id?: unknown } } } | null)?.supplementary_data?.related_ids?.order_id;
    if (typeof orderId !== 'string') throw new ProviderError('paypal', 'not_found', 'fetch capture: a capture naming no order', 404);
    const order = await call(credentials, { method: 'GET', path: `/v2/checkout/orders/${encodeURIComponent(orderId)}` });
    if (order.status !== 200) throw failureOf(order, 'fetch order');
    return asOrder(order.body, 'fetch order');
  }

  const snapshotOf = async (credentials: ProviderCredentials, order: PayPalOrder) => paypalSnapshot(order, credentials.accountId, await disputeOf(credentials, order));
  const fetchSnapshot = async (credentials: ProviderCredentials, ref: string) => snapshotOf(credentials, await orderOf(credentials, ref));

  return {
    provider: 'paypal',

    async checkCredentials(secrets, settings) {
      return { accountId: (await token(secrets, settings, true)).appId };
    },

    async createCharge(credentials, request: ChargeRequest): Promise<CreatedCharge> {
      const { payment, order, returnUrl } = request;
      if (payment.gateway !== 'PAYPAL') throw new ProviderError('paypal', 'refused', `gateway ${payment.gateway} is not PayPal's`);
      if (!returnUrl) throw new ProviderError('paypal', 'refused', 'a PayPal order needs a return_url');
      const currency = payment.currency.toUpperCase();
      const lines = chargeLines(request);
      const totalCents = lines.reduce((sum, line) => sum + line.quantity * line.unit_cents, 0);
      const response = await call(credentials, {
        method: 'POST',
        path: '/v2/checkout/orders',
        idempotencyKey: idempotencyKey('create', payment.id),
        body: {
          intent: 'CAPTURE',
          purchase_units: [
            {
              reference_id: payment.id,
              custom_id: payment.id,
              invoice_id: payment.id,
              description: order.description.slice(0, 127),
              amount: { ...money(totalCents, currency), breakdown: { item_total: money(totalCents, currency) } },
              items: lines.map((line) => ({
                name: line.name.slice(0, 127),
                quantity: String(line.quantity),
                unit_amount: money(line.unit_cents, currency),
                category: 'DIGITAL_GOODS',
              })),
            },
          ],
          payment_source: {
            paypal: { experience_context: { return_url: returnUrl, cancel_url: returnUrl, user_action: 'PAY_NOW', shipping_preference: 'NO_SHIPPING' } },
          },
        },
      });
      if (response.status !== 200 && response.status !== 201) throw failureOf(response, 'create order');
      const created = asOrder(response.body, 'create order');
      const link = created.links?.find((candidate) => candidate.rel === 'payer-action' || candidate.rel === 'approve')?.href;
      if (!link) throw new ProviderError('paypal', 'unavailable', 'create order: no approval link in the answer');
      return {
        provider_ref: created.id,
        snapshot: paypalSnapshot(created, credentials.accountId, null),
        pix_code: null,
        qr_code: null,
        checkout_url: link,
        expires_at: payment.expires_at,
      };
    },

    fetch: fetchSnapshot,

    async findByReference() {
      // Orders v2 cannot be searched by custom_id; the order id comes back from the create call,
      // which PayPal replays for 6 hours under the same PayPal-Request-Id (the reconciler's retry).
      return [];
    },

    async capture(credentials, payment: PaymentAtProvider) {
      if (!payment.provider_ref) throw new ProviderError('paypal', 'refused', 'capture: no PayPal order');
      const response = await call(credentials, {
        method: 'POST',
        path: `/v2/checkout/orders/${encodeURIComponent(payment.provider_ref)}/capture`,
        idempotencyKey: idempotencyKey('capture', payment.id),
        body: {},
      });
      if (response.status === 200 || response.status === 201) return snapshotOf(credentials, asOrder(response.body, 'capture'));
      // Captured already (another source came first) or not approved (yet, or any more): the order says where it stands.
      if (response.status === 422 && ['ORDER_ALREADY_CAPTURED', 'ORDER_NOT_APPROVED', 'INSTRUMENT_DECLINED'].includes(String(issueOf(response)))) {
        return fetchSnapshot(credentials, payment.provider_ref);
      }
      throw failureOf(response, 'capture');
    },

    async refund(credentials, payment: PaymentAtProvider) {
      let captureId = payment.charge_ref && payment.charge_ref !== payment.provider_ref ? payment.charge_ref : null;
      if (!captureId && payment.provider_ref) {
        const order = await orderOf(credentials, payment.provider_ref);
        captureId = order.purchase_units?.[0]?.payments?.captures?.[0]?.id ?? null;
      }
      if (!captureId) throw new ProviderError('paypal', 'refused', 'refund: no capture has taken money for it yet');
      const response = await call(credentials, {
        method: 'POST',
        path: `/v2/payments/captures/${encodeURIComponent(captureId)}/refund`,
        idempotencyKey: idempotencyKey('refund', payment.id),
        body: {},
      });
      if (response.status === 200 || response.status === 201) return fetchSnapshot(credentials, payment.provider_ref ?? captureId);
      if (response.status === 422 && issueOf(response) === 'CAPTURE_FULLY_REFUNDED') {
        const current = await fetchSnapshot(credentials, payment.provider_ref ?? captureId);
        if (current.status === 'REFUNDED') return current;
      }
      throw failureOf(response, 'refund');
    },

    async cancel() {
      // Nothing to call: Orders v2 has no void for intent CAPTURE; an order never captured takes no money,
      // and the flow captures only live payments.
    },

    verifyNotification: (input) => verify(input),
  };
}
