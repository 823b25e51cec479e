import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newPayment, settle } from '#lib/domain/payment.ts';
import type { ChargeRequest, ProviderCredentials } from '#lib/payments/adapter.ts';
import {
  testAccountOf,
  testGatewayAction,
  testGatewayAdapter,
  testNotification,
  verifyTestNotification,
  type TestCharge,
  type TestGatewayLedger,
} from '#lib/payments/test-gateway.ts';

/**
 * The TEST gateway's adapter, its buttons and its signed notifications. Its ledger here is a Map
 * standing in for the table item lib/db will keep (the port's contract: put if absent, get by
 * account, replace if unchanged), so these tests are about the adapter, not about storage.
 */
class MapLedger implements TestGatewayLedger {
  readonly charges = new Map<string, TestCharge>();
  async putIfAbsent(charge: TestCharge) {
    if (!this.charges.has(charge.ref)) this.charges.set(charge.ref, charge);
    return this.charges.get(charge.ref)!;
  }
  async get(account: string, ref: string) {
    const charge = this.charges.get(ref);
    return charge?.account === account ? charge : undefined;
  }
  async replace(charge: TestCharge, previous: TestCharge) {
    if (this.charges.get(charge.ref)?.updated_at !== previous.updated_at) return false;
    this.charges.set(charge.ref, charge);
    return true;
  }
}

const NOW = Date.parse('2026-11-26T10:00:00.000Z');
let clock = NOW;
const SECRET = 'tgs_store-one-signing-secret-0123456789';
const credentials: ProviderCredentials = { secrets: { signing_secret: SECRET }, accountId: testAccountOf(SECRET) };
const request = (id: string): ChargeRequest => ({
  payment: { id, gateway: 'TEST', amount: 19.98, currency: 'BRL', expires_at: null },
  order: { id: 5, internal_id: 'int-5', description: 'Order #5', payer: { email: 'a@example.com', name: 'Alex' } },
  notificationUrl: 'http://127.0.0.1:3000/v1/payment/notify/test/key',
  returnUrl: null,
});

const setup = () => {
  const ledger = new MapLedger();
  clock = NOW;
  return { ledger, adapter: testGatewayAdapter({ ledger, pageUrl: (ref) => `http://127.0.0.1:3000/v1/payment/test/${ref}`, now: () => clock }) };
};

describe('the TEST adapter', () => {
  it('its credential check names an account derived from the signing secret, different per store', async () => {
    const { adapter } = setup();
    await expect(adapter.checkCredentials({ signing_secret: SECRET })).resolves.toEqual({ accountId: testAccountOf(SECRET) });
    expect(testAccountOf(SECRET)).toMatch(/^test_[0-9a-f]{16}$/);
    expect(testAccountOf('another-store-secret-000000000000')).not.toBe(testAccountOf(SECRET));
    await expect(adapter.checkCredentials({})).rejects.toMatchObject({ failure: 'credentials' });
  });

  it('creates one pending charge per payment, whose checkout_url is the page of the API host', async () => {
    const { adapter, ledger } = setup();
    const created = await adapter.createCharge(credentials, request('pay_1'));
    expect(created).toMatchObject({ provider_ref: 'tst_pay_1', checkout_url: 'http://127.0.0.1:3000/v1/payment/test/tst_pay_1', pix_code: null });
    expect(created.snapshot).toMatchObject({ status: 'PENDING', amount_cents: 1998, reference: 'pay_1', account: testAccountOf(SECRET) });
    await adapter.createCharge(credentials, request('pay_1'));
    expect(ledger.charges.size).toBe(1);
  });

  it("another store's credentials find nothing of it", async () => {
    const { adapter } = setup();
    await adapter.createCharge(credentials, request('pay_2'));
    const other = { secrets: { signing_secret: 'another-store-secret-000000000000' }, accountId: null };
    await expect(adapter.fetch(other, 'tst_pay_2')).rejects.toMatchObject({ failure: 'not_found' });
    await expect(adapter.findByReference(other, 'pay_2')).resolves.toEqual([]);
  });

  it('refunds a paid charge (and a second refund answers the same), cancels a pending one, refuses to refund an unpaid one', async () => {
    const { adapter, ledger } = setup();
    await adapter.createCharge(credentials, request('pay_3'));
    const payment = { id: 'pay_3', gateway: 'TEST' as const, amount: 19.98, provider_ref: 'tst_pay_3', charge_ref: 'tst_pay_3' };
    await expect(adapter.refund(credentials, payment)).rejects.toMatchObject({ failure: 'refused' });
    ledger.charges.set('tst_pay_3', testGatewayAction(ledger.charges.get('tst_pay_3')!, 'pay', NOW)!);
    await expect(adapter.refund(credentials, payment)).resolves.toMatchObject({ status: 'REFUNDED', refunded_cents: 1998 });
    await expect(adapter.refund(credentials, payment)).resolves.toMatchObject({ status: 'REFUNDED' });
    await adapter.createCharge(credentials, request('pay_4'));
    await adapter.cancel(credentials, { ...payment, id: 'pay_4' });
    await expect(adapter.fetch(credentials, 'tst_pay_4')).resolves.toMatchObject({ status: 'CANCELED' });
  });
});

