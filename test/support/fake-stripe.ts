import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { signStripe } from '#lib/payments/stripe.ts';
import { ProviderFakeServer, takePort } from './fake-provider-server.ts';

/**
 * A Stripe API on loopback, speaking its documented wire format (payments-providers.md 1.2):
 * form-encoded bodies (`a[b][0][c]=v`), `Authorization: Bearer sk_...`, errors as
 * `{error: {type, code, message, param}}`, `Idempotency-Key` replaying the first answer (with
 * `Idempotent-Replayed: true`; the same key with other parameters is a 400 `idempotency_error`),
 * `expand[]` of a session's `payment_intent` and its `latest_charge`.
 *
 * | call                                        | answer                                                              |
 * |---------------------------------------------|---------------------------------------------------------------------|
 * | `GET /v1/account`                           | the key's account `{id: acct_..., object: account}`                 |
 * | `POST /v1/checkout/sessions`                | an open session with `url`; 400 for a missing `success_url`, line items or an `expires_at` outside 30 min..24 h |
 * | `GET /v1/checkout/sessions/{id}`            | the session; `GET /v1/checkout/sessions?payment_intent=` a list      |
 * | `POST /v1/checkout/sessions/{id}/expire`    | the session expired; 400 when it is not open                        |
 * | `GET /v1/charges/{id}`, `GET /v1/payment_intents/search` | the charge; intents by `metadata['payment_id']:'...'`  |
 * | `POST /v1/refunds {payment_intent}`         | a refund; 400 `charge_already_refunded`, `charge_disputed`, `charge_expired_for_refund` (over 180 days) |
 * | `GET /v1/disputes?payment_intent=`          | the intent's disputes, newest first                                 |
 *
 * Test controls play the buyer and Stripe: `complete` (paid, or unpaid for an async method),
 * `asyncResult`, `expire`, `refundInDashboard`, `backdateCharge`, `dispute` / `disputeStatus`, `notify` (an event
 * signed with `Stripe-Signature` to a URL), `fail` (down, slow, 500s) and `requests`.
 */
export interface FakeSession {
  id: string;
  object: 'checkout.session';
  account: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid';
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  url: string;
  success_url: string;
  cancel_url: string | null;
  customer_email: string | null;
  expires_at: number;
  created: number;
  line_items: { quantity: number; price_data: { currency: string; unit_amount: number; product_data: { name: string } } }[];
  intent_metadata: Record<string, string>;
}

interface FakeIntent {
  id: string;
  object: 'payment_intent';
  status: string;
  amount: number;
  currency: string;
  metadata: Record<string, string>;
  latest_charge: string | null;
}

interface FakeCharge {
  id: string;
  object: 'charge';
  amount: number;
  amount_refunded: number;
  refunded: boolean;
  disputed: boolean;
  created: number;
  status: string;
  payment_intent: string;
  currency: string;
}

interface FakeDispute {
  id: string;
  object: 'dispute';
  status: string;
  charge: string;
  payment_intent: string;
  amount: number;
  balance_transactions: { id: string; amount: number }[];
  created: number;
}

export interface SeenStripeRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form: URLSearchParams;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const nowS = () => Math.floor(Date.now() / 1000);
const DAY_S = 86_400;
/** Stripe refunds a card charge up to 180 days after it was made. */
const REFUND_WINDOW_DAYS = 180;

/** `a[b][0][c]=v` back into nested objects and arrays, as Stripe reads its form bodies. */
export function parseStripeForm(form: URLSearchParams): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of form) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    for (const name of path.slice(0, -1)) {
      node[name] ??= {};
      node = node[name] as Record<string, unknown>;
    }
    node[path.at(-1)!] = value;
  }
  const arrays = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const entries = Object.entries(value);
    if (entries.length > 0 && entries.every(([name], index) => name === String(index))) return entries.map(([, inner]) => arrays(inner));
    return Object.fromEntries(entries.map(([name, inner]) => [name, arrays(inner)]));
  };
  return arrays(root) as Record<string, unknown>;
}

