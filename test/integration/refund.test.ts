import { describe, expect, it } from 'vitest';
import { createDiscount, createPackage, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { buyerLogin } from '../support/buyer.ts';
import { atTime, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { ack, claim, createServer } from '../support/delivery.ts';

const DAY_MS = 86_400_000;
const PIX = { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' };
const APPROVAL = '2026-03-01T10:00:00.000Z';
const REFUND = '2026-03-05T12:00:00.000Z';

const commandsOf = async (store: Store, orderId: number) => (await store.get(`/v1/app/order/${orderId}/command`)).body as any[];
const stockOf = async (store: Store, packageId: number) => (await store.get(`/v1/app/package/${packageId}`)).body.stock as number;
const usesOf = async (store: Store, discountId: number) => (await store.get(`/v1/app/discount/${discountId}`)).body.uses as number;

/** An affiliate paid 10%, a limited package with commands of every stage, a coupon, and an APPROVED order of 2 units of it. */
async function soldOrder(store: Store, pkgExtra: Record<string, unknown> = {}) {
  await store.patch('/v1/app/store', { affiliate: { percent_commission: 10 } });
  const affiliate = await buyerLogin(store.domain);
  expect((await affiliate.post('/v1/webstore/affiliate/join', { ref_code: 'Ana_Games' })).status).toBe(200);
  const pkg = await createPackage(store, {
    price: 25,
    stock: 10,
    per_customer_limit: 3,
    expiry_days: 30,
    commands: [
      { command: 'give {client_identifier} vip' },
      { command: 'kit {client_identifier}' },
      { command: 'expire {client_identifier}', stage: 'EXPIRED' },
      { command: 'refund {client_identifier}', stage: 'REFUNDED', delay_seconds: 60 },
      { command: 'chargeback {client_identifier}', stage: 'CHARGEBACK' },
    ],
    ...pkgExtra,
  });
  const discount = await createDiscount(store, { coupon: 'SAVE5', type: 'VALUE', value: 5 });
  const order = await placeOrder(store, { ...orderBody(pkg.id), packages: [{ package_id: pkg.id, quantity: 2 }], coupon: 'save5', ref_code: 'ana_games' });
  const approved = await store.post(`/v1/app/order/${order.id}/approve`, undefined, { headers: atTime(APPROVAL) });
  expect(approved.status, approved.text).toBe(200);
  return { pkg, discount, order: approved.body, affiliate };
}

describe('POST /v1/app/order/{id}/refund', () => {
  it('APPROVED -> REFUNDED once: commands canceled, refund commands queued, commission reversed, coupon, stock and limit given back', async () => {
    const store = await newStore();
    const { pkg, discount, order, affiliate } = await soldOrder(store);
    expect(await stockOf(store, pkg.id)).toBe(8);
    expect(await usesOf(store, discount.id)).toBe(1);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(4.5);

    const res = await store.post(`/v1/app/order/${order.id}/refund`, undefined, { headers: atTime(REFUND) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: order.id, status: 'REFUNDED', refunded_at: REFUND, chargeback_at: null, approved_at: APPROVAL, updated_at: REFUND });
    // order GetItem + command ids ADD and commands BatchGet (in parallel) + one TransactWrite (status, releases, commands)
    // + commission (BatchGet + GetItem + id + TransactWrite) + flag UpdateItem + credential
    expect(dynamoDbCalls(res)).toBe(10);
    expect((await store.get(`/v1/app/order/${order.id}`)).body).toEqual(res.body);

    const commands = await commandsOf(store, order.id);
    expect(commands.map((c) => [c.stage, c.status, c.command])).toEqual([
      ['APPROVED', 'CANCELED', 'give Steve vip'],
      ['APPROVED', 'CANCELED', 'kit Steve'],
      ['EXPIRED', 'CANCELED', 'expire Steve'],
      ['REFUNDED', 'PENDING', 'refund Steve'],
    ]);
    expect(commands[3].execute_at).toBe(new Date(Date.parse(REFUND) + 60_000).toISOString());

    expect(await stockOf(store, pkg.id)).toBe(10);
    expect(await usesOf(store, discount.id)).toBe(0);
    // The per-customer limit (3) holds 3 units again: the 2 units of the refunded order were given back.
    expect((await store.post('/v1/app/order', { ...orderBody(pkg.id), packages: [{ package_id: pkg.id, quantity: 3 }] })).status).toBe(200);

    const statement = (await affiliate.get('/v1/webstore/affiliate/transactions')).body.data;
    expect(statement.map((t: any) => [t.operation, t.amount, t.order_id])).toEqual([
      ['COMMISSION_REVERSED', -4.5, order.id],
      ['COMMISSION', 4.5, order.id],
    ]);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(0);

    // The same call again answers the order and does nothing more: order GetItem + credential.
    const again = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(dynamoDbCalls(again)).toBe(2);
    expect(await commandsOf(store, order.id)).toHaveLength(4);
    expect(await stockOf(store, pkg.id)).toBe(7);
    expect((await affiliate.get('/v1/webstore/affiliate/transactions')).body.data).toHaveLength(2);
  });

  it('is listed under its status in page and cursor mode, and refused as approve, cancel, resend or chargeback (409)', async () => {
    const store = await newStore();
    const pkg = await createPackage(store, { price: 5 });
    const refunded = await placeOrder(store, orderBody(pkg.id));
    const approved = await placeOrder(store, orderBody(pkg.id));
    await store.post(`/v1/app/order/${refunded.id}/approve`);
    await store.post(`/v1/app/order/${approved.id}/approve`);
    const res = await store.post(`/v1/app/order/${refunded.id}/refund`);
    // order + status TransactWrite + credential: no commands, no ref_code, no coupon
    expect(dynamoDbCalls(res)).toBe(3);

    const page = (await store.get('/v1/app/order?status=REFUNDED')).body;
    expect(page.data.map((o: any) => o.id)).toEqual([refunded.id]);
    const cursor = (await store.get('/v1/app/order?status=REFUNDED&page_cursor=')).body;
    expect(cursor.data.map((o: any) => o.id)).toEqual([refunded.id]);
    expect((await store.get('/v1/app/order?status=APPROVED')).body.data.map((o: any) => o.id)).toEqual([approved.id]);
    expect((await store.get('/v1/app/order?status=CHARGEBACK&page_cursor=')).body.data).toEqual([]);
    expect((await store.get('/v1/app/order?status=REFUND')).status).toBe(422);

    for (const action of ['approve', 'cancel', 'command/resend', 'chargeback']) {
      const refused = await store.post(`/v1/app/order/${refunded.id}/${action}`);
      expect(refused.status, action).toBe(409);
      expect(firstError(refused).message).toContain('REFUNDED');
    }
    expect((await store.get(`/v1/app/order/${refunded.id}`)).body.status).toBe('REFUNDED');
  });

  it("refuses a PENDING or CANCELED order (409), another store's order and bad ids (404), changing nothing", async () => {
    const store = await newStore();
    const other = await newStore();
    const pkg = await createPackage(store, { price: 5, stock: 5 });
    const pending = await placeOrder(store, orderBody(pkg.id));
    const canceled = await placeOrder(store, orderBody(pkg.id));
    await store.post(`/v1/app/order/${canceled.id}/cancel`);
    for (const action of ['refund', 'chargeback']) {
      expect((await store.post(`/v1/app/order/${pending.id}/${action}`)).status).toBe(409);
      expect((await store.post(`/v1/app/order/${canceled.id}/${action}`)).status).toBe(409);
      const foreign = await other.post(`/v1/app/order/${pending.id}/${action}`);
      expect(foreign.status).toBe(404);
      expect(firstError(foreign).message).toBe('Order not found');
      for (const bad of ['abc', '0', '-1', '99999']) expect((await store.post(`/v1/app/order/${bad}/${action}`)).status).toBe(404);
    }
    expect((await store.get(`/v1/app/order/${pending.id}`)).body.status).toBe('PENDING');
    expect((await store.get(`/v1/app/order/${canceled.id}`)).body.status).toBe('CANCELED');
    expect(await stockOf(store, pkg.id)).toBe(4);

    await store.post(`/v1/app/order/${pending.id}/approve`);
    const foreign = await other.post(`/v1/app/order/${pending.id}/refund`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ errors: [expect.objectContaining({ message: 'Order not found' })] });
    expect((await store.get(`/v1/app/order/${pending.id}`)).body.status).toBe('APPROVED');
    expect(await stockOf(store, pkg.id)).toBe(4);
  });

  it("cancels a command under a live lease: the holder's later ack is recorded and changes nothing", async () => {
    const store = await newStore();
    const server = await createServer(store);
    const pkg = await createPackage(store, { price: 5, commands: [{ command: 'a' }, { command: 'b' }] });
    const order = await placeOrder(store, orderBody(pkg.id));
    await store.post(`/v1/app/order/${order.id}/approve`);
    const claimed = await claim(server.key);
    expect(claimed.body.commands.map((c: any) => c.command)).toEqual(['a']);
    const leased = claimed.body.commands[0].id;

    expect((await store.post(`/v1/app/order/${order.id}/refund`)).status).toBe(200);
    expect((await commandsOf(store, order.id)).map((c) => c.status)).toEqual(['CANCELED', 'CANCELED']);
    const acked = await ack(server.key, claimed.body.lease_id, [{ id: leased, status: 'DONE', response: 'ran' }]);
    expect(acked.status).toBe(200);
    expect(acked.body).toEqual({ accepted: [leased], rejected: [] });
    expect((await commandsOf(store, order.id)).map((c) => c.status)).toEqual(['CANCELED', 'CANCELED']);
    // Nothing was released by the ack: the queue is empty.
    expect((await claim(server.key)).body.commands).toEqual([]);
  });
});

describe('one transaction when it fits, two beyond', () => {
  const refundOf = async (approvedCommands: number, refundCommands: number) => {
    const store = await newStore();
    const commands = [
      ...Array.from({ length: approvedCommands }, (_, i) => ({ command: `give ${i}` })),
      ...Array.from({ length: refundCommands }, (_, i) => ({ command: `take ${i}`, stage: 'REFUNDED' })),
    ];
    const pkg = await createPackage(store, { price: 5, stock: 10, commands });
    const order = await placeOrder(store, orderBody(pkg.id));
    expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
    const res = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(res.status, res.text).toBe(200);
    const after = await commandsOf(store, order.id);
    expect(after.filter((c) => c.stage === 'APPROVED').every((c) => c.status === 'CANCELED')).toBe(true);
    expect(after.filter((c) => c.stage === 'REFUNDED').map((c) => c.status)).toEqual(Array(refundCommands).fill('PENDING'));
    expect(await stockOf(store, pkg.id)).toBe(10);
    // Nothing is owed: a second call answers the order and does nothing more.
    const again = await store.post(`/v1/app/order/${order.id}/refund`);
    expect(dynamoDbCalls(again)).toBe(2);
    expect(await commandsOf(store, order.id)).toHaveLength(approvedCommands + refundCommands);
    return dynamoDbCalls(res);
  };

  it('a small order: credential + order + (ids ADD, commands BatchGet) + one TransactWrite', async () => {
    expect(await refundOf(2, 1)).toBe(5);
  });

  it('an order whose releases and commands pass 100 items: the commands in a second transaction, as before', async () => {
    // 40 cancels + 40 queued commands with their chain and the status change: past 100 items.
    expect(await refundOf(40, 40)).toBe(6);
  });
});

describe('POST /v1/app/order/{id}/chargeback', () => {
  it('APPROVED -> CHARGEBACK with the CHARGEBACK-stage commands; once; a refund of it is a 409', async () => {
    const store = await newStore();
    const { pkg, discount, order, affiliate } = await soldOrder(store);
    const res = await store.post(`/v1/app/order/${order.id}/chargeback`, undefined, { headers: atTime(REFUND) });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'CHARGEBACK', chargeback_at: REFUND, refunded_at: null });
    // as the refund: the status change and the commands in one TransactWrite
    expect(dynamoDbCalls(res)).toBe(10);
    const commands = await commandsOf(store, order.id);
    expect(commands.map((c) => [c.stage, c.status])).toEqual([
      ['APPROVED', 'CANCELED'],
      ['APPROVED', 'CANCELED'],
      ['EXPIRED', 'CANCELED'],
      ['CHARGEBACK', 'PENDING'],
    ]);
    expect(commands[3]).toMatchObject({ command: 'chargeback Steve', execute_at: REFUND });
    expect(await stockOf(store, pkg.id)).toBe(10);
    expect(await usesOf(store, discount.id)).toBe(0);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(0);

    expect((await store.post(`/v1/app/order/${order.id}/chargeback`)).body).toEqual(res.body);
    expect((await store.post(`/v1/app/order/${order.id}/refund`)).status).toBe(409);
    expect(await commandsOf(store, order.id)).toHaveLength(4);
  });

  it('takes the balance below 0 when the commission was withdrawn meanwhile; a withdrawal is then refused', async () => {
    const store = await newStore();
    const { order, affiliate } = await soldOrder(store, { stock: null, per_customer_limit: null, commands: [] });
    expect((await affiliate.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX })).status).toBe(200);
    expect((await affiliate.post('/v1/webstore/affiliate/withdraw', { amount: 4.5 })).status).toBe(200);
    expect((await store.post(`/v1/app/order/${order.id}/chargeback`)).status).toBe(200);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(-4.5);
    const refused = await affiliate.post('/v1/webstore/affiliate/withdraw', { amount: 1 });
    expect(refused.status).toBe(422);
    expect(firstError(refused)).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
  });
});

