import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { verifyDelivery, verifySignature } from '../../examples/webhook-receiver/receiver.ts';
import { creditOrderCommission } from '#lib/flows/affiliate-commission.ts';
import { storePk } from '#lib/db/keys.ts';
import { queryAll } from '#lib/db/query.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { createOrder, createPackage, orderBody, placeOrder } from '../support/builders.ts';
import { buyerLogin } from '../support/buyer.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/**
 * Webhooks end to end on the local stack: the stream poller, the router, the in-process queue and
 * the sender, against a real HTTP receiver on 127.0.0.1. The global setup shrinks the retry
 * schedule (WEBHOOK_RETRY_SCALE) and the receiver timeout (WEBHOOK_TIMEOUT_MS, 500 ms).
 */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; created_at: string; store_id: number; data: any };
}

type Answer = { status: number; headers?: Record<string, string> };
type Behaviour = (count: number) => Answer | 'hang';
const behaviours = new Map<string, Behaviour>();
const received: Received[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = request.url ?? '/';
      received.push({ path, headers: request.headers, raw, body: JSON.parse(raw || 'null') });
      const answer = (behaviours.get(path) ?? ((): Answer => ({ status: 204 })))(received.filter((r) => r.path === path).length);
      if (answer === 'hang') return;
      response.writeHead(answer.status, answer.headers).end();
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
/** A receiver path of its own for one test. */
const endpoint = (behaviour?: Behaviour) => {
  const path = `/hook-${++pathCounter}`;
  if (behaviour) behaviours.set(path, behaviour);
  return path;
};
const at = (path: string) => received.filter((r) => r.path === path);

type Found<T> = Exclude<T, false | undefined | null | 0 | ''>;
async function until<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 20_000): Promise<Found<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Found<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

type Store = Awaited<ReturnType<typeof newStore>>;
async function subscribe(store: Store, path: string, events: string[] = ['order.created', 'order.approved']) {
  const res = await store.post('/v1/app/webhook', { url: `${base}${path}`, events });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: number; secret: string; url: string; events: string[]; enabled: boolean };
}