/** Its own outage, `busy`: 409 `idempotency_key_in_use`, a request under the same key still running at Stripe. */
export class FakeStripe extends ProviderFakeServer<'busy'> {
  /** Secret key -> account id. */
  readonly accounts = new Map<string, string>();
  readonly sessions = new Map<string, FakeSession>();
  readonly intents = new Map<string, FakeIntent>();
  readonly charges = new Map<string, FakeCharge>();
  readonly disputes = new Map<string, FakeDispute>();
  readonly requests: SeenStripeRequest[] = [];
  private readonly replays = new Map<string, { params: string; status: number; body: string }>();

  addAccount(secretKey: string, accountId: string): void {
    this.accounts.set(secretKey, accountId);
  }

  /** The buyer finished Checkout: `paid` (a card), or `unpaid` (an asynchronous method still on its way). */
  complete(sessionId: string, paymentStatus: 'paid' | 'unpaid' = 'paid'): FakeSession {
    const session = this.session(sessionId);
    const intent: FakeIntent = {
      id: id('pi'),
      object: 'payment_intent',
      status: paymentStatus === 'paid' ? 'succeeded' : 'processing',
      amount: session.amount_total,
      currency: session.currency,
      metadata: session.intent_metadata,
      latest_charge: null,
    };
    this.intents.set(intent.id, intent);
    Object.assign(session, { status: 'complete', payment_status: paymentStatus, payment_intent: intent.id });
    if (paymentStatus === 'paid') this.charge(intent);
    return session;
  }

  /** `checkout.session.async_payment_succeeded` / `_failed`: the asynchronous method's outcome. */
  asyncResult(sessionId: string, outcome: 'succeeded' | 'failed'): FakeSession {
    const session = this.session(sessionId);
    const intent = this.intents.get(session.payment_intent!)!;
    if (outcome === 'failed') intent.status = 'requires_payment_method';
    else {
      intent.status = 'succeeded';
      session.payment_status = 'paid';
      this.charge(intent);
    }
    return session;
  }

  expire(sessionId: string): FakeSession {
    const session = this.session(sessionId);
    session.status = 'expired';
    return session;
  }

  /** Moves the session's charge `days` back: past 180, Stripe refuses to refund it (`charge_expired_for_refund`). */
  backdateCharge(sessionId: string, days: number): FakeCharge {
    const charge = this.chargeOfSession(sessionId);
    charge.created -= days * DAY_S;
    return charge;
  }

  /** A refund made in Stripe's dashboard (`amount` in cents, the rest of the charge by default). */
  refundInDashboard(sessionId: string, amount?: number): FakeCharge {
    const charge = this.chargeOfSession(sessionId);
    this.refundCharge(charge, amount);
    return charge;
  }

  /** The buyer's bank opened a dispute: `funds_withdrawn` adds the balance transaction Stripe makes when it takes the money. */
  dispute(sessionId: string, status = 'needs_response', fundsWithdrawn = true): FakeDispute {
    const charge = this.chargeOfSession(sessionId);
    charge.disputed = true;
    const dispute: FakeDispute = {
      id: id('du'),
      object: 'dispute',
      status,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      amount: charge.amount,
      balance_transactions: fundsWithdrawn ? [{ id: id('txn'), amount: -charge.amount }] : [],
      created: nowS(),
    };
    this.disputes.set(dispute.id, dispute);
    return dispute;
  }

  /** A dispute moves on (`won` reinstates the money: a second balance transaction). */
  disputeStatus(disputeId: string, status: string): FakeDispute {
    const dispute = this.disputes.get(disputeId)!;
    dispute.status = status;
    if (status === 'won' && dispute.balance_transactions.length === 1) dispute.balance_transactions.push({ id: id('txn'), amount: dispute.amount });
    return dispute;
  }

