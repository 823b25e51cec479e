import { randomBytes, randomUUID, sign } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { paypalSignedMessage } from '#lib/payments/paypal.ts';
import { makeTestPki, type TestPki } from './test-pki.ts';
import { ProviderFakeServer, takePort } from './fake-provider-server.ts';

/**
 * A PayPal REST API on loopback, speaking its documented wire format (payments-providers.md 1.3):
 *
 * | call                                         | answer                                                                   |
 * |----------------------------------------------|--------------------------------------------------------------------------|
 * | `POST /v1/oauth2/token` (Basic, form `grant_type=client_credentials`) | `{access_token, token_type, app_id, expires_in, nonce, scope}`; 401 `{error: invalid_client}` |
 * | `POST /v2/checkout/orders`                   | 200 `PAYER_ACTION_REQUIRED` with a `payer-action` link (201 `CREATED` with `approve` when no payment_source) |
 * | `GET /v2/checkout/orders/{id}`               | the order; 404 `RESOURCE_NOT_FOUND` for another merchant's                |
 * | `POST /v2/checkout/orders/{id}/capture`      | 201 `COMPLETED` with the capture; 422 `ORDER_NOT_APPROVED` / `ORDER_ALREADY_CAPTURED` |
 * | `GET /v2/payments/captures/{id}`             | the capture, with `supplementary_data.related_ids.order_id`              |
 * | `POST /v2/payments/captures/{id}/refund`     | 201 a refund; 422 `CAPTURE_FULLY_REFUNDED`, `REFUND_NOT_ALLOWED`, `REFUND_TIME_LIMIT_EXCEEDED` (over 180 days) |
 * | `GET /v1/customer/disputes[?disputed_transaction_id=]`, `GET /v1/customer/disputes/{id}` | disputes (the list without outcomes) |
 * | `GET /v1/notifications/certs/{id}`           | the signing chain (leaf, intermediate) of this run's test CA              |
 *
 * Errors carry PayPal's envelope `{name, message, debug_id, details: [{issue, description}]}`;
 * every POST replays its first answer to a repeated `PayPal-Request-Id`; a body on a JSON route
 * without `Content-Type: application/json` is a 415.
 *
 * Test controls: `approve` (the buyer approved at PayPal), `captureWill` (the next capture is
 * declined or pending), `refundInDashboard`, `backdateCapture`, `reverse`, `openDispute` / `resolveDispute`,
 * `voidOrder`, `notify` (an event signed as PayPal signs, with tampering options), `fail`, `requests`.
 */
interface Money {
  currency_code: string;
  value: string;
}

interface FakeCapture {
  id: string;
  status: string;
  amount: Money;
  final_capture: boolean;
  create_time: string;
  update_time: string;
  custom_id: string | null;
  order_id: string;
}

interface FakeOrder {
  id: string;
  appId: string;
  status: string;
  intent: string;
  purchase_units: {
    reference_id?: string;
    custom_id?: string;
    invoice_id?: string;
    amount: Money & { breakdown?: unknown };
    items?: unknown[];
    payments?: { captures: FakeCapture[]; refunds: { id: string; status: string; amount: Money }[] };
  }[];
  create_time: string;
}

interface FakeDispute {
  dispute_id: string;
  status: string;
  dispute_life_cycle_stage: string;
  reason: string;
  dispute_outcome?: { outcome_code: string };
  disputed_transactions: { seller_transaction_id: string; custom?: string }[];
  create_time: string;
  update_time: string;
}

export interface SeenPayPalRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const DAY_MS = 86_400_000;
/** PayPal refunds a capture up to 180 days after it was made. */
const REFUND_WINDOW_DAYS = 180;
const paypalId = () => randomBytes(9).toString('hex').toUpperCase().slice(0, 17);
export const FAKE_CERT_URL = 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-test';

export class FakePayPal extends ProviderFakeServer {
  /** client_id -> its secret and app. */
  readonly apps = new Map<string, { secret: string; appId: string }>();
  readonly orders = new Map<string, FakeOrder>();
  readonly captures = new Map<string, FakeCapture>();
  readonly disputes = new Map<string, FakeDispute>();
  readonly requests: SeenPayPalRequest[] = [];
  readonly pki: TestPki;
  private readonly tokens = new Map<string, string>();
  private readonly replays = new Map<string, { status: number; body: string }>();
  private nextCapture: 'DECLINED' | 'PENDING' | null = null;

  constructor(pki: TestPki = makeTestPki()) {
    super();
    this.pki = pki;
  }