describe('the commission reversal', () => {
  it('reverses the credited affiliate even when the link code it came through was deleted since', async () => {
    const store = await newStore();
    await store.patch('/v1/app/store', { affiliate: { percent_commission: 10 } });
    const affiliate = await buyerLogin(store.domain);
    expect((await affiliate.post('/v1/webstore/affiliate/join', { ref_code: 'Main_Code' })).status).toBe(200);
    const link = await affiliate.post('/v1/webstore/affiliate/link', { name: 'Stream', ref_code: 'Stream_Code' });
    expect(link.status, link.text).toBe(200);
    const pkg = await createPackage(store, { price: 20 });
    const order = await placeOrder(store, { ...orderBody(pkg.id), ref_code: 'stream_code' });
    expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(2);
    expect((await affiliate.delete(`/v1/webstore/affiliate/link/${link.body.id}`)).status).toBe(204);
    expect((await store.post(`/v1/app/order/${order.id}/refund`)).status).toBe(200);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(0);
    const statement = (await affiliate.get('/v1/webstore/affiliate/transactions')).body.data;
    expect(statement.map((t: any) => [t.operation, t.amount])).toEqual([
      ['COMMISSION_REVERSED', -2],
      ['COMMISSION', 2],
    ]);
  });
});

describe('racing reversals', () => {
  it('10 concurrent refunds give one set of effects', async () => {
    const store = await newStore();
    const { pkg, discount, order, affiliate } = await soldOrder(store);
    const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/order/${order.id}/refund`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.body.refunded_at)).size).toBe(1);
    expect(await stockOf(store, pkg.id)).toBe(10);
    expect(await usesOf(store, discount.id)).toBe(0);
    const statement = (await affiliate.get('/v1/webstore/affiliate/transactions')).body.data;
    expect(statement.filter((t: any) => t.operation === 'COMMISSION_REVERSED')).toHaveLength(1);
    expect((await affiliate.get('/v1/webstore/affiliate/me')).body.balance).toBe(0);
    const commands = await commandsOf(store, order.id);
    expect(commands.filter((c) => c.stage === 'REFUNDED')).toHaveLength(1);
    expect(commands.filter((c) => c.status === 'CANCELED')).toHaveLength(3);
  });

  it('a refund racing a chargeback: exactly one wins, the other is a 409 or answers nothing new', async () => {
    const store = await newStore();
    const { pkg, order } = await soldOrder(store);
    const results = await Promise.all(['refund', 'chargeback', 'refund', 'chargeback'].map((action) => store.post(`/v1/app/order/${order.id}/${action}`)));
    const final = (await store.get(`/v1/app/order/${order.id}`)).body.status;
    for (const r of results) expect(r.status === 200 ? r.body.status : 409).toBe(r.status === 200 ? final : r.status);
    expect(await stockOf(store, pkg.id)).toBe(10);
    expect((await commandsOf(store, order.id)).filter((c) => c.status === 'PENDING')).toHaveLength(1);
  });
});

describe('timed packages (expiry_days)', () => {
  it('queues the EXPIRED commands at approval + expiry_days days whatever the quantity; lines show expires_at', async () => {
    const store = await newStore();
    const timed = await createPackage(store, { price: 5, expiry_days: 30, commands: [{ command: 'give' }, { command: 'take', stage: 'EXPIRED', delay_seconds: 5 }] });
    const plain = await createPackage(store, { price: 5, commands: [{ command: 'perm' }, { command: 'never', stage: 'EXPIRED' }] });
    const order = await placeOrder(store, {
      ...orderBody([timed.id, plain.id]),
      packages: [
        { package_id: timed.id, quantity: 3 },
        { package_id: plain.id, quantity: 1 },
      ],
    });
    expect(order.packages).toEqual([expect.objectContaining({ expires_at: null }), expect.objectContaining({ expires_at: null })]);

    const approved = (await store.post(`/v1/app/order/${order.id}/approve`, undefined, { headers: atTime(APPROVAL) })).body;
    const expiresAt = new Date(Date.parse(APPROVAL) + 30 * DAY_MS).toISOString();
    expect(approved.packages.map((line: any) => line.expires_at)).toEqual([expiresAt, null]);
    expect((await store.get(`/v1/app/order/${order.id}`)).body.packages.map((line: any) => line.expires_at)).toEqual([expiresAt, null]);
    const commands = await commandsOf(store, order.id);
    expect(commands.map((c) => [c.command, c.stage, c.execute_at])).toEqual([
      ['give', 'APPROVED', APPROVAL],
      ['perm', 'APPROVED', APPROVAL],
      ['take', 'EXPIRED', expiresAt],
    ]);

    await store.post(`/v1/app/order/${order.id}/refund`);
    expect((await commandsOf(store, order.id)).map((c) => c.status)).toEqual(['CANCELED', 'CANCELED', 'CANCELED']);
  });
});