describe('webhook endpoints', () => {
  it('creates a webhook whose secret is shown only in the creation answer', async () => {
    const store = await newStore();
    const res = await store.post('/v1/app/webhook', { url: 'https://example.com/hooks', events: ['order.approved', 'order.approved'], description: 'Fulfilment' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id', 'url', 'events', 'enabled', 'description', 'created_at', 'updated_at', 'secret']);
    expect(res.body).toMatchObject({ url: 'https://example.com/hooks', events: ['order.approved'], enabled: true, description: 'Fulfilment' });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await store.get(`/v1/app/webhook/${res.body.id}`);
    expect(got.body.secret).toBeUndefined();
    const list = await store.get('/v1/app/webhook');
    expect(list.body.meta.total).toBe(1);
    expect(list.body.data[0].secret).toBeUndefined();
  });

  it('updates and deletes (204), then answers 404', async () => {
    const store = await newStore();
    const hook = await subscribe(store, endpoint());
    const patched = await store.patch(`/v1/app/webhook/${hook.id}`, { enabled: false, events: ['chat.message_created'] });
    expect(patched.body).toMatchObject({ enabled: false, events: ['chat.message_created'] });
    expect((await store.delete(`/v1/app/webhook/${hook.id}`)).status).toBe(204);
    expect((await store.get(`/v1/app/webhook/${hook.id}`)).status).toBe(404);
  });

  it.each([
    [{ url: 'http://example.com/hook', events: ['order.created'] }, 'url'],
    [{ url: 'ftp://example.com/hook', events: ['order.created'] }, 'url'],
    [{ url: 'not a url', events: ['order.created'] }, 'url'],
    [{ url: 'https://user:pw@example.com/hook', events: ['order.created'] }, 'url'],
    [{ url: 'https://example.com/hook', events: [] }, 'events'],
    [{ url: 'https://example.com/hook', events: ['order.shipped'] }, 'events.0'],
    [{ url: 'https://example.com/hook' }, 'events'],
    [{ url: 'https://example.com/hook', events: ['order.created'], secret: 'mine' }, 'secret'],
    [{ url: 'https://example.com/hook', events: ['order.created'], enabled: 'yes' }, 'enabled'],
  ])('refuses %j with 422 on %s and creates nothing', async (body, field) => {
    const store = await newStore();
    const res = await store.post('/v1/app/webhook', body);
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe(field);
    expect((await store.get('/v1/app/webhook')).body.meta.total).toBe(0);
  });

  it('refuses an empty PATCH and a bad URL in a PATCH, changing nothing', async () => {
    const store = await newStore();
    const hook = await subscribe(store, endpoint());
    expect((await store.patch(`/v1/app/webhook/${hook.id}`, {})).status).toBe(422);
    const res = await store.patch(`/v1/app/webhook/${hook.id}`, { url: 'http://example.com' });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('url');
    expect((await store.get(`/v1/app/webhook/${hook.id}`)).body.url).toBe(hook.url);
  });

  it("answers 404 for another store's webhook, its deliveries and its redelivery", async () => {
    const [owner, other] = [await newStore(), await newStore()];
    const path = endpoint();
    const hook = await subscribe(owner, path);
    await createOrder(owner);
    const delivery = await until('a delivery', async () => (await owner.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data[0]);
    for (const res of [
      await other.get(`/v1/app/webhook/${hook.id}`),
      await other.patch(`/v1/app/webhook/${hook.id}`, { enabled: false }),
      await other.delete(`/v1/app/webhook/${hook.id}`),
      await other.get(`/v1/app/webhook/${hook.id}/delivery`),
      await other.post(`/v1/app/webhook/${hook.id}/delivery/${delivery.id}/redeliver`),
    ]) {
      expect(res.status).toBe(404);
      firstError(res);
    }
    expect((await owner.get(`/v1/app/webhook/${hook.id}`)).body.enabled).toBe(true);
  });

  it('pins the DynamoDB calls of each route (credential lookup included)', async () => {
    const store = await newStore();
    const created = await store.post('/v1/app/webhook', { url: `${base}${endpoint()}`, events: ['order.created'] });
    expect(dynamoDbCalls(created)).toBe(3);
    // the list's counter and its page, in parallel
    expect(dynamoDbCalls(await store.get('/v1/app/webhook'))).toBe(3);
    expect(dynamoDbCalls(await store.get(`/v1/app/webhook/${created.body.id}`))).toBe(2);
    expect(dynamoDbCalls(await store.patch(`/v1/app/webhook/${created.body.id}`, { description: 'x' }))).toBe(2);
    await createOrder(store);
    const list = await until('a delivery', async () => {
      const res = await store.get(`/v1/app/webhook/${created.body.id}/delivery`);
      return res.body.data.length > 0 && res;
    });
    expect(dynamoDbCalls(list)).toBe(3);
    const redeliver = await store.post(`/v1/app/webhook/${created.body.id}/delivery/${list.body.data[0].id}/redeliver`);
    expect(redeliver.status).toBe(202);
    expect(dynamoDbCalls(redeliver)).toBe(3);
    const keyed = await store.post('/v1/app/webhook', { url: `${base}${endpoint()}`, events: ['order.created'] }, { headers: { 'idempotency-key': `calls-${Date.now()}` } });
    expect(dynamoDbCalls(keyed)).toBe(5);
    expect(dynamoDbCalls(await store.delete(`/v1/app/webhook/${created.body.id}`))).toBe(2);
  });
});

describe('webhook delivery on the local stack', () => {
  it('delivers order.created and order.approved, signed, with the order as the API answers it', async () => {
    const store = await newStore();
    const path = endpoint();
    const hook = await subscribe(store, path);
    const order = await createOrder(store);
    const approved = await store.post(`/v1/app/order/${order.id}/approve`);
    const [created, approval] = await until('two events', () => {
      const got = at(path);
      return got.length >= 2 && [got.find((r) => r.body.type === 'order.created')!, got.find((r) => r.body.type === 'order.approved')!];
    });
    for (const event of [created, approval]) {
      expect(verifySignature(hook.secret, event.raw, event.headers['x-store-signature'] as string)).toBe(true);
      expect(verifySignature('whsec_wrong', event.raw, event.headers['x-store-signature'] as string)).toBe(false);
      // The Standard Webhooks headers, checked by the standardwebhooks library itself (and through the example receiver).
      expect(new Webhook(hook.secret).verify(event.raw, event.headers as Record<string, string>)).toEqual(event.body);
      expect(event.headers['webhook-id']).toBe(event.body.id);
      expect(event.headers['x-store-signature']).toContain(`t=${event.headers['webhook-timestamp']},`);
      expect(verifyDelivery(hook.secret, event.raw, event.headers)?.id).toBe(event.body.id);
      expect(verifyDelivery(hook.secret, event.raw.replace(`"store_id":${store.storeId}`, '"store_id":1'), event.headers)).toBeNull();
      expect(Object.keys(event.body)).toEqual(['id', 'type', 'created_at', 'store_id', 'data']);
      expect(event.body.id).toMatch(/^evt_[0-9a-f]{32}$/);
      expect(event.body.store_id).toBe(store.storeId);
    }
    expect(created.body.data).toEqual(order);
    expect(approval.body.data).toEqual(approved.body);
    expect(created.body.id).not.toBe(approval.body.id);
  });

  it('retries after a 500 with the same body and a fresh signature, and logs both attempts newest first', async () => {
    const store = await newStore();
    const path = endpoint((count) => ({ status: count === 1 ? 500 : 200 }));
    const hook = await subscribe(store, path, ['order.created']);
    await createOrder(store);
    const [first, second] = await until('the retry', () => at(path).length >= 2 && at(path));
    expect(second!.raw).toBe(first!.raw);
    expect(verifySignature(hook.secret, second!.raw, second!.headers['x-store-signature'] as string)).toBe(true);
    const log = await until('two attempts logged', async () => {
      const res = await store.get(`/v1/app/webhook/${hook.id}/delivery`);
      return res.body.data.length === 2 && res.body;
    });
    expect(log.data.map((d: { status_code: number }) => d.status_code)).toEqual([200, 500]);
    expect(log.data[0]).toMatchObject({ event_id: first!.body.id, type: 'order.created', error: null });
    expect(Object.keys(log.data[0])).toEqual(['id', 'event_id', 'type', 'status_code', 'duration_ms', 'error', 'created_at']);
    expect(log.data[0].id).toBeGreaterThan(log.data[1].id);
    await new Promise((done) => setTimeout(done, 300));
    expect(at(path)).toHaveLength(2);
  });

  it('redelivers an event on request: 202, then the same body again, freshly signed', async () => {
    const store = await newStore();
    const path = endpoint();
    const hook = await subscribe(store, path, ['order.created']);
    await createOrder(store);
    const [original] = await until('the event', () => at(path).length === 1 && at(path));
    const delivery = await until('its log', async () => (await store.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data[0]);
    const res = await store.post(`/v1/app/webhook/${hook.id}/delivery/${delivery.id}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ delivery_id: delivery.id, event_id: original!.body.id, queued: true });
    const again = await until('the redelivery', () => at(path).length === 2 && at(path)[1]);
    expect(again.raw).toBe(original!.raw);
    expect(verifySignature(hook.secret, again.raw, again.headers['x-store-signature'] as string)).toBe(true);
    expect((await store.post(`/v1/app/webhook/${hook.id}/delivery/999999/redeliver`)).status).toBe(404);
  });

  it('follows no redirect: a 302 is a failed attempt and the Location is never called', async () => {
    const store = await newStore();
    const target = endpoint();
    const path = endpoint(() => ({ status: 302, headers: { location: `${base}${target}` } }));
    const hook = await subscribe(store, path, ['order.created']);
    await createOrder(store);
    const log = await until('all attempts', async () => {
      const res = await store.get(`/v1/app/webhook/${hook.id}/delivery`);
      return res.body.data.length === 7 && res.body.data;
    });
    expect(log.every((d: { status_code: number }) => d.status_code === 302)).toBe(true);
    expect(at(target)).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer in time: the attempt is a timeout', async () => {
    const store = await newStore();
    const path = endpoint(() => 'hang');
    const hook = await subscribe(store, path, ['order.created']);
    await createOrder(store);
    const attempt = await until('a timed-out attempt', async () => (await store.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data[0]);
    expect(attempt).toMatchObject({ status_code: null, error: 'timeout' });
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(450);
  });

  it('logs a connection error when nothing listens', async () => {
    const store = await newStore();
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const res = await store.post('/v1/app/webhook', { url: `http://127.0.0.1:${port}/gone`, events: ['order.created'] });
    await createOrder(store);
    const attempt = await until('an attempt', async () => (await store.get(`/v1/app/webhook/${res.body.id}/delivery`)).body.data[0]);
    expect(attempt).toMatchObject({ status_code: null, error: 'ECONNREFUSED' });
  });

  it('disables a webhook whose last 20 events all failed', async () => {
    const store = await newStore();
    const path = endpoint(() => ({ status: 500 }));
    const hook = await subscribe(store, path, ['order.created']);
    const pkg = await createPackage(store, { price: 5 });
    for (let i = 0; i < 19; i++) await placeOrder(store, orderBody(pkg.id));
    await until('19 failed events', () => at(path).length >= 19 * 7, 40_000);
    await new Promise((done) => setTimeout(done, 300));
    expect((await store.get(`/v1/app/webhook/${hook.id}`)).body.enabled).toBe(true);
    await placeOrder(store, orderBody(pkg.id));
    await until('the webhook disabled', async () => (await store.get(`/v1/app/webhook/${hook.id}`)).body.enabled === false, 20_000);
    const before = at(path).length;
    await placeOrder(store, orderBody(pkg.id));
    await new Promise((done) => setTimeout(done, 500));
    expect(at(path)).toHaveLength(before);
  });

  it("never sends one store's events to another store's webhook, nor unsubscribed types", async () => {
    const [a, b] = [await newStore(), await newStore()];
    const pathA = endpoint();
    const pathB = endpoint();
    await subscribe(a, pathA, ['order.approved']);
    await subscribe(b, pathB, ['order.created']);
    const order = await createOrder(a);
    await a.post(`/v1/app/order/${order.id}/approve`);
    await until('store A event', () => at(pathA).length === 1);
    await new Promise((done) => setTimeout(done, 300));
    expect(at(pathA).map((r) => r.body.type)).toEqual(['order.approved']);
    expect(at(pathB)).toHaveLength(0);
  });

  it('sends affiliate.withdrawal_requested with the statement line as the buyer was answered, and its affiliate id', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['affiliate.withdrawal_requested']);
    const buyer = await buyerLogin(store.domain);
    const joined = await buyer.post('/v1/webstore/affiliate/join', { ref_code: `wd${process.pid}` });
    expect(joined.status, joined.text).toBe(200);
    const credited = await creditOrderCommission(store.storeId, { id: 1, ref_code: `wd${process.pid}`, total: 500, client_email: 'someone.else@example.com', packages: [] });
    expect(credited).toBeTruthy();
    const settings = { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' };
    expect((await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: settings })).status).toBe(200);
    const withdrawal = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 10 });
    expect(withdrawal.status, withdrawal.text).toBe(200);
    const event = await until('affiliate.withdrawal_requested', () => at(path).find((r) => r.body.type === 'affiliate.withdrawal_requested'));
    expect(event.body.data).toEqual({ ...withdrawal.body, affiliate_id: joined.body.id });
  });

  it('sends command.failed on a failure report and order.delivered once, when every command is DONE', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['command.failed', 'order.delivered', 'order.canceled']);
    const pkg = await createPackage(store, { price: 5, commands: [{ command: 'say one' }, { command: 'say two' }] });
    const order = await placeOrder(store, orderBody(pkg.id));
    await store.post(`/v1/app/order/${order.id}/approve`);
    const commands = (await store.get('/v1/app/queued_commands')).body as { id: number }[];
    expect(commands).toHaveLength(2);
    const failed = await store.patch(`/v1/app/command/${commands[0]!.id}`, { status: 'FAILED', response: 'offline' });
    const failure = await until('command.failed', () => at(path).find((r) => r.body.type === 'command.failed'));
    expect(failure.body.data).toEqual(failed.body);
    await Promise.all(commands.map((command) => store.patch(`/v1/app/command/${command.id}`, { status: 'DONE' })));
    const delivered = await until('order.delivered', () => at(path).find((r) => r.body.type === 'order.delivered'));
    expect(delivered.body.data).toEqual((await store.get(`/v1/app/order/${order.id}`)).body);
    await store.patch(`/v1/app/command/${commands[0]!.id}`, { status: 'DONE', response: 'again' });
    await new Promise((done) => setTimeout(done, 300));
    expect(at(path).filter((r) => r.body.type === 'order.delivered')).toHaveLength(1);
  });

  it('sends chat.message_created with the message and its order', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['chat.message_created', 'order.canceled']);
    const order = await createOrder(store);
    const sent = await store.post(`/v1/app/order/${order.internal_id}/chat/messages`, { message: 'Your VIP rank is active.' });
    const canceled = await store.post(`/v1/app/order/${order.id}/cancel`);
    const [message, cancel] = await until('two events', () => {
      const got = at(path);
      return got.length >= 2 && [got.find((r) => r.body.type === 'chat.message_created')!, got.find((r) => r.body.type === 'order.canceled')!];
    });
    expect(message.body.data).toEqual({ ...sent.body, order_id: order.id });
    expect(cancel.body.data).toEqual(canceled.body);
  });

  it('sends order.refunded and order.chargeback with the order as its route answers it', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['order.refunded', 'order.chargeback']);
    const [first, second] = [await createOrder(store), await createOrder(store)];
    for (const order of [first, second]) await store.post(`/v1/app/order/${order.id}/approve`);
    const refunded = await store.post(`/v1/app/order/${first.id}/refund`);
    const chargeback = await store.post(`/v1/app/order/${second.id}/chargeback`);
    expect([refunded.status, chargeback.status]).toEqual([200, 200]);
    const [refund, dispute] = await until('two events', () => {
      const got = at(path);
      return got.length >= 2 && [got.find((r) => r.body.type === 'order.refunded')!, got.find((r) => r.body.type === 'order.chargeback')!];
    });
    expect(refund.body.data).toEqual((await store.get(`/v1/app/order/${first.id}`)).body);
    expect(dispute.body.data).toEqual((await store.get(`/v1/app/order/${second.id}`)).body);
  });

  it('measures the delay from an approval to its webhook arriving (median of 20; printed, not asserted)', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['order.approved']);
    const pkg = await createPackage(store, { price: 5 });
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const order = await placeOrder(store, orderBody(pkg.id));
      const started = performance.now();
      await store.post(`/v1/app/order/${order.id}/approve`);
      await until('the approval event', () => at(path).some((r) => r.body.data.id === order.id));
      delays.push(performance.now() - started);
    }
    delays.sort((x, y) => x - y);
    console.log(
      `approval -> webhook on the local stack: median ${Math.round((delays[9]! + delays[10]!) / 2)} ms, min ${Math.round(delays[0]!)} ms, max ${Math.round(delays[19]!)} ms (n=20)`,
    );
  });
});