  addApp(clientId: string, secret: string, appId: string): void {
    this.apps.set(clientId, { secret, appId });
  }

  /** The buyer approved the order at PayPal. */
  approve(orderId: string): FakeOrder {
    const order = this.order(orderId);
    order.status = 'APPROVED';
    return order;
  }

  /** PayPal ended an order (an approval reversed after 3 hours uncaptured). */
  voidOrder(orderId: string): FakeOrder {
    const order = this.order(orderId);
    order.status = 'VOIDED';
    return order;
  }

  /** The next capture is declined or left pending (an eCheck, a review). */
  captureWill(outcome: 'DECLINED' | 'PENDING'): void {
    this.nextCapture = outcome;
  }

  setCaptureStatus(captureId: string, status: string): FakeCapture {
    const capture = this.captures.get(captureId)!;
    capture.status = status;
    return capture;
  }

  captureOfOrder(orderId: string): FakeCapture {
    const capture = this.order(orderId).purchase_units[0]!.payments?.captures[0];
    if (!capture) throw new Error(`fake order ${orderId} has no capture`);
    return capture;
  }

  /** Moves the order's capture `days` back: past 180, PayPal refuses to refund it (`REFUND_TIME_LIMIT_EXCEEDED`). */
  backdateCapture(orderId: string, days: number): FakeCapture {
    const capture = this.captureOfOrder(orderId);
    capture.create_time = new Date(Date.parse(capture.create_time) - days * DAY_MS).toISOString();
    return capture;
  }

  /** A refund made in PayPal's dashboard (`value` of the capture's currency; all of it by default). */
  refundInDashboard(orderId: string, value?: string): void {
    this.refund(this.captureOfOrder(orderId), value);
  }

  /** PayPal took the money back (`PAYMENT.CAPTURE.REVERSED`). */
  reverse(orderId: string): FakeCapture {
    return this.setCaptureStatus(this.captureOfOrder(orderId).id, 'REVERSED');
  }

  openDispute(orderId: string, stage: 'INQUIRY' | 'CHARGEBACK' = 'INQUIRY'): FakeDispute {
    const capture = this.captureOfOrder(orderId);
    const now = new Date().toISOString();
    const dispute: FakeDispute = {
      dispute_id: `PP-D-${Math.floor(Math.random() * 1e6)}`,
      status: stage === 'INQUIRY' ? 'WAITING_FOR_SELLER_RESPONSE' : 'UNDER_REVIEW',
      dispute_life_cycle_stage: stage,
      reason: stage === 'INQUIRY' ? 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED' : 'UNAUTHORISED',
      disputed_transactions: [{ seller_transaction_id: capture.id, custom: capture.custom_id ?? undefined }],
      create_time: now,
      update_time: now,
    };
    this.disputes.set(dispute.dispute_id, dispute);
    return dispute;
  }

  resolveDispute(disputeId: string, outcome: 'RESOLVED_SELLER_FAVOUR' | 'RESOLVED_BUYER_FAVOUR'): FakeDispute {
    const dispute = this.disputes.get(disputeId)!;
    Object.assign(dispute, { status: 'RESOLVED', dispute_outcome: { outcome_code: outcome }, update_time: new Date().toISOString() });
    return dispute;
  }

