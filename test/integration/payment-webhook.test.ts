import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { atTime } from '#lib/clock.ts';
import { reconcilePayments } from '#lib/flows/payment-reconcile.ts';
import { verifySignature } from '../../examples/webhook-receiver/receiver.ts';
import { testChargeLedger, testChargeOwner } from '#lib/db/test-charge.ts';
import { createPackage, type Store } from '../support/builders.ts';
import { call, newStore } from '../support/client.ts';

/**
 * The payment events (extensions sections 12 and 13) end to end on the local stack: a TEST
 * purchase, the TEST page's buttons (each a signed notification through the notify route), the
 * table stream, the router and the sender, to a real HTTP receiver on 127.0.0.1.
 */
interface Received {
  path: string;
  signature: string;
  raw: string;
  body: { id: string; type: string; created_at: string; store_id: number; data: any };
}
const received: Received[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({ path: request.url ?? '/', signature: String(request.headers['x-store-signature']), raw, body: JSON.parse(raw) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

let pathCounter = 0;
const at = (path: string) => received.filter((r) => r.path === path);
const typesAt = (path: string) => at(path).map((r) => r.body.type);

async function until<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

const PAYMENT_EVENTS = ['payment.created', 'payment.failed', 'payment.expired', 'payment.attention'];
const BUYER = { client_name: 'Steve Smith', client_identifier: 'Steve', client_email: 'steve@example.com' };
const pathOf = (url: string) => new URL(url).pathname;

/** A store with TEST enabled, a webhook on a receiver path of its own, and a PENDING TEST checkout of 10.00. */
async function subscribedCheckout(events: string[]) {
  const store: Store = await newStore();
  const path = `/payment-hook-${++pathCounter}`;
  const hook = await store.post('/v1/app/webhook', { url: `${base}${path}`, events });
  expect(hook.status, hook.text).toBe(200);
  expect(hook.body.events).toEqual(events);
  expect((await store.put('/v1/app/payment/provider/test', {})).status).toBe(200);
  const pkg = await createPackage(store, { name: 'VIP', price: 10 });
  const res = await call('POST', '/v1/webstore/checkout', {
    json: { cart: [{ package_id: pkg.id, quantity: 1 }], ...BUYER, gateway: 'TEST' },
    headers: { 'x-store-domain': store.domain },
  });
  expect(res.status, res.text).toBe(200);
  return { store, path, secret: hook.body.secret as string, order: res.body, page: pathOf(res.body.checkout_url) };
}

describe('payment events', () => {
  it('a TEST purchase paid through the page: payment.created (the Payment as the buyer got it: what to pay with; signed, no secret), then order.approved carrying the payment', async () => {
    const { store, path, secret, order, page } = await subscribedCheckout(['payment.created', 'order.approved', ...PAYMENT_EVENTS.slice(1)]);
    const created = await until('payment.created', () => at(path).find((r) => r.body.type === 'payment.created'));
    expect(verifySignature(secret, created.raw, created.signature)).toBe(true);
    expect(created.body.store_id).toBe(store.storeId);
    expect(created.body.id).toMatch(/^evt_[0-9a-f]{32}$/);
    // The Payment of section 13 once the provider made the charge: the checkout answer's own payment, nothing more.
    expect(Object.keys(created.body.data).sort()).toEqual(Object.keys(order.payment).sort());
    expect(created.body.data).toEqual(order.payment);
    expect(created.body.data).toMatchObject({ id: order.payment.id, order_id: order.id, gateway: 'TEST', provider: 'test', status: 'PENDING', amount: 10, attention: null });
    expect(created.body.data.checkout_url).toBe(order.checkout_url);
    expect(created.body.data.provider_ref).toEqual(expect.any(String));
    expect(created.raw).not.toMatch(/secret|revision|history|charge_ref|signing/);

    expect((await call('POST', `${page}/pay`)).headers.location).toMatch(/\?notified=200$/);
    const approved = await until('order.approved', () => at(path).find((r) => r.body.type === 'order.approved'));
    // Section 13 rule 3: the approved order carries its payment.
    expect(approved.body.data).toMatchObject({ id: order.id, status: 'APPROVED', payment_id: order.payment.id, gateway: 'TEST', paid_at: expect.any(String) });
    expect((await store.get(`/v1/app/order/${order.id}`)).body).toMatchObject({ payment_id: order.payment.id, gateway: 'TEST', paid_at: approved.body.data.paid_at });
    // Paid is no payment event; nothing else came (a late duplicate would show here).
    await new Promise((done) => setTimeout(done, 500));
    expect(typesAt(path)).toEqual(['payment.created', 'order.approved']);
  });

  it('a failed payment: payment.failed once, with the payment FAILED; the order is not approved', async () => {
    const { store, path, order, page } = await subscribedCheckout(PAYMENT_EVENTS);
    await until('payment.created', () => typesAt(path).includes('payment.created'));
    expect((await call('POST', `${page}/fail`)).headers.location).toMatch(/\?notified=200$/);
    const failed = await until('payment.failed', () => at(path).find((r) => r.body.type === 'payment.failed'));
    expect(failed.body.data).toMatchObject({ id: order.payment.id, status: 'FAILED', attention: null });
    expect((await store.get(`/v1/app/order/${order.id}`)).body.status).not.toBe('APPROVED');
    // The same state reported again (the reconciler, a poll, a repeated notification) is no second event.
    expect((await call('POST', `${page}/fail`)).status).toBe(409);
    await new Promise((done) => setTimeout(done, 500));
    expect(typesAt(path)).toEqual(['payment.created', 'payment.failed']);
  });

  it('an unpaid payment past its expires_at: the reconciler expires it and payment.expired is sent once, however many runs', async () => {
    const { store, path, order } = await subscribedCheckout(PAYMENT_EVENTS);
    await until('payment.created', () => typesAt(path).includes('payment.created'));
    const apiBase = inject('apiUrl').replace(/\/v1\/?$/, '');
    const later = Date.parse(order.payment.expires_at) + 1000;
    for (const run of [0, 1]) await atTime(later + run * 1000, () => reconcilePayments(apiBase, store.storeId));
    const expired = await until('payment.expired', () => at(path).find((r) => r.body.type === 'payment.expired'));
    expect(expired.body.data).toMatchObject({ id: order.payment.id, status: 'EXPIRED' });
    await new Promise((done) => setTimeout(done, 500));
    expect(typesAt(path)).toEqual(['payment.created', 'payment.expired']);
  });

  it('a paid charge that is not this payment (its amount differs): payment.attention with MISMATCH, the order untouched', async () => {
    const { store, path, order, page } = await subscribedCheckout(['payment.attention', 'order.approved']);
    const ref = order.payment.provider_ref as string;
    const owner = (await testChargeOwner(ref))!;
    const charge = (await testChargeLedger.get(owner.account, ref))!;
    // The pretend provider now reports another amount: rule 2 flags the payment and acts on nothing.
    expect(await testChargeLedger.replace({ ...charge, amount_cents: charge.amount_cents + 100, updated_at: new Date().toISOString() }, charge)).toBe(true);
    expect((await call('POST', `${page}/pay`)).headers.location).toMatch(/\?notified=200$/);
    const attention = await until('payment.attention', () => at(path).find((r) => r.body.type === 'payment.attention'));
    expect(attention.body.data).toMatchObject({ id: order.payment.id, attention: 'MISMATCH', paid_at: null });
    expect((await store.get(`/v1/app/order/${order.id}`)).body.status).toBe('PENDING');
    // A second report of the same mismatch leaves the flag as it was: no second event.
    expect((await call('POST', `${page}/refund`)).status).toBe(303);
    await new Promise((done) => setTimeout(done, 500));
    expect(typesAt(path)).toEqual(['payment.attention']);
  });
});