describe('payment events (extensions section 13)', () => {
  it('sends payment.created for a TEST checkout and payment.failed when the TEST page fails it, each carrying the payment as its routes answer it', async () => {
    const store = await newStore();
    const path = endpoint();
    await subscribe(store, path, ['payment.created', 'payment.failed', 'payment.expired', 'payment.attention']);
    expect((await store.put('/v1/app/payment/provider/test', { enabled: true })).status).toBe(200);
    const pkg = await createPackage(store, { name: 'VIP', price: 10 });
    const checkout = await call('POST', '/v1/webstore/checkout', {
      json: { cart: [{ package_id: pkg.id, quantity: 1 }], client_name: 'Steve', client_identifier: 'Steve', client_email: 'steve@example.com', gateway: 'TEST' },
      headers: { 'x-store-domain': store.domain },
    });
    expect(checkout.status, checkout.text).toBe(200);
    const payment = checkout.body.payment as { id: string; order_id: number; provider_ref: string; amount: number };
    const created = await until('payment.created', () => at(path).find((delivery) => delivery.body.type === 'payment.created'));
    expect(created.body).toMatchObject({ store_id: store.storeId, data: { id: payment.id, order_id: payment.order_id, gateway: 'TEST', amount: payment.amount } });

    expect((await call('POST', `/v1/payment/test/${payment.provider_ref}/fail`)).status).toBeLessThan(400);
    const failed = await until('payment.failed', () => at(path).find((delivery) => delivery.body.type === 'payment.failed'));
    expect(failed.body.data).toMatchObject({ id: payment.id, status: 'FAILED' });
    // Exactly these two: no expiry, no flag.
    expect(
      at(path)
        .map((delivery) => delivery.body.type)
        .sort(),
    ).toEqual(['payment.created', 'payment.failed']);
  });
});