  /**
   * Sends an event as Stripe does: `POST url`, body `{id: evt_..., object: event, type, data: {object}}`,
   * `Stripe-Signature: t=..,v1=..` under `secret` (`timestamp` to sign an old or future one;
   * `tamper` changes the body after signing).
   */
  async notify(url: string, secret: string, type: string, object: unknown, options: { timestamp?: number; tamper?: boolean } = {}): Promise<{ status: number; body: string }> {
    const payload = JSON.stringify({ id: id('evt'), object: 'event', api_version: '2026-10-28.endive', created: nowS(), livemode: false, type, data: { object } });
    const timestamp = options.timestamp ?? nowS();
    const signature = `t=${timestamp},v1=${signStripe(secret, timestamp, payload)}`;
    const body = options.tamper ? payload.replace('"livemode":false', '"livemode":true') : payload;
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature }, body });
    return { status: response.status, body: await response.text() };
  }

  chargeOfSession(sessionId: string): FakeCharge {
    const intent = this.intents.get(this.session(sessionId).payment_intent ?? '');
    const charge = intent?.latest_charge ? this.charges.get(intent.latest_charge) : undefined;
    if (!charge) throw new Error(`fake session ${sessionId} has no charge`);
    return charge;
  }

  private session(sessionId: string): FakeSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no fake session ${sessionId}`);
    return session;
  }

  private charge(intent: FakeIntent): void {
    const charge: FakeCharge = {
      id: id('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_refunded: 0,
      refunded: false,
      disputed: false,
      created: nowS(),
      status: 'succeeded',
      payment_intent: intent.id,
      currency: intent.currency,
    };
    this.charges.set(charge.id, charge);
    intent.latest_charge = charge.id;
  }

  private refundCharge(charge: FakeCharge, amount?: number): void {
    charge.amount_refunded = Math.min(charge.amount, charge.amount_refunded + (amount ?? charge.amount - charge.amount_refunded));
    charge.refunded = charge.amount_refunded >= charge.amount;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const form = new URLSearchParams(raw);
    this.requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, headers: req.headers, form });

    const busy =
      'There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through). Please try again later.';
    const outage = (kind: 'error' | 'busy') =>
      kind === 'busy'
        ? this.send(res, 409, stripeError('invalid_request_error', busy, 'idempotency_key_in_use'))
        : this.send(res, 500, stripeError('api_error', 'An error occurred with our connection to Stripe.'));
    if (await this.outageTook(req, res, outage)) return;

    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const account = key === undefined ? undefined : this.accounts.get(key);
    if (account === undefined) {
      return this.send(res, 401, stripeError('invalid_request_error', `Invalid API Key provided: ${(key ?? '').slice(0, 8)}****`));
    }
    if (req.method === 'POST' && raw !== '' && !(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return this.send(res, 400, stripeError('invalid_request_error', 'Invalid request: bodies must be form-encoded'));
    }
    const idempotency = req.headers['idempotency-key'];
    const replayKey = `${key} ${typeof idempotency === 'string' ? idempotency : ''}`;
    if (req.method === 'POST' && typeof idempotency === 'string') {
      const seen = this.replays.get(replayKey);
      if (seen) {
        if (seen.params !== `${url.pathname}?${raw}`) {
          return this.send(res, 400, stripeError('idempotency_error', 'Keys for idempotent requests can only be used with the same parameters they were first used with.'));
        }
        res.writeHead(seen.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
        return void res.end(seen.body);
      }
    }
    const [status, answer] = this.route(req.method ?? '', url, parseStripeForm(form), account);
    const text = JSON.stringify(answer);
    if (req.method === 'POST' && typeof idempotency === 'string' && status < 500) this.replays.set(replayKey, { params: `${url.pathname}?${raw}`, status, body: text });
    this.sendRaw(res, status, text);
  }

  private sessionView(session: FakeSession, expand: string[]): Record<string, unknown> {
    const { account: _account, line_items: _lines, intent_metadata: _metadata, ...view } = session;
    if (!expand.some((path) => path === 'payment_intent' || path.startsWith('payment_intent.')) || !session.payment_intent) return view;
    const intent = this.intents.get(session.payment_intent)!;
    const expandCharge = expand.includes('payment_intent.latest_charge');
    return { ...view, payment_intent: { ...intent, latest_charge: expandCharge && intent.latest_charge ? this.charges.get(intent.latest_charge) : intent.latest_charge } };
  }

  private owned<T extends { id: string }>(item: T | undefined, account: string, ofAccount: (item: T) => string): T | undefined {
    return item && ofAccount(item) === account ? item : undefined;
  }

  private accountOfIntent = (intentId: string) => [...this.sessions.values()].find((session) => session.payment_intent === intentId)?.account ?? '';

  private route(method: string, url: URL, params: Record<string, unknown>, account: string): [number, unknown] {
    const path = url.pathname;
    const expand = url.searchParams.getAll('expand[]');
    if (method === 'GET' && path === '/v1/account') return [200, { id: account, object: 'account', country: 'BR', default_currency: 'brl', charges_enabled: true }];
    if (method === 'POST' && path === '/v1/checkout/sessions') return this.createSession(params, account);
    if (method === 'GET' && path === '/v1/checkout/sessions') {
      const intent = url.searchParams.get('payment_intent');
      const nested = expand.filter((item) => item.startsWith('data.')).map((item) => item.slice(5));
      const data = [...this.sessions.values()].filter((session) => session.account === account && (intent === null || session.payment_intent === intent)).reverse();
      return [200, { object: 'list', url: '/v1/checkout/sessions', has_more: false, data: data.map((session) => this.sessionView(session, nested)) }];
    }
    const sessionPath = /^\/v1\/checkout\/sessions\/([\w]+)(\/expire)?$/.exec(path);
    if (sessionPath) {
      const session = this.owned(this.sessions.get(sessionPath[1]!), account, (item) => item.account);
      if (!session) return [404, stripeError('invalid_request_error', `No such checkout.session: '${sessionPath[1]}'`, 'resource_missing', 'id')];
      if (method === 'GET' && !sessionPath[2]) return [200, this.sessionView(session, expand)];
      if (method === 'POST' && sessionPath[2]) {
        if (session.status !== 'open') return [400, stripeError('invalid_request_error', 'Only Checkout Sessions with a status in ["open"] can be expired.')];
        session.status = 'expired';
        return [200, this.sessionView(session, [])];
      }
    }
    const chargePath = /^\/v1\/charges\/(\w+)$/.exec(path);
    if (method === 'GET' && chargePath) {
      const charge = this.owned(this.charges.get(chargePath[1]!), account, (item) => this.accountOfIntent(item.payment_intent));
      return charge ? [200, charge] : [404, stripeError('invalid_request_error', `No such charge: '${chargePath[1]}'`, 'resource_missing', 'id')];
    }
    if (method === 'GET' && path === '/v1/payment_intents/search') {
      const wanted = /^metadata\['payment_id'\]:'([^']*)'$/.exec(url.searchParams.get('query') ?? '')?.[1];
      const data = [...this.intents.values()].filter((intent) => this.accountOfIntent(intent.id) === account && intent.metadata.payment_id === wanted);
      return [200, { object: 'search_result', has_more: false, data }];
    }
    if (method === 'POST' && path === '/v1/refunds') {
      const intent = this.owned(this.intents.get(String(params.payment_intent ?? '')), account, (item) => this.accountOfIntent(item.id));
      if (!intent) return [404, stripeError('invalid_request_error', `No such payment_intent: '${params.payment_intent}'`, 'resource_missing', 'payment_intent')];
      const charge = intent.latest_charge ? this.charges.get(intent.latest_charge) : undefined;
      if (!charge) return [400, stripeError('invalid_request_error', 'This PaymentIntent does not have a successful charge to refund.')];
      if (charge.refunded) return [400, stripeError('invalid_request_error', `Charge ${charge.id} has already been refunded.`, 'charge_already_refunded')];
      if (charge.disputed) return [400, stripeError('invalid_request_error', `Charge ${charge.id} has been charged back; cannot issue a refund.`, 'charge_disputed')];
      if (nowS() - charge.created > REFUND_WINDOW_DAYS * DAY_S) {
        return [400, stripeError('invalid_request_error', `Charge ${charge.id} is too old to be refunded.`, 'charge_expired_for_refund')];
      }
      const amount = charge.amount - charge.amount_refunded;
      this.refundCharge(charge);
      return [200, { id: id('re'), object: 'refund', amount, charge: charge.id, payment_intent: intent.id, status: 'succeeded', currency: charge.currency }];
    }
    if (method === 'GET' && path === '/v1/disputes') {
      const intent = url.searchParams.get('payment_intent');
      const data = [...this.disputes.values()].filter((dispute) => dispute.payment_intent === intent && this.accountOfIntent(dispute.payment_intent) === account).reverse();
      return [200, { object: 'list', url: '/v1/disputes', has_more: false, data: data.slice(0, Number(url.searchParams.get('limit') ?? 10)) }];
    }
    return [404, stripeError('invalid_request_error', `Unrecognized request URL (${method}: ${path}).`)];
  }

  private createSession(params: Record<string, unknown>, account: string): [number, unknown] {
    if (params.mode !== 'payment') return [400, stripeError('invalid_request_error', 'Missing required param: mode.', 'parameter_missing', 'mode')];
    if (typeof params.success_url !== 'string') return [400, stripeError('invalid_request_error', 'Missing required param: success_url.', 'parameter_missing', 'success_url')];
    const lines = params.line_items as { quantity?: string; price_data?: { currency?: string; unit_amount?: string; product_data?: { name?: string } } }[] | undefined;
    if (!Array.isArray(lines) || lines.length === 0) return [400, stripeError('invalid_request_error', 'Missing required param: line_items.', 'parameter_missing', 'line_items')];
    const currencies = new Set(lines.map((line) => line.price_data?.currency));
    if (currencies.size !== 1) return [400, stripeError('invalid_request_error', 'All line items must share one currency.', 'parameter_invalid', 'line_items')];
    const parsed = lines.map((line) => ({
      quantity: Number(line.quantity),
      price_data: {
        currency: String(line.price_data?.currency),
        unit_amount: Number(line.price_data?.unit_amount),
        product_data: { name: String(line.price_data?.product_data?.name ?? '') },
      },
    }));
    if (
      parsed.some(
        (line) =>
          !Number.isInteger(line.quantity) ||
          line.quantity < 1 ||
          !Number.isInteger(line.price_data.unit_amount) ||
          line.price_data.unit_amount < 0 ||
          !line.price_data.product_data.name,
      )
    ) {
      return [400, stripeError('invalid_request_error', 'Invalid line_items.', 'parameter_invalid_integer', 'line_items')];
    }
    const expiresAt = params.expires_at === undefined ? nowS() + 86_400 : Number(params.expires_at);
    if (!Number.isInteger(expiresAt) || expiresAt < nowS() + 30 * 60 || expiresAt > nowS() + 86_400) {
      return [
        400,
        stripeError(
          'invalid_request_error',
          'The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.',
          'parameter_invalid_integer',
          'expires_at',
        ),
      ];
    }
    const sessionId = `cs_test_${randomBytes(16).toString('hex')}`;
    const session: FakeSession = {
      id: sessionId,
      object: 'checkout.session',
      account,
      status: 'open',
      payment_status: 'unpaid',
      amount_total: parsed.reduce((sum, line) => sum + line.quantity * line.price_data.unit_amount, 0),
      currency: [...currencies][0]!,
      client_reference_id: typeof params.client_reference_id === 'string' ? params.client_reference_id : null,
      metadata: (params.metadata as Record<string, string>) ?? {},
      payment_intent: null,
      url: `https://checkout.stripe.com/c/pay/${sessionId}`,
      success_url: params.success_url,
      cancel_url: typeof params.cancel_url === 'string' ? params.cancel_url : null,
      customer_email: typeof params.customer_email === 'string' ? params.customer_email : null,
      expires_at: expiresAt,
      created: nowS(),
      line_items: parsed,
      intent_metadata: ((params.payment_intent_data as { metadata?: Record<string, string> } | undefined)?.metadata ?? {}) as Record<string, string>,
    };
    this.sessions.set(sessionId, session);
    return [200, this.sessionView(session, [])];
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendRaw(res, status, JSON.stringify(body));
  }

  private sendRaw(res: ServerResponse, status: number, body: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}`, 'stripe-version': '2026-10-28.endive' });
    res.end(body);
  }
}

function stripeError(type: string, message: string, code?: string, param?: string) {
  return { error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) } };
}

export async function startFakeStripe(port = 0): Promise<FakeStripe> {
  return new FakeStripe().start(port);
}

/**
 * The fake on the one port the local stack's STRIPE_API_URL names, once no other test file holds
 * it (files run in parallel: each takes it in turn for the whole file; `stop()` gives it back).
 */
export function takeFakeStripe(port: number, waitMs = 300_000): Promise<FakeStripe> {
  return takePort(() => new FakeStripe().start(port), waitMs);
}