describe('the buttons of the TEST page', () => {
  const charge = { status: 'PENDING', dispute: null, amount_cents: 100, refunded_cents: 0, paid_at: null, updated_at: '' } as unknown as TestCharge;
  it.each([
    ['pay', 'PENDING', null, { status: 'PAID', paid_at: '2026-11-26T10:00:00.000Z' }],
    ['fail', 'PENDING', null, { status: 'FAILED' }],
    ['refund', 'PAID', null, { status: 'REFUNDED', refunded_cents: 100 }],
    ['dispute', 'PAID', null, { status: 'PAID', dispute: 'OPEN' }],
    ['win', 'PAID', 'OPEN', { status: 'PAID', dispute: 'WON' }],
    ['lose', 'PAID', 'OPEN', { status: 'CHARGEBACK', dispute: 'LOST' }],
  ] as const)('%s of a %s charge (dispute %s)', (action, status, dispute, expected) => {
    expect(testGatewayAction({ ...charge, status, dispute }, action, NOW)).toMatchObject(expected);
  });

  it.each([
    ['pay', 'PAID', null],
    ['refund', 'PENDING', null],
    ['refund', 'PAID', 'OPEN'],
    ['dispute', 'REFUNDED', null],
    ['win', 'PAID', null],
  ] as const)('offers no %s of a %s charge (dispute %s)', (action, status, dispute) => {
    expect(testGatewayAction({ ...charge, status, dispute }, action, NOW)).toBeNull();
  });
});

describe('the TEST signature', () => {
  const check = (body: string, headers: Record<string, string>, secret: string | null = SECRET, now = NOW) =>
    verifyTestNotification({ rawBody: body, headers, query: {}, secret, now });

  it('accepts what a button signs, within 5 minutes either way', () => {
    const { body, headers } = testNotification({ ref: 'tst_pay_1' }, SECRET, NOW);
    expect(check(body, headers)).toEqual({ outcome: 'verified', refs: ['tst_pay_1'] });
    expect(check(body, headers, SECRET, NOW + 300_000)).toMatchObject({ outcome: 'verified' });
    expect(check(body, headers, SECRET, NOW - 300_000)).toMatchObject({ outcome: 'verified' });
  });

  it("refuses a changed body, another store's secret, an old or future one, a missing or malformed header, and a store with no secret", () => {
    const { body, headers } = testNotification({ ref: 'tst_pay_1' }, SECRET, NOW);
    expect(check(body.replace('pay_1', 'pay_2'), headers)).toMatchObject({ outcome: 'refused', reason: 'signature does not match' });
    expect(check(body, headers, 'another-store-secret-000000000000')).toMatchObject({ outcome: 'refused' });
    expect(check(body, headers, SECRET, NOW + 301_000)).toMatchObject({ outcome: 'refused', reason: 'signed too long ago, or in the future' });
    expect(check(body, headers, SECRET, NOW - 301_000)).toMatchObject({ outcome: 'refused' });
    expect(check(body, {})).toMatchObject({ outcome: 'refused' });
    expect(check(body, { 'x-test-signature': 't=abc,v1=zz' })).toMatchObject({ outcome: 'refused', reason: 'malformed x-test-signature header' });
    expect(check(body, headers, null)).toMatchObject({ outcome: 'refused' });
  });

  it('ignores a signed body about nothing it knows', () => {
    const t = String(Math.floor(NOW / 1000));
    const signed = (body: string) => {
      const { headers } = testNotification({ ref: 'x' }, SECRET, NOW);
      // Re-sign the other body the way a button would.
      return { ...headers, 'x-test-signature': `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}` };
    };
    const other = JSON.stringify({ type: 'dispute', data: { id: 'tst_pay_1' } });
    expect(check(other, signed(other))).toEqual({ outcome: 'ignored' });
  });
});

describe('a TEST purchase through the rules', () => {
  it('the pay button, its notification, the fetch and settle approve the order once', async () => {
    const { adapter, ledger } = setup();
    const { payment } = newPayment({ id: 'pay_9', store_id: 1, order_id: 9, gateway: 'TEST', amount: 19.98, currency: 'BRL', expires_at: null }, NOW);
    const created = await adapter.createCharge(credentials, request('pay_9'));
    let state = settle({
      payment,
      order: { status: 'PENDING', payment_id: null },
      accountId: credentials.accountId,
      chargebackOn: 'DISPUTE_OPENED',
      report: { kind: 'provider', snapshot: created.snapshot! },
      source: 'CHECKOUT',
      now: NOW,
    }).payment;
    expect(state.status).toBe('PENDING');

    clock = NOW + 60_000;
    const charge = ledger.charges.get('tst_pay_9')!;
    await ledger.replace(testGatewayAction(charge, 'pay', clock)!, charge);
    const { body, headers } = testNotification(charge, SECRET, clock);
    const check = await adapter.verifyNotification({ rawBody: body, headers, query: {}, secret: SECRET, now: clock + 1000 });
    expect(check).toEqual({ outcome: 'verified', refs: ['tst_pay_9'] });
    const snapshot = await adapter.fetch(credentials, 'tst_pay_9');
    const decision = settle({
      payment: state,
      order: { status: 'PENDING', payment_id: null },
      accountId: credentials.accountId,
      chargebackOn: 'DISPUTE_OPENED',
      report: { kind: 'provider', snapshot },
      source: 'NOTIFICATION',
      now: clock + 1000,
    });
    expect(decision.order).toEqual([{ kind: 'APPROVE', payment_id: 'pay_9', gateway: 'TEST', paid_at: new Date(clock).toISOString() }]);
    state = decision.payment;
    expect(state).toMatchObject({ status: 'PAID', charge_ref: 'tst_pay_9' });
  });
});
