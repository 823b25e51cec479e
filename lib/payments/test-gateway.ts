import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  ProviderError,
  type ChargeRequest,
  type CreatedCharge,
  type NotificationCheck,
  type NotificationInput,
  type PaymentAtProvider,
  type ProviderAdapter,
  type ProviderCredentials,
} from '#lib/payments/adapter.ts';
import type { ProviderSnapshot, TestCharge, TestChargeStatus } from '#lib/schemas/payment.ts';

/**
 * The TEST gateway (section 13: the local stack, and a stage deployed with `testGateway=true`): a
 * provider played by the API itself, so a whole paid purchase runs offline through the same path
 * as a real one. Its `checkout_url` is a page of the API host whose buttons pay, fail, refund or
 * dispute the charge; each button changes the charge's provider-side state (`TestGatewayLedger`,
 * kept in the table by lib/db) and then sends a signed notification to the store's notify route,
 * which fetches the state back through this adapter and settles it like any provider's.
 *
 * The signature, designed here: every store that enables TEST gets its own random `signing_secret`
 * (stored sealed like any provider secret). A notification carries
 * `x-test-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(signing_secret, "<t>.<raw body>")>`:
 * unlike Mercado Pago's it covers the body, and `t` must be within 5 minutes of the receiver's
 * clock either way (we send it ourselves, at once: a replay or a clock that far off is refused).
 * The store's TEST account is derived from its secret, so the binding check (rule 2) has an
 * account to compare, and one store's charges never bind to another's payments.
 */
export const TEST_SIGNATURE_HEADER = 'x-test-signature';
export const TEST_SIGNATURE_TOLERANCE_S = 300;

export type { TestCharge, TestChargeStatus };

/** Where the TEST provider keeps its charges (lib/db implements it with one item per charge). */
export interface TestGatewayLedger {
  /** Stores the charge unless its ref exists; answers the one stored (the create's idempotency). */
  putIfAbsent(charge: TestCharge): Promise<TestCharge>;
  /** The charge of this account, or undefined (another account's charge is as absent as none). */
  get(account: string, ref: string): Promise<TestCharge | undefined>;
  /** Stores a changed charge if it is still as `previous` (its `updated_at`), else false. */
  replace(charge: TestCharge, previous: TestCharge): Promise<boolean>;
}

export type TestAction = 'pay' | 'fail' | 'cancel' | 'refund' | 'dispute' | 'win' | 'lose';

/** The TEST account of a signing secret: a name, not a secret (16 hex characters of its SHA-256). */
export const testAccountOf = (signingSecret: string) => `test_${createHash('sha256').update(signingSecret, 'utf8').digest('hex').slice(0, 16)}`;

/**
 * What each button does to a charge, as a provider would allow it: pay or fail a pending charge,
 * refund or dispute a paid one, decide an open dispute. Anything else: null (the button is not offered).
 */
export function testGatewayAction(charge: TestCharge, action: TestAction, now: number): TestCharge | null {
  const at = new Date(now).toISOString();
  const paidLive = charge.status === 'PAID';
  switch (action) {
    case 'pay':
      return charge.status === 'PENDING' ? { ...charge, status: 'PAID', paid_at: at, updated_at: at } : null;
    case 'fail':
      return charge.status === 'PENDING' ? { ...charge, status: 'FAILED', updated_at: at } : null;
    case 'cancel':
      return charge.status === 'PENDING' ? { ...charge, status: 'CANCELED', updated_at: at } : null;
    case 'refund':
      return paidLive && charge.dispute === null ? { ...charge, status: 'REFUNDED', refunded_cents: charge.amount_cents, updated_at: at } : null;
    case 'dispute':
      return paidLive && charge.dispute === null ? { ...charge, dispute: 'OPEN', updated_at: at } : null;
    case 'win':
      return charge.dispute === 'OPEN' ? { ...charge, dispute: 'WON', updated_at: at } : null;
    case 'lose':
      return charge.dispute === 'OPEN' ? { ...charge, dispute: 'LOST', status: 'CHARGEBACK', updated_at: at } : null;
  }
}

export function testSnapshot(charge: TestCharge): ProviderSnapshot {
  return {
    provider_ref: charge.ref,
    reference: charge.reference,
    account: charge.account,
    amount_cents: charge.amount_cents,
    currency: charge.currency,
    status: charge.status,
    refunded_cents: charge.refunded_cents,
    dispute: charge.dispute,
    paid_at: charge.paid_at,
  };
}

const sign = (secret: string, t: string, rawBody: string) => createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex');

/** The notification a button sends: POST it to `charge.notification_url` with these headers and this exact body. */
export function testNotification(charge: Pick<TestCharge, 'ref'>, signingSecret: string, now: number): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ type: 'payment', data: { id: charge.ref } });
  const t = String(Math.floor(now / 1000));
  return { body, headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: `t=${t},v1=${sign(signingSecret, t, body)}` } };
}