describe('delivery log cursor', () => {
  it('pages newest first and refuses a tampered or foreign cursor with 400', async () => {
    const store = await newStore();
    const path = endpoint();
    const hook = await subscribe(store, path, ['order.created']);
    const other = await subscribe(store, endpoint(), ['order.created']);
    const pkg = await createPackage(store, { price: 5 });
    for (let i = 0; i < 3; i++) await placeOrder(store, orderBody(pkg.id));
    await until('3 attempts', async () => (await store.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data.length === 3);
    const all = (await store.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data.map((d: { id: number }) => d.id);
    const first = await store.get(`/v1/app/webhook/${hook.id}/delivery?page_size=2`);
    expect(first.body.data.map((d: { id: number }) => d.id)).toEqual(all.slice(0, 2));
    const second = await store.get(`/v1/app/webhook/${hook.id}/delivery?page_size=2&page_cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((d: { id: number }) => d.id)).toEqual(all.slice(2));
    expect(second.body.next_cursor).toBeNull();
    const tampered = await store.get(`/v1/app/webhook/${hook.id}/delivery?page_cursor=${first.body.next_cursor}x`);
    expect(tampered.status).toBe(400);
    expect(firstError(tampered).code).toBe('INVALID_CURSOR');
    expect((await store.get(`/v1/app/webhook/${other.id}/delivery?page_cursor=${first.body.next_cursor}`)).status).toBe(400);
    expect((await store.get(`/v1/app/webhook/${hook.id}/delivery?page_size=201`)).status).toBe(422);
  });
});

describe('a redelivery whose answer was lost (issue 28)', () => {
  it('is answered on the retry with the same key, and queued once', async () => {
    const store = await newStore();
    const hook = await subscribe(store, endpoint(), ['order.created']);
    await createOrder(store);
    const delivery = await until('a delivery', async () => (await store.get(`/v1/app/webhook/${hook.id}/delivery`)).body.data[0] as { id: number } | undefined);
    const path = `/v1/app/webhook/${hook.id}/delivery/${delivery.id}/redeliver`;
    const key = `redeliver-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const lost = await store.post(path, {}, { headers: { 'idempotency-key': key, 'x-local-dynamodb-fault': 'lose-answer:TransactWriteItems:1-3' } });
    expect(lost.status, lost.text).toBe(503);
    const retried = await store.post(path, {}, { headers: { 'idempotency-key': key } });
    expect(retried.status, retried.text).toBe(202);
    expect(retried.body).toEqual({ delivery_id: delivery.id, event_id: expect.any(String), queued: true });
    const requests = await queryAll({ pk: storePk(store.storeId), skPrefix: `${ENTITY.WEBHOOK_REDELIVERY}#` });
    expect(requests).toHaveLength(1);
  });
});
