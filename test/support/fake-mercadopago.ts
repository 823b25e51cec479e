import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mercadoPagoManifest, signMercadoPago } from '#lib/payments/mercadopago.ts';
import { ProviderFakeServer, takePort } from './fake-provider-server.ts';

/**
 * A Mercado Pago API on loopback, speaking its documented wire format (payments-providers.md 1.1):
 *
 * | call                                   | answer                                                                     |
 * |----------------------------------------|----------------------------------------------------------------------------|
 * | `GET /users/me`                        | 200 `{id, nickname, email, site_id}`; 401 for an unknown token               |
 * | `POST /v1/payments` (pix)              | 201 a pending payment with `point_of_interaction.transaction_data`         |
 * | `GET /v1/payments/{id}`                | 200 the payment; 404 when it is not the token's account's                  |
 * | `GET /v1/payments/search`              | 200 `{paging, results}` by `external_reference`, newest first              |
 * | `POST /v1/payments/{id}/refunds`       | 201 a refund (the payment becomes `refunded`); 400 when not refundable (not approved, or approved over 180 days ago) |
 * | `PUT /v1/payments/{id}`                | 200 `{status: cancelled}` of a pending payment; 400 otherwise              |
 * | `POST /checkout/preferences[/]`        | 201 `{id, init_point, sandbox_init_point, ...}`                            |
 * | `PUT /checkout/preferences/{id}`       | 200 the preference                                                         |
 *
 * Errors carry Mercado Pago's envelope `{message, error, status, cause: [{code, description}]}`.
 * Every POST needs `X-Idempotency-Key` (400 without, as for integrations made after 2023-11-01);
 * a key seen before, on the same path by the same token, answers the first answer again, byte for byte.
 *
 * Test controls: `accounts` (token -> account id), `setStatus` (what the buyer or Mercado Pago did),
 * `payPreference` (a Checkout Pro payment), `backdateApproval` (a payment too old to refund), `notify` (a notification signed like Mercado Pago's,
 * sent to the payment's `notification_url`), `outage` (`down`: connections dropped; `slow`: no
 * answer within `slowMs`; `error`: 500s), and `requests` (what the adapter sent).
 */
export interface FakePayment {
  id: number;
  status: string;
  status_detail: string;
  external_reference: string | null;
  collector_id: number;
  transaction_amount: number;
  transaction_amount_refunded: number;
  currency_id: string;
  payment_method_id: string;
  description: string | null;
  notification_url: string | null;
  date_created: string;
  date_approved: string | null;
  date_of_expiration: string | null;
  payer: unknown;
  point_of_interaction: { type: string; transaction_data: { qr_code: string; qr_code_base64: string; ticket_url: string } } | null;
  refunds: { id: number; payment_id: number; amount: number; status: string; date_created: string }[];
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const DAY_MS = 86_400_000;
const REFUND_WINDOW_DAYS = 180;

/** A 1x1 PNG: what a QR image is to a client that only shows it. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export class FakeMercadoPago extends ProviderFakeServer {
  readonly accounts = new Map<string, number>();
  readonly payments = new Map<number, FakePayment>();
  readonly preferences = new Map<string, Record<string, unknown> & { collector_id: number; external_reference: string | null; notification_url: string | null }>();
  readonly requests: SeenRequest[] = [];
  /** Answers by `<token> <path> <key>`: Mercado Pago replays the first answer to a repeated idempotency key. */
  private readonly replays = new Map<string, { status: number; body: string }>();
  private nextId = 1_319_000_001;

  addAccount(token: string, accountId: number): void {
    this.accounts.set(token, accountId);
  }