export function verifyTestNotification({ rawBody, headers, secret, now }: NotificationInput): NotificationCheck {
  if (secret === null) return { outcome: 'refused', reason: 'the TEST gateway has no signing secret' };
  const header = headers[TEST_SIGNATURE_HEADER];
  if (!header) return { outcome: 'refused', reason: `no ${TEST_SIGNATURE_HEADER} header` };
  const t = /(?:^|,)\s*t=(\d{1,12})\s*(?:,|$)/.exec(header)?.[1];
  const v1 = /(?:^|,)\s*v1=([0-9a-f]{64})\s*(?:,|$)/.exec(header)?.[1];
  if (!t || !v1) return { outcome: 'refused', reason: `malformed ${TEST_SIGNATURE_HEADER} header` };
  if (!timingSafeEqual(Buffer.from(sign(secret, t, rawBody)), Buffer.from(v1))) return { outcome: 'refused', reason: 'signature does not match' };
  if (Math.abs(now / 1000 - Number(t)) > TEST_SIGNATURE_TOLERANCE_S) return { outcome: 'refused', reason: 'signed too long ago, or in the future' };
  let body: { type?: unknown; data?: { id?: unknown } } | null;
  try {
    body = JSON.parse(rawBody) as { type?: unknown; data?: { id?: unknown } } | null;
  } catch {
    return { outcome: 'ignored' };
  }
  const ref = body?.data?.id;
  if (body?.type !== 'payment' || typeof ref !== 'string' || !/^tst_[A-Za-z0-9_-]{1,64}$/.test(ref)) return { outcome: 'ignored' };
  return { outcome: 'verified', refs: [ref] };
}

export interface TestGatewayOptions {
  ledger: TestGatewayLedger;
  /** The page of the API host where a TEST charge is paid (its `checkout_url`). */
  pageUrl: (ref: string) => string;
  /** The time of the request being served (lib/clock.ts on the stack). */
  now: () => number;
}

export function testGatewayAdapter({ ledger, pageUrl, now }: TestGatewayOptions): ProviderAdapter {
  const accountOf = (credentials: Pick<ProviderCredentials, 'secrets'>) => {
    const secret = credentials.secrets.signing_secret;
    if (!secret) throw new ProviderError('test', 'credentials', 'no signing_secret');
    return testAccountOf(secret);
  };

  async function chargeOf(credentials: ProviderCredentials, ref: string): Promise<TestCharge> {
    const charge = await ledger.get(accountOf(credentials), ref);
    if (!charge) throw new ProviderError('test', 'not_found', `no TEST charge ${ref}`);
    return charge;
  }

  /** A button's or a call's change, kept only if no other change landed since the read (then read again, once). */
  async function change(credentials: ProviderCredentials, ref: string, action: TestAction): Promise<TestCharge> {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const charge = await chargeOf(credentials, ref);
      const next = testGatewayAction(charge, action, now());
      if (!next) return charge;
      if (await ledger.replace(next, charge)) return next;
    }
    throw new ProviderError('test', 'unavailable', `TEST charge ${ref} kept changing`);
  }

  return {
    provider: 'test',

    async checkCredentials(secrets) {
      return { accountId: accountOf({ secrets }) };
    },

    async createCharge(credentials: ProviderCredentials, { payment, notificationUrl, returnUrl }: ChargeRequest): Promise<CreatedCharge> {
      const at = new Date(now()).toISOString();
      const charge = await ledger.putIfAbsent({
        ref: `tst_${payment.id}`,
        reference: payment.id,
        account: accountOf(credentials),
        amount_cents: Math.round(payment.amount * 100),
        currency: payment.currency,
        status: 'PENDING',
        refunded_cents: 0,
        dispute: null,
        paid_at: null,
        expires_at: payment.expires_at,
        notification_url: notificationUrl,
        return_url: returnUrl,
        created_at: at,
        updated_at: at,
      });
      return { provider_ref: charge.ref, snapshot: testSnapshot(charge), pix_code: null, qr_code: null, checkout_url: pageUrl(charge.ref), expires_at: charge.expires_at };
    },

    async fetch(credentials, ref) {
      return testSnapshot(await chargeOf(credentials, ref));
    },

    async findByReference(credentials, paymentId) {
      const charge = await ledger.get(accountOf(credentials), `tst_${paymentId}`);
      return charge ? [testSnapshot(charge)] : [];
    },

    async refund(credentials, payment: PaymentAtProvider) {
      const charge = await change(credentials, `tst_${payment.id}`, 'refund');
      if (charge.status !== 'REFUNDED') throw new ProviderError('test', 'refused', `a ${charge.status} TEST charge cannot be refunded`);
      return testSnapshot(charge);
    },

    async cancel(credentials, payment: PaymentAtProvider) {
      await change(credentials, `tst_${payment.id}`, 'cancel');
    },

    verifyNotification: verifyTestNotification,
  };
}