  /**
   * Sends an event as PayPal does: `POST url`, body `{id: WH-..., event_version, create_time,
   * resource_type, event_type, summary, resource}`, signed over
   * `<transmission id>|<time>|<webhook id>|<crc32(body)>` with this run's leaf key. Options forge
   * it: `webhookId` (sign for another webhook), `certUrl`, `tamper` (body changed after signing),
   * `signWith` (another key), `algo`.
   */
  async notify(
    url: string,
    webhookId: string,
    eventType: string,
    resource: unknown,
    options: { certUrl?: string; tamper?: boolean; signWith?: string; algo?: string } = {},
  ): Promise<{ status: number; body: string }> {
    const payload = JSON.stringify({
      id: `WH-${paypalId()}`,
      event_version: '1.0',
      create_time: new Date().toISOString(),
      resource_type: eventType.startsWith('CUSTOMER.DISPUTE') ? 'dispute' : eventType.startsWith('CHECKOUT.') ? 'checkout-order' : 'capture',
      resource_version: '2.0',
      event_type: eventType,
      summary: eventType,
      resource,
    });
    const headers = this.signatureHeaders(payload, webhookId, options);
    const body = options.tamper ? payload.replace('"event_version":"1.0"', '"event_version":"1.1"') : payload;
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: response.status, body: await response.text() };
  }

  signatureHeaders(payload: string, webhookId: string, options: { certUrl?: string; signWith?: string; algo?: string } = {}): Record<string, string> {
    const transmissionId = randomUUID();
    const transmissionTime = new Date().toISOString();
    const signature = sign('sha256', Buffer.from(paypalSignedMessage(transmissionId, transmissionTime, webhookId, payload)), options.signWith ?? this.pki.leafKeyPem).toString(
      'base64',
    );
    return {
      'paypal-transmission-id': transmissionId,
      'paypal-transmission-time': transmissionTime,
      'paypal-transmission-sig': signature,
      'paypal-cert-url': options.certUrl ?? FAKE_CERT_URL,
      'paypal-auth-algo': options.algo ?? 'SHA256withRSA',
    };
  }

  /** What PayPal sends as a capture event's resource. */
  captureResource(orderId: string): Record<string, unknown> {
    const capture = this.captureOfOrder(orderId);
    return { ...this.captureView(capture) };
  }

  order(orderId: string): FakeOrder {
    const order = this.orders.get(orderId);
    if (!order) throw new Error(`no fake order ${orderId}`);
    return order;
  }

  private refund(capture: FakeCapture, value?: string): { id: string; status: string; amount: Money } {
    const order = this.order(capture.order_id);
    const payments = order.purchase_units[0]!.payments!;
    const refunded = payments.refunds.reduce((sum, refund) => sum + Math.round(Number(refund.amount.value) * 100), 0);
    const total = Math.round(Number(capture.amount.value) * 100);
    const cents = value === undefined ? total - refunded : Math.round(Number(value) * 100);
    const refund = { id: paypalId(), status: 'COMPLETED', amount: { currency_code: capture.amount.currency_code, value: (cents / 100).toFixed(2) } };
    payments.refunds.push(refund);
    capture.status = refunded + cents >= total ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
    return refund;
  }

  private captureView(capture: FakeCapture) {
    const { order_id: orderId, ...view } = capture;
    return {
      ...view,
      supplementary_data: { related_ids: { order_id: orderId } },
      links: [
        { href: `https://api.sandbox.paypal.com/v2/payments/captures/${capture.id}`, rel: 'self', method: 'GET' },
        { href: `https://api.sandbox.paypal.com/v2/checkout/orders/${orderId}`, rel: 'up', method: 'GET' },
      ],
    };
  }

  private orderView(order: FakeOrder) {
    const { appId: _app, ...view } = order;
    const links = [{ href: `https://api.sandbox.paypal.com/v2/checkout/orders/${order.id}`, rel: 'self', method: 'GET' }];
    if (order.status === 'PAYER_ACTION_REQUIRED' || order.status === 'CREATED') {
      links.push({ href: `https://www.sandbox.paypal.com/checkoutnow?token=${order.id}`, rel: order.status === 'CREATED' ? 'approve' : 'payer-action', method: 'GET' });
    }
    return {
      ...view,
      purchase_units: order.purchase_units.map((unit) => ({
        ...unit,
        payee: { merchant_id: `MERCHANT-${order.appId}` },
        ...(unit.payments ? { payments: { captures: unit.payments.captures.map((capture) => this.captureView(capture)), refunds: unit.payments.refunds } } : {}),
      })),
      links,
    };
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    let body: unknown = null;
    try {
      body = raw && !form ? JSON.parse(raw) : raw ? Object.fromEntries(new URLSearchParams(raw)) : null;
    } catch {
      body = undefined;
    }
    this.requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, headers: req.headers, body });

    if (await this.outageTook(req, res, () => this.send(res, 500, paypalError('INTERNAL_SERVER_ERROR', 'An internal server error has occurred.')))) return;

    if (req.method === 'GET' && url.pathname.startsWith('/v1/notifications/certs/')) {
      res.writeHead(200, { 'content-type': 'application/x-pem-file' });
      return void res.end(this.pki.chainPem);
    }
    if (req.method === 'POST' && url.pathname === '/v1/oauth2/token') return this.token(req, res, body as Record<string, string> | null);

    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const clientId = token === undefined ? undefined : this.tokens.get(token);
    const app = clientId === undefined ? undefined : this.apps.get(clientId);
    if (!app) return this.send(res, 401, { error: 'invalid_token', error_description: 'Token signature verification failed' });
    if (body === undefined)
      return this.send(res, 400, paypalError('INVALID_REQUEST', 'Request is not well-formed, syntactically incorrect, or violates schema.', 'MALFORMED_REQUEST_JSON'));
    if (req.method === 'POST' && raw !== '' && req.headers['content-type'] !== 'application/json') {
      return this.send(res, 415, paypalError('UNSUPPORTED_MEDIA_TYPE', 'The request payload is not supported.'));
    }
    const requestId = req.headers['paypal-request-id'];
    const replayKey = `${app.appId} ${url.pathname} ${typeof requestId === 'string' ? requestId : ''}`;
    if (req.method === 'POST' && typeof requestId === 'string') {
      const seen = this.replays.get(replayKey);
      if (seen) return this.sendRaw(res, seen.status, seen.body);
    }
    const [status, answer] = this.route(req.method ?? '', url, body as Record<string, unknown> | null, app.appId);
    const text = JSON.stringify(answer);
    if (req.method === 'POST' && typeof requestId === 'string' && status < 500) this.replays.set(replayKey, { status, body: text });
    this.sendRaw(res, status, text);
  }

  private token(req: IncomingMessage, res: ServerResponse, body: Record<string, string> | null): void {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [clientId, secret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
    const app = clientId === undefined ? undefined : this.apps.get(clientId);
    if (!app || app.secret !== secret) {
      this.send(res, 401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
      return;
    }
    if (body?.grant_type !== 'client_credentials') {
      this.send(res, 400, { error: 'unsupported_grant_type', error_description: 'Grant Type is NULL' });
      return;
    }
    const accessToken = `A21AA${randomBytes(24).toString('base64url')}`;
    this.tokens.set(accessToken, clientId!);
    this.send(res, 200, {
      scope: 'https://uri.paypal.com/services/payments/payment',
      access_token: accessToken,
      token_type: 'Bearer',
      app_id: app.appId,
      expires_in: 32_400,
      nonce: randomUUID(),
    });
  }

  private owned(orderId: string, appId: string): FakeOrder | undefined {
    const order = this.orders.get(orderId);
    return order && order.appId === appId ? order : undefined;
  }

  private route(method: string, url: URL, body: Record<string, unknown> | null, appId: string): [number, unknown] {
    const path = url.pathname;
    if (method === 'POST' && path === '/v2/checkout/orders') return this.createOrder(body, appId);
    const orderPath = /^\/v2\/checkout\/orders\/(\w+)(\/capture)?$/.exec(path);
    if (orderPath) {
      const order = this.owned(orderPath[1]!, appId);
      if (!order) return [404, paypalError('RESOURCE_NOT_FOUND', 'The specified resource does not exist.', 'INVALID_RESOURCE_ID')];
      if (method === 'GET' && !orderPath[2]) return [200, this.orderView(order)];
      if (method === 'POST' && orderPath[2]) return this.capture(order);
    }
    const capturePath = /^\/v2\/payments\/captures\/(\w+)(\/refund)?$/.exec(path);
    if (capturePath) {
      const capture = this.captures.get(capturePath[1]!);
      if (!capture || this.orders.get(capture.order_id)?.appId !== appId)
        return [404, paypalError('RESOURCE_NOT_FOUND', 'The specified resource does not exist.', 'INVALID_RESOURCE_ID')];
      if (method === 'GET' && !capturePath[2]) return [200, this.captureView(capture)];
      if (method === 'POST' && capturePath[2]) {
        if (capture.status === 'REFUNDED') return [422, paypalError('UNPROCESSABLE_ENTITY', 'The requested action could not be performed.', 'CAPTURE_FULLY_REFUNDED')];
        if (Date.now() - Date.parse(capture.create_time) > REFUND_WINDOW_DAYS * DAY_MS) {
          return [
            422,
            paypalError(
              'UNPROCESSABLE_ENTITY',
              'The requested action could not be performed.',
              'REFUND_TIME_LIMIT_EXCEEDED',
              'You are over the time limit to perform a refund on this capture.',
            ),
          ];
        }
        if (capture.status !== 'COMPLETED' && capture.status !== 'PARTIALLY_REFUNDED')
          return [422, paypalError('UNPROCESSABLE_ENTITY', 'The requested action could not be performed.', 'REFUND_NOT_ALLOWED')];
        return [201, this.refund(capture)];
      }
    }
    const mine = (dispute: FakeDispute) =>
      dispute.disputed_transactions.some((transaction) => this.orders.get(this.captures.get(transaction.seller_transaction_id)?.order_id ?? '')?.appId === appId);
    if (method === 'GET' && path === '/v1/customer/disputes') {
      const transaction = url.searchParams.get('disputed_transaction_id');
      const items = [...this.disputes.values()]
        .filter((dispute) => mine(dispute) && (transaction === null || dispute.disputed_transactions.some((item) => item.seller_transaction_id === transaction)))
        .reverse()
        .map(({ dispute_outcome: _outcome, disputed_transactions: _transactions, ...summary }) => summary);
      return [200, { items, links: [] }];
    }
    const disputePath = /^\/v1\/customer\/disputes\/([\w-]+)$/.exec(path);
    if (method === 'GET' && disputePath) {
      const dispute = this.disputes.get(disputePath[1]!);
      return dispute && mine(dispute) ? [200, dispute] : [404, paypalError('RESOURCE_NOT_FOUND', 'The specified resource does not exist.', 'INVALID_RESOURCE_ID')];
    }
    return [404, paypalError('NOT_FOUND', `${method} ${path} not found`)];
  }

  private createOrder(body: Record<string, unknown> | null, appId: string): [number, unknown] {
    if (body?.intent !== 'CAPTURE' && body?.intent !== 'AUTHORIZE') return [400, paypalError('INVALID_REQUEST', 'intent is required', 'MISSING_REQUIRED_PARAMETER')];
    const units = body.purchase_units as FakeOrder['purchase_units'] | undefined;
    const unit = units?.[0];
    if (!unit?.amount || !/^\d+(\.\d{2})?$/.test(unit.amount.value) || !/^[A-Z]{3}$/.test(unit.amount.currency_code)) {
      return [422, paypalError('UNPROCESSABLE_ENTITY', 'The requested action could not be performed.', 'INVALID_PARAMETER_VALUE')];
    }
    const items = (unit.items ?? []) as { quantity: string; unit_amount: Money }[];
    const itemTotal = items.reduce((sum, item) => sum + Number(item.quantity) * Math.round(Number(item.unit_amount.value) * 100), 0);
    if (items.length > 0 && itemTotal !== Math.round(Number(unit.amount.value) * 100)) {
      return [422, paypalError('UNPROCESSABLE_ENTITY', 'Should equal sum of (unit_amount * quantity) across all items.', 'ITEM_TOTAL_MISMATCH')];
    }
    const withSource = body.payment_source !== undefined;
    const order: FakeOrder = {
      id: paypalId(),
      appId,
      status: withSource ? 'PAYER_ACTION_REQUIRED' : 'CREATED',
      intent: body.intent,
      purchase_units: [{ ...unit }],
      create_time: new Date().toISOString(),
    };
    this.orders.set(order.id, order);
    return [withSource ? 200 : 201, this.orderView(order)];
  }

  private capture(order: FakeOrder): [number, unknown] {
    if (order.status === 'COMPLETED') return [422, paypalError('UNPROCESSABLE_ENTITY', 'The requested action could not be performed.', 'ORDER_ALREADY_CAPTURED')];
    if (order.status !== 'APPROVED') return [422, paypalError('UNPROCESSABLE_ENTITY', 'The requested action could not be performed.', 'ORDER_NOT_APPROVED')];
    const unit = order.purchase_units[0]!;
    const now = new Date().toISOString();
    const outcome = this.nextCapture ?? 'COMPLETED';
    this.nextCapture = null;
    const capture: FakeCapture = {
      id: paypalId(),
      status: outcome,
      amount: unit.amount,
      final_capture: true,
      create_time: now,
      update_time: now,
      custom_id: unit.custom_id ?? null,
      order_id: order.id,
    };
    this.captures.set(capture.id, capture);
    unit.payments = { captures: [capture], refunds: [] };
    order.status = 'COMPLETED';
    return [201, this.orderView(order)];
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendRaw(res, status, JSON.stringify(body));
  }

  private sendRaw(res: ServerResponse, status: number, body: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'paypal-debug-id': randomBytes(7).toString('hex') });
    res.end(body);
  }
}

function paypalError(name: string, message: string, issue?: string, description = message) {
  return { name, message, debug_id: randomBytes(7).toString('hex'), ...(issue ? { details: [{ issue, description }] } : {}) };
}

export async function startFakePayPal(port = 0, pki?: TestPki): Promise<FakePayPal> {
  return new FakePayPal(pki).start(port);
}

/** The fake on the one port the local stack's PAYPAL_API_URL names, once no other test file holds it (as `takeFakeStripe`). */
export function takeFakePayPal(port: number, pki: TestPki, waitMs = 300_000): Promise<FakePayPal> {
  return takePort(() => new FakePayPal(pki).start(port), waitMs);
}
