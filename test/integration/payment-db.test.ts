import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { createPayment, getPayment, newPaymentId, orderPayments, paymentByRef, paymentKey, paymentRefWrite, settledPaymentWrite } from '#lib/db/payment.ts';
import {
  getProviderAccount,
  listProviderAccounts,
  notifyKeyTarget,
  readProviderAccount,
  removeProviderAccount,
  saveProviderAccount,
  type ProviderAccount,
} from '#lib/db/payment-provider.ts';
import { testChargeLedger } from '#lib/db/test-charge.ts';
import { StaleRead, writeGuarded } from '#lib/db/transact.ts';
import type { PaymentRecord, TestCharge } from '#lib/schemas/payment.ts';

/**
 * The payment entities of lib/db against DynamoDB Local: the provider account and its notify key,
 * the payment and its provider ref, the TEST ledger. The routes over them have their own tests.
 */
let nextStore = 900_000_000 + Math.floor(Math.random() * 1_000_000);
const storeId = () => nextStore++;
const at = '2026-11-26T10:00:00.000Z';

function account(store: number, overrides: Partial<ProviderAccount> = {}): ProviderAccount {
  return {
    store_id: store,
    provider: 'mercadopago',
    enabled: true,
    gateways: ['PIX'],
    account_id: '1234',
    secrets_ct: 'local:sealed',
    secrets_hint: { access_token: '...abcd' },
    settings: { pix_expiration_minutes: 30 },
    notify_nonce: randomBytes(8).toString('hex'),
    notify_key_hash: randomBytes(32).toString('hex'),
    notify_key_sealed: null,
    removed: false,
    revision: 1,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

function payment(store: number, orderId: number, overrides: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    id: newPaymentId(),
    store_id: store,
    order_id: orderId,
    gateway: 'PIX',
    provider: 'mercadopago',
    status: 'PENDING',
    amount: 10,
    currency: 'BRL',
    provider_ref: null,
    charge_ref: null,
    pix_code: null,
    qr_code: null,
    checkout_url: null,
    expires_at: null,
    paid_at: null,
    refunded_amount: 0,
    attention: null,
    mismatch: null,
    dispute: null,
    order_role: null,
    history: [{ at, from: 'CREATED', to: 'PENDING', source: 'CHECKOUT' }],
    revision: 1,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

describe('provider accounts (lib/db/payment-provider.ts)', () => {
  it('stores the account with its notify key look-up, finds the store by the key hash, and never stores a secret field in clear', async () => {
    const store = storeId();
    const stored = account(store);
    await saveProviderAccount(stored, undefined);
    expect(await getProviderAccount(store, 'mercadopago')).toEqual(stored);
    expect(await notifyKeyTarget(stored.notify_key_hash)).toEqual({ store_id: store, provider: 'mercadopago' });
    expect(await notifyKeyTarget(randomBytes(32).toString('hex'))).toBeUndefined();
    const item = (await db.send(new GetCommand({ TableName: TABLE, Key: { pk: `STORE#${store}`, sk: 'PAYMENT_PROVIDER#mercadopago' } }))).Item!;
    expect(Object.keys(item).sort()).not.toContain('access_token');
    expect(Object.keys(item).sort()).not.toContain('webhook_secret');
  });

  it('writes over the revision read, and refuses a write from a stale read (a concurrent PUT) as StaleRead', async () => {
    const store = storeId();
    const first = account(store);
    await saveProviderAccount(first, undefined);
    await expect(saveProviderAccount(account(store), undefined)).rejects.toBeInstanceOf(StaleRead);
    const second = { ...first, gateways: ['PIX', 'MERCADOPAGO'] as const, revision: 2 };
    await saveProviderAccount({ ...second, gateways: [...second.gateways] }, first);
    await expect(saveProviderAccount({ ...first, revision: 2, enabled: false }, first)).rejects.toBeInstanceOf(StaleRead);
    expect((await getProviderAccount(store, 'mercadopago')).gateways).toEqual(['PIX', 'MERCADOPAGO']);
  });

  it('a removed account is 404 to the operator and left out of the list, and still found by its notify key with its secrets', async () => {
    const store = storeId();
    const stored = account(store);
    await saveProviderAccount(stored, undefined);
    await saveProviderAccount(account(store, { provider: 'test', gateways: ['TEST'] }), undefined);
    await removeProviderAccount(store, 'mercadopago', at);
    await expect(getProviderAccount(store, 'mercadopago')).rejects.toMatchObject({ status: 404 });
    await expect(removeProviderAccount(store, 'mercadopago', at)).rejects.toMatchObject({ status: 404 });
    expect((await listProviderAccounts(store)).map((entry) => entry.provider)).toEqual(['test']);
    expect(await notifyKeyTarget(stored.notify_key_hash)).toEqual({ store_id: store, provider: 'mercadopago' });
    expect(await readProviderAccount(store, 'mercadopago')).toMatchObject({ removed: true, enabled: false, secrets_ct: 'local:sealed', revision: 2 });
  });

  it("another store's account is as absent as none", async () => {
    const store = storeId();
    await saveProviderAccount(account(store), undefined);
    await expect(getProviderAccount(store + 1, 'mercadopago')).rejects.toMatchObject({ status: 404 });
    expect(await listProviderAccounts(store + 1)).toEqual([]);
  });
});

describe('payments (lib/db/payment.ts)', () => {
  it('creates a payment with its provider ref, found by store + order + id and by the ref; other orders and stores see nothing', async () => {
    const store = storeId();
    const made = payment(store, 7, { provider_ref: 'mp-1' });
    await createPayment(made);
    expect(await getPayment(store, 7, made.id)).toEqual(made);
    expect(await paymentByRef(store, 'mercadopago', 'mp-1')).toEqual(made);
    expect(await paymentByRef(store, 'test', 'mp-1')).toBeUndefined();
    expect(await paymentByRef(store + 1, 'mercadopago', 'mp-1')).toBeUndefined();
    await expect(getPayment(store, 8, made.id)).rejects.toMatchObject({ status: 404 });
    await expect(getPayment(store + 1, 7, made.id)).rejects.toMatchObject({ status: 404 });
  });

  it("lists an order's payments newest first, and none of another order (ids 7 and 70 do not share a prefix)", async () => {
    const store = storeId();
    const older = payment(store, 7, { created_at: '2026-11-26T10:00:00.000Z' });
    const newer = payment(store, 7, { created_at: '2026-11-26T10:05:00.000Z' });
    await createPayment(older);
    await createPayment(newer);
    await createPayment(payment(store, 70));
    expect((await orderPayments(store, 7)).map((entry) => entry.id)).toEqual([newer.id, older.id]);
    expect(await orderPayments(store, 8)).toEqual([]);
  });

  it('a provider ref names one payment: writing it again for the same payment is a no-op, for another a refusal', async () => {
    const store = storeId();
    const first = payment(store, 1, { provider_ref: 'mp-9' });
    await createPayment(first);
    await writeGuarded([paymentRefWrite(first, 'mp-9')]);
    const other = payment(store, 1);
    await expect(writeGuarded([paymentRefWrite(other, 'mp-9')])).rejects.toThrow(/already names another payment/);
    await expect(createPayment({ ...other, provider_ref: 'mp-9' })).rejects.toThrow(/already names another payment/);
    // The refused transaction left the other payment unwritten.
    await expect(getPayment(store, 1, other.id)).rejects.toMatchObject({ status: 404 });
    expect((await paymentByRef(store, 'mercadopago', 'mp-9'))?.id).toBe(first.id);
  });

  it('of 20 decisions settled from the same revision at once, exactly one is stored; the others are StaleRead', async () => {
    const store = storeId();
    const made = payment(store, 3);
    await createPayment(made);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) =>
        writeGuarded([settledPaymentWrite({ ...made, status: 'PAID', paid_at: `2026-11-26T10:00:${String(index).padStart(2, '0')}.000Z`, revision: 2 }, 1)]),
      ),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected' && result.reason instanceof StaleRead)).toHaveLength(19);
    expect(await getPayment(store, 3, made.id)).toMatchObject({ status: 'PAID', revision: 2 });
  });

  it('keeps the payment under its order prefix, away from the order items', () => {
    expect(paymentKey(5, 42, 'pay_x')).toEqual({ pk: 'STORE#5', sk: 'PAYMENT#000000000042#pay_x' });
  });
});

describe('the TEST ledger (lib/db/test-charge.ts)', () => {
  const charge = (account: string, ref: string): TestCharge => ({
    ref,
    reference: ref.slice(4),
    account,
    amount_cents: 1000,
    currency: 'BRL',
    status: 'PENDING',
    refunded_cents: 0,
    dispute: null,
    paid_at: null,
    expires_at: null,
    notification_url: 'http://127.0.0.1/v1/payment/notify/test/k',
    return_url: null,
    created_at: at,
    updated_at: at,
  });

  it('creates once (a repeated create answers the first), keeps each account to itself, and changes only what was read', async () => {
    const account = `test_${randomBytes(8).toString('hex')}`;
    const first = charge(account, 'tst_pay_a');
    expect(await testChargeLedger.putIfAbsent(first)).toEqual(first);
    expect(await testChargeLedger.putIfAbsent({ ...first, amount_cents: 5 })).toEqual(first);
    expect(await testChargeLedger.get(account, 'tst_pay_a')).toEqual(first);
    expect(await testChargeLedger.get(`test_${randomBytes(8).toString('hex')}`, 'tst_pay_a')).toBeUndefined();
    const paid = { ...first, status: 'PAID' as const, paid_at: '2026-11-26T10:01:00.000Z', updated_at: '2026-11-26T10:01:00.000Z' };
    expect(await testChargeLedger.replace(paid, first)).toBe(true);
    expect(await testChargeLedger.replace({ ...first, status: 'FAILED', updated_at: '2026-11-26T10:02:00.000Z' }, first)).toBe(false);
    expect(await testChargeLedger.get(account, 'tst_pay_a')).toEqual(paid);
  });
});