  /** What happened at Mercado Pago: the buyer paid, Mercado Pago expired it, a dispute... */
  setStatus(id: number, status: string, statusDetail = status === 'approved' ? 'accredited' : status, changes: Partial<FakePayment> = {}): FakePayment {
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`no fake payment ${id}`);
    Object.assign(payment, { status, status_detail: statusDetail, ...changes });
    if (status === 'approved' && !payment.date_approved) payment.date_approved = new Date().toISOString();
    if (status === 'refunded') payment.transaction_amount_refunded = payment.transaction_amount;
    return payment;
  }

  /** Moves the payment's approval `days` back: past 180, Mercado Pago refuses to refund it. */
  backdateApproval(id: number, days: number): FakePayment {
    const payment = this.payments.get(id);
    if (!payment?.date_approved) throw new Error(`fake payment ${id} is not approved`);
    payment.date_approved = new Date(Date.parse(payment.date_approved) - days * DAY_MS).toISOString();
    return payment;
  }

  /** A buyer paying a Checkout Pro preference: a payment under it, carrying its external_reference. */
  payPreference(preferenceId: string, status = 'approved', amount?: number): FakePayment {
    const preference = this.preferences.get(preferenceId);
    if (!preference) throw new Error(`no fake preference ${preferenceId}`);
    const items = preference.items as { unit_price: number; currency_id: string }[];
    const payment = this.newPayment(preference.collector_id, {
      transaction_amount: amount ?? items.reduce((sum, item) => sum + item.unit_price, 0),
      currency_id: items[0]?.currency_id ?? 'BRL',
      payment_method_id: 'visa',
      external_reference: preference.external_reference,
      notification_url: preference.notification_url,
    });
    return this.setStatus(payment.id, status);
  }

  /**
   * Sends what Mercado Pago sends about a payment: `POST <notification_url>?data.id=<id>&type=payment`,
   * body `{action, api_version, data: {id}, date_created, id, live_mode, type, user_id}`, signed
   * with `secret` over the documented manifest. `tamper` changes it after signing (a forgery).
   */
  async notify(
    id: number,
    options: { secret: string | null; url?: string; ts?: number; tamper?: 'id' | 'signature' },
  ): Promise<{ status: number; body: string; headers: Headers }> {
    const payment = this.payments.get(id);
    const url = options.url ?? payment?.notification_url;
    if (!url) throw new Error(`fake payment ${id} has no notification_url`);
    const requestId = randomUUID();
    const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
    if (options.secret !== null) {
      const v1 = signMercadoPago(options.secret, mercadoPagoManifest(String(id), requestId, ts));
      headers['x-signature'] = `ts=${ts},v1=${options.tamper === 'signature' ? v1.replace(/^./, (c) => (c === '0' ? '1' : '0')) : v1}`;
    }
    const sentId = options.tamper === 'id' ? id + 1 : id;
    const target = new URL(url);
    target.searchParams.set('data.id', String(sentId));
    target.searchParams.set('type', 'payment');
    const body = JSON.stringify({
      action: 'payment.updated',
      api_version: 'v1',
      data: { id: String(sentId) },
      date_created: new Date().toISOString(),
      id: Math.floor(Math.random() * 1e12),
      live_mode: false,
      type: 'payment',
      user_id: String(payment?.collector_id ?? 0),
    });
    const response = await fetch(target, { method: 'POST', headers, body });
    return { status: response.status, body: await response.text(), headers: response.headers };
  }

  private newPayment(collectorId: number, fields: Partial<FakePayment>): FakePayment {
    const id = this.nextId++;
    const payment: FakePayment = {
      id,
      status: 'pending',
      status_detail: 'pending_waiting_transfer',
      external_reference: null,
      collector_id: collectorId,
      transaction_amount: 0,
      transaction_amount_refunded: 0,
      currency_id: 'BRL',
      payment_method_id: 'pix',
      description: null,
      notification_url: null,
      date_created: new Date().toISOString(),
      date_approved: null,
      date_of_expiration: null,
      payer: null,
      point_of_interaction: null,
      refunds: [],
      ...fields,
    };
    this.payments.set(id, payment);
    return payment;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, headers: req.headers, body });

    if (await this.outageTook(req, res, () => this.send(res, 500, error(500, 'internal_error', 'Internal server error')))) return;

    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const account = token === undefined ? undefined : this.accounts.get(token);
    if (account === undefined) return this.send(res, 401, error(401, 'unauthorized', 'invalid access token'));
    if (body === undefined) return this.send(res, 400, error(400, 'bad_request', 'invalid JSON body'));

    const key = req.headers['x-idempotency-key'];
    if (req.method === 'POST') {
      if (typeof key !== 'string' || key === '') return this.send(res, 400, error(400, 'bad_request', "Header X-Idempotency-Key can't be null"));
      const replay = this.replays.get(`${token} ${url.pathname} ${key}`);
      if (replay) return this.sendRaw(res, replay.status, replay.body);
    }
    const [status, answer] = this.route(req.method ?? '', url, body as Record<string, unknown> | null, account);
    const text = JSON.stringify(answer);
    if (req.method === 'POST' && status < 500) this.replays.set(`${token} ${url.pathname} ${key as string}`, { status, body: text });
    this.sendRaw(res, status, text);
  }

  private route(method: string, url: URL, body: Record<string, unknown> | null, account: number): [number, unknown] {
    const path = url.pathname.replace(/\/+$/, '');
    if (method === 'GET' && path === '/users/me') return [200, { id: account, nickname: `SELLER${account}`, email: `seller${account}@example.com`, site_id: 'MLB' }];
    if (method === 'POST' && path === '/v1/payments') return this.createPayment(body, account);
    if (method === 'GET' && path === '/v1/payments/search') {
      const reference = url.searchParams.get('external_reference');
      const results = [...this.payments.values()].filter((p) => p.collector_id === account && (reference === null || p.external_reference === reference)).reverse();
      return [200, { paging: { total: results.length, limit: 30, offset: 0 }, results }];
    }
    const paymentPath = /^\/v1\/payments\/(\d+)(\/refunds)?$/.exec(path);
    if (paymentPath) {
      const payment = this.payments.get(Number(paymentPath[1]));
      if (!payment || payment.collector_id !== account) return [404, error(404, 'not_found', 'Payment not found', 2000)];
      if (method === 'GET' && !paymentPath[2]) return [200, payment];
      if (method === 'POST' && paymentPath[2]) return this.refund(payment, body);
      if (method === 'PUT' && !paymentPath[2]) {
        if (body?.status !== 'cancelled') return [400, error(400, 'bad_request', 'only status cancelled may be set')];
        if (!['pending', 'in_process', 'authorized'].includes(payment.status))
          return [400, error(400, 'bad_request', `Payment in status ${payment.status} cannot be cancelled`, 4040)];
        this.setStatus(payment.id, 'cancelled', 'by_collector');
        return [200, payment];
      }
    }
    if (method === 'POST' && path === '/checkout/preferences') return this.createPreference(body, account);
    const preferencePath = /^\/checkout\/preferences\/([\w-]+)$/.exec(path);
    if (preferencePath && method === 'PUT') {
      const preference = this.preferences.get(preferencePath[1]!);
      if (!preference || preference.collector_id !== account) return [404, error(404, 'not_found', 'Preference not found')];
      Object.assign(preference, body);
      return [200, preference];
    }
    return [404, error(404, 'not_found', `resource ${method} ${path} not found`)];
  }

  private createPayment(body: Record<string, unknown> | null, account: number): [number, unknown] {
    const amount = body?.transaction_amount;
    const payer = body?.payer as { email?: unknown } | undefined;
    if (typeof amount !== 'number' || !(amount > 0)) return [400, error(400, 'bad_request', 'transaction_amount must be a positive number', 4037)];
    if (body?.payment_method_id !== 'pix') return [400, error(400, 'bad_request', 'payment_method_id not found', 4050)];
    if (typeof payer?.email !== 'string') return [400, error(400, 'bad_request', 'payer.email must be a valid email', 4050)];
    const expiry = typeof body.date_of_expiration === 'string' ? body.date_of_expiration : new Date(Date.now() + 86_400_000).toISOString();
    const payment = this.newPayment(account, {
      transaction_amount: amount,
      description: typeof body.description === 'string' ? body.description : null,
      external_reference: typeof body.external_reference === 'string' ? body.external_reference : null,
      notification_url: typeof body.notification_url === 'string' ? body.notification_url : null,
      date_of_expiration: expiry,
      payer: body.payer,
    });
    payment.point_of_interaction = {
      type: 'PIX',
      transaction_data: {
        qr_code: `00020126580014br.gov.bcb.pix0136${randomUUID()}5204000053039865406${amount.toFixed(2)}5802BR6304ABCD`,
        qr_code_base64: PNG_1X1,
        ticket_url: `https://www.mercadopago.com.br/payments/${payment.id}/ticket`,
      },
    };
    return [201, payment];
  }

  private refund(payment: FakePayment, body: Record<string, unknown> | null): [number, unknown] {
    if (payment.status !== 'approved') return [400, error(400, 'bad_request', `Payment in status ${payment.status} cannot be refunded`, 2063)];
    // Mercado Pago refunds a payment up to 180 days after its approval.
    if (Date.now() - Date.parse(payment.date_approved ?? payment.date_created) > REFUND_WINDOW_DAYS * DAY_MS) {
      return [400, error(400, 'bad_request', 'Payment too old to be refunded', 2024)];
    }
    const amount = typeof body?.amount === 'number' ? body.amount : payment.transaction_amount - payment.transaction_amount_refunded;
    const refund = { id: this.nextId++, payment_id: payment.id, amount, status: 'approved', date_created: new Date().toISOString() };
    payment.refunds.push(refund);
    payment.transaction_amount_refunded = Math.round((payment.transaction_amount_refunded + amount) * 100) / 100;
    if (payment.transaction_amount_refunded >= payment.transaction_amount) this.setStatus(payment.id, 'refunded', 'refunded');
    else payment.status_detail = 'partially_refunded';
    return [201, refund];
  }

  private createPreference(body: Record<string, unknown> | null, account: number): [number, unknown] {
    const items = body?.items;
    if (!Array.isArray(items) || items.length === 0) return [400, error(400, 'bad_request', 'items needed')];
    const id = `${account}-${randomUUID()}`;
    const preference = {
      ...body,
      id,
      collector_id: account,
      external_reference: typeof body?.external_reference === 'string' ? body.external_reference : null,
      notification_url: typeof body?.notification_url === 'string' ? body.notification_url : null,
      init_point: `https://www.mercadopago.com.br/checkout/v1/redirect?pref_id=${id}`,
      sandbox_init_point: `https://sandbox.mercadopago.com.br/checkout/v1/redirect?pref_id=${id}`,
      date_created: new Date().toISOString(),
    };
    this.preferences.set(id, preference);
    return [201, preference];
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendRaw(res, status, JSON.stringify(body));
  }

  private sendRaw(res: ServerResponse, status: number, body: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomUUID() });
    res.end(body);
  }
}

function error(status: number, code: string, message: string, causeCode?: number) {
  return { message, error: code, status, cause: causeCode ? [{ code: causeCode, description: message, data: null }] : [] };
}

export async function startFakeMercadoPago(port = 0): Promise<FakeMercadoPago> {
  return new FakeMercadoPago().start(port);
}

/**
 * The fake on the one port the local stack's MERCADOPAGO_API_URL names, once no other test file
 * holds it (files run in parallel: each that needs the stack to reach Mercado Pago takes it in
 * turn, for the whole file, and `stop()` gives it back).
 */
export function takeFakeMercadoPago(port: number, waitMs = 300_000): Promise<FakeMercadoPago> {
  return takePort(() => new FakeMercadoPago().start(port), waitMs);
}
