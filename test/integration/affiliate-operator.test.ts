import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { listCounterKey } from '#lib/db/list-count.ts';
import { buyerLogin } from '../support/buyer.ts';
import { createPackage, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { atTime, call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';

/** Section 11: the operator's side of affiliates, links, visits and the commission rules. */
const PIX = { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' };

let refCounter = 0;
const uniqueRef = (prefix = 'ref') => `${prefix}${process.pid}x${++refCounter}`;

async function affiliateOf(store: Store, ref = uniqueRef()) {
  const buyer = await buyerLogin(store.domain);
  const res = await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref });
  if (res.status !== 200) throw new Error(`join failed: ${res.status} ${res.text}`);
  return { buyer, ref, panel: res.body };
}

/** An approved order of `total` with this ref_code, by someone else than the affiliate. */
async function sale(store: Store, ref: string, total: number, extra: Record<string, unknown> = {}) {
  const pkg = await createPackage(store, { price: total });
  const order = await placeOrder(store, orderBody(pkg.id, { ref_code: ref, ...extra }));
  const approved = await store.post(`/v1/app/order/${order.id}/approve`);
  expect(approved.status, approved.text).toBe(200);
  return order;
}

/** An affiliate with a balance and a pending withdrawal of `amount`. */
async function pendingWithdrawal(store: Store, balance = 100, amount = 40) {
  const affiliate = await affiliateOf(store);
  await store.patch(`/v1/app/affiliate/${affiliate.panel.id}`, { percent_commission: 100 });
  await sale(store, affiliate.ref, balance);
  await affiliate.buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX });
  const withdrawal = await affiliate.buyer.post('/v1/webstore/affiliate/withdraw', { amount });
  expect(withdrawal.status, withdrawal.text).toBe(200);
  return { ...affiliate, withdrawal: withdrawal.body };
}

const balanceOf = async (buyer: Awaited<ReturnType<typeof buyerLogin>>) => (await buyer.get('/v1/webstore/affiliate/me')).body.balance as number;

describe('withdrawals: pay and reject', () => {
  it('pays a pending withdrawal once: WITHDRAW_PAID in the list, the statement, and the balance untouched', async () => {
    const store = await newStore();
    const { buyer, panel, withdrawal } = await pendingWithdrawal(store);
    const listed = await store.get('/v1/app/affiliate/withdrawal?status=PENDING');
    expect(listed.body.data).toEqual([{ ...withdrawal, affiliate_id: panel.id }]);
    expect(listed.body.meta).toMatchObject({ total: 1, first_page_url: '/v1/app/affiliate/withdrawal?page=1&limit=20&status=PENDING' });

    const paid = await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`);
    expect(paid.status).toBe(200);
    expect(paid.body).toEqual({ ...withdrawal, operation: 'WITHDRAW_PAID', affiliate_id: panel.id });
    expect(dynamoDbCalls(paid)).toBe(4); // credential + pointer + line + TransactWrite (the line and the status counts)
    const again = await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`);
    expect(again.body).toEqual(paid.body);
    expect(dynamoDbCalls(again)).toBe(3);

    expect(await balanceOf(buyer)).toBe(60);
    expect((await buyer.get('/v1/webstore/affiliate/transactions')).body.data[0]).toMatchObject({ id: withdrawal.id, operation: 'WITHDRAW_PAID' });
    expect((await store.get('/v1/app/affiliate/withdrawal?status=PENDING')).body.data).toEqual([]);
    expect((await store.get('/v1/app/affiliate/withdrawal?status=PAID')).body.data.map((w: any) => w.id)).toEqual([withdrawal.id]);
    expect((await store.get('/v1/app/affiliate/withdrawal')).body.data.map((w: any) => w.operation)).toEqual(['WITHDRAW_PAID']);
    expect(firstError(await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: 'late' }))).toMatchObject({ code: 'CONFLICT' });
    expect(await balanceOf(buyer)).toBe(60);
  });

  it('rejects once with the message, giving the amount back in the same transaction', async () => {
    const store = await newStore();
    const { buyer, withdrawal } = await pendingWithdrawal(store);
    expect(await balanceOf(buyer)).toBe(60);
    const rejected = await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: 'The PIX key does not match the CPF' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ operation: 'WITHDRAW_REJECTED', message: 'The PIX key does not match the CPF', amount: 40 });
    expect(dynamoDbCalls(rejected)).toBe(4); // credential + pointer + line + TransactWrite
    expect(await balanceOf(buyer)).toBe(100);
    expect((await buyer.get('/v1/webstore/affiliate/transactions')).body.data[0]).toMatchObject({ operation: 'WITHDRAW_REJECTED', message: 'The PIX key does not match the CPF' });
    expect((await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: 'again' })).body.message).toBe('The PIX key does not match the CPF');
    expect(await balanceOf(buyer)).toBe(100);
    expect((await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`)).status).toBe(409);
  });

  it('10 concurrent pays: one settlement, all answer WITHDRAW_PAID', async () => {
    const store = await newStore();
    const { buyer, withdrawal } = await pendingWithdrawal(store);
    const results = await Promise.all(Array.from({ length: 10 }, () => store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.body.operation))).toEqual(new Set(['WITHDRAW_PAID']));
    expect(await balanceOf(buyer)).toBe(60);
  });

  it('10 concurrent rejects: the balance is credited once', async () => {
    const store = await newStore();
    const { buyer, withdrawal } = await pendingWithdrawal(store);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: `no ${i}` })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    // Everyone answers the one rejection that happened, with its message.
    expect(new Set(results.map((r) => r.body.message)).size).toBe(1);
    expect(await balanceOf(buyer)).toBe(100);
  });

  it('pay racing reject: exactly one wins, the other is 409, and the balance matches the winner', async () => {
    for (let round = 0; round < 3; round++) {
      const store = await newStore();
      const { buyer, withdrawal } = await pendingWithdrawal(store);
      const [pay, reject] = await Promise.all([
        store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`),
        store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: 'no' }),
      ]);
      expect([pay.status, reject.status].sort()).toEqual([200, 409]);
      expect(await balanceOf(buyer)).toBe(pay.status === 200 ? 60 : 100);
    }
  });

  it.each([
    ['a missing message', {}],
    ['an empty message', { message: '  ' }],
    ['a message over 500 characters', { message: 'x'.repeat(501) }],
    ['a message that is not a string', { message: 5 }],
    ['an unknown field', { message: 'no', amount: 1 }],
  ])('refuses a reject with %s (422), changing nothing', async (_case, body) => {
    const store = await newStore();
    const { buyer, withdrawal } = await pendingWithdrawal(store);
    const res = await store.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, body);
    expect(res.status).toBe(422);
    firstError(res);
    expect(await balanceOf(buyer)).toBe(60);
    expect((await store.get('/v1/app/affiliate/withdrawal?status=PENDING')).body.meta.total).toBe(1);
  });

  it("answers 404 for another store's withdrawal, a commission's id or no id, changing nothing", async () => {
    const store = await newStore();
    const other = await newStore();
    const { buyer, withdrawal } = await pendingWithdrawal(store);
    expect((await other.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/pay`)).status).toBe(404);
    expect((await other.post(`/v1/app/affiliate/withdrawal/${withdrawal.id}/reject`, { message: 'no' })).status).toBe(404);
    expect((await other.get('/v1/app/affiliate/withdrawal')).body.data).toEqual([]);
    const commissionId = (await buyer.get('/v1/webstore/affiliate/transactions')).body.data[1].id;
    expect((await store.post(`/v1/app/affiliate/withdrawal/${commissionId}/pay`)).status).toBe(404);
    expect((await store.post('/v1/app/affiliate/withdrawal/abc/pay')).status).toBe(404);
    expect(await balanceOf(buyer)).toBe(60);
  });

  it('rejects a bad list filter (422) and pages newest first', async () => {
    const store = await newStore();
    expect(firstError(await store.get('/v1/app/affiliate/withdrawal?status=DONE'))).toMatchObject({ field: 'status' });
    const { buyer } = await pendingWithdrawal(store, 100, 10);
    const second = (await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 10 })).body;
    const page = await store.get('/v1/app/affiliate/withdrawal?limit=1');
    expect(page.body.data.map((w: any) => w.id)).toEqual([second.id]);
    expect(page.body.meta).toMatchObject({ total: 2, last_page: 2, next_page_url: '/v1/app/affiliate/withdrawal?page=2&limit=1' });
    // the list's counter and its page (Query with Limit), in parallel
    expect(dynamoDbCalls(page)).toBe(3);
  });

  it('keeps the total of each status through parallel requests, pays and rejects (each settled once)', async () => {
    const store = await newStore();
    const { buyer } = await pendingWithdrawal(store, 100, 10);
    const more = await Promise.all(Array.from({ length: 5 }, () => buyer.post('/v1/webstore/affiliate/withdraw', { amount: 10 })));
    const ids = [...(await store.get('/v1/app/affiliate/withdrawal?limit=100')).body.data.map((w: any) => w.id)] as number[];
    expect(ids).toHaveLength(1 + more.filter((res) => res.status === 200).length);
    // Each of the first two paid twice at once, the next two rejected twice at once (or paid and rejected at once).
    await Promise.all([
      ...ids.slice(0, 2).flatMap((id) => [store.post(`/v1/app/affiliate/withdrawal/${id}/pay`), store.post(`/v1/app/affiliate/withdrawal/${id}/pay`)]),
      ...ids.slice(2, 4).flatMap((id) => [store.post(`/v1/app/affiliate/withdrawal/${id}/reject`, { message: 'no' }), store.post(`/v1/app/affiliate/withdrawal/${id}/pay`)]),
    ]);
    const listed = async (status = '') => {
      const res = await store.get(`/v1/app/affiliate/withdrawal?limit=100${status ? `&status=${status}` : ''}`);
      return { total: res.body.meta.total as number, shown: res.body.data.length as number };
    };
    const all = await listed();
    expect(all).toEqual({ total: ids.length, shown: ids.length });
    let settled = 0;
    for (const status of ['PENDING', 'PAID', 'REJECTED']) {
      const { total, shown } = await listed(status);
      expect(total, status).toBe(shown);
      settled += total;
    }
    expect(settled).toBe(ids.length);
    expect((await listed('PENDING')).total).toBe(ids.length - 4);
  });
});

describe('operator affiliates: list, get, patch', () => {
  it('lists by main-code prefix and by e-mail, ignoring case, from the index', async () => {
    const store = await newStore();
    const ana = await affiliateOf(store, 'AnaGames');
    const anna = await affiliateOf(store, 'annaplays');
    await affiliateOf(store, 'bob_x');
    const all = await store.get('/v1/app/affiliate');
    expect(all.body.data.map((p: any) => p.ref_code)).toEqual(['AnaGames', 'annaplays', 'bob_x']);
    expect(all.body.data[0]).toEqual(ana.panel);
    // credential + the list's counter + Query of the page (Limit) + one BatchGet of the store (its domain) and the page's panels
    expect(dynamoDbCalls(all)).toBe(4);
    expect(all.body.meta.total).toBe(3);
    // The page costs what it holds: one affiliate read for a page of one, the total from the counter.
    const second = await store.get('/v1/app/affiliate?page=2&limit=1');
    expect(second.body.data.map((p: any) => p.ref_code)).toEqual(['annaplays']);
    expect(second.body.meta.total).toBe(3);
    // A store older than the counter counts its affiliates once, from the table: not the statements filed under them.
    await db.send(new DeleteCommand({ TableName: TABLE, Key: listCounterKey(store.storeId, 'AFFILIATE') }));
    expect((await store.get('/v1/app/affiliate?limit=1')).body.meta.total).toBe(3);
    const prefixed = await store.get('/v1/app/affiliate?ref_code=AN');
    // credential + Query of the code index + one BatchGet of the store and the panels
    expect(dynamoDbCalls(prefixed)).toBe(3);
    expect(prefixed.body.data.map((p: any) => p.id)).toEqual([ana.panel.id, anna.panel.id]);
    expect(prefixed.body.meta.first_page_url).toBe('/v1/app/affiliate?page=1&limit=20&ref_code=AN');
    expect((await store.get('/v1/app/affiliate?ref_code=ana')).body.data.map((p: any) => p.id)).toEqual([ana.panel.id]);
    const byEmail = await store.get(`/v1/app/affiliate?email=${encodeURIComponent(anna.buyer.email.toUpperCase())}`);
    expect(byEmail.body.data.map((p: any) => p.id)).toEqual([anna.panel.id]);
    expect((await store.get('/v1/app/affiliate?email=nobody@example.com')).body.data).toEqual([]);
    expect((await store.get('/v1/app/affiliate?page=9')).body).toMatchObject({ data: [], meta: { total: 3, current_page: 9 } });
    expect((await store.get('/v1/app/affiliate?email=not-an-email')).status).toBe(422);
  });

  it('gets and patches an affiliate; the buyer sees the change', async () => {
    const store = await newStore();
    const { buyer, panel } = await affiliateOf(store);
    const got = await store.get(`/v1/app/affiliate/${panel.id}`);
    expect(got.body).toEqual(panel);
    expect(dynamoDbCalls(got)).toBe(3); // credential + id sentinel + BatchGet (the panel and the store's domain)
    const patched = await store.patch(`/v1/app/affiliate/${panel.id}`, { percent_commission: 25, min_withdraw: 30 });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...panel, percent_commission: 25, min_withdraw: 30 });
    expect(dynamoDbCalls(patched)).toBe(4); // credential + id sentinel + UpdateItem and the BatchGet (panel and store), in parallel
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toEqual(patched.body);
    expect((await store.patch(`/v1/app/affiliate/${panel.id}`, { min_withdraw: null })).body.min_withdraw).toBeNull();
  });

  it.each([
    ['percent_commission over 100', { percent_commission: 101 }, 'percent_commission'],
    ['percent_commission below 0', { percent_commission: -1 }, 'percent_commission'],
    ['a negative min_withdraw', { min_withdraw: -5 }, 'min_withdraw'],
    ['an unknown status', { status: 'banned' }, 'status'],
    ['an unknown field', { balance: 1000 }, undefined],
    ['nothing to change', {}, undefined],
  ])('refuses a patch with %s (422), changing nothing', async (_case, body, field) => {
    const store = await newStore();
    const { buyer, panel } = await affiliateOf(store);
    const res = await store.patch(`/v1/app/affiliate/${panel.id}`, body);
    expect(res.status).toBe(422);
    if (field) expect(firstError(res).field).toBe(field);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toEqual(panel);
  });

  it("answers 404 for another store's affiliate, changing nothing", async () => {
    const store = await newStore();
    const other = await newStore();
    const { buyer, panel } = await affiliateOf(store);
    expect((await other.get(`/v1/app/affiliate/${panel.id}`)).status).toBe(404);
    expect((await other.patch(`/v1/app/affiliate/${panel.id}`, { status: 'blocked' })).status).toBe(404);
    expect((await other.get('/v1/app/affiliate')).body.data).toEqual([]);
    expect((await store.get('/v1/app/affiliate/999')).status).toBe(404);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.status).toBe('affiliate');
  });

  it('a blocked affiliate earns nothing, cannot withdraw or add links (403), sees blocked; its code still works on orders', async () => {
    const store = await newStore();
    const { buyer, panel, ref } = await affiliateOf(store);
    await sale(store, ref, 100);
    await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX });
    await store.patch(`/v1/app/affiliate/${panel.id}`, { status: 'blocked' });
    const own = (await buyer.get('/v1/webstore/affiliate/me')).body;
    expect(own).toMatchObject({ status: 'blocked', balance: 10 });
    expect((await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 5 })).status).toBe(403);
    expect((await buyer.post('/v1/webstore/affiliate/link', { name: 'Video', ref_code: uniqueRef('lnk') })).status).toBe(403);
    await sale(store, ref, 100);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toMatchObject({ balance: 10, stats: { total_sales: 1 } });
    await store.patch(`/v1/app/affiliate/${panel.id}`, { status: 'affiliate' });
    expect((await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 5 })).status).toBe(200);
  });
});

describe('commission rules', () => {
  it("pays nothing on an order under the affiliate's own e-mail (ignoring case)", async () => {
    const store = await newStore();
    const { buyer, ref } = await affiliateOf(store);
    await sale(store, ref, 100, { client_email: buyer.email.toUpperCase() });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toMatchObject({ balance: 0, stats: { total_sales: 0 } });
  });

  it('rounds the commission to the cent, halves away from zero', async () => {
    const store = await newStore();
    const { buyer, ref, panel } = await affiliateOf(store);
    await store.patch(`/v1/app/affiliate/${panel.id}`, { percent_commission: 5 });
    await sale(store, ref, 0.3); // 0.015 -> 0.02
    expect(await balanceOf(buyer)).toBe(0.02);
  });

  it('refuses an unknown ref_code (422, field ref_code) on the operator order, the quote and the checkout, with the other problems', async () => {
    const store = await newStore();
    const other = await newStore();
    await affiliateOf(other, 'elsewhere');
    const pkg = await createPackage(store);
    const before = (await store.get('/v1/app/order')).body.meta.total;
    const order = await store.post('/v1/app/order', orderBody([pkg.id, 99999], { ref_code: 'elsewhere' }));
    expect(order.status).toBe(422);
    expect(order.body.errors.map((e: any) => e.field)).toEqual(['packages.1.package_id', 'ref_code']);
    const headers = { 'x-store-domain': store.domain };
    const cart = { cart: [{ package_id: pkg.id, quantity: 1 }], ref_code: 'nobody' };
    const quote = await call('POST', '/v1/webstore/cart/quote', { json: cart, headers });
    expect(firstError(quote)).toMatchObject({ field: 'ref_code', code: 'REF_CODE_NOT_FOUND' });
    const checkout = await call('POST', '/v1/webstore/checkout', {
      json: { ...cart, client_name: 'Steve', client_identifier: 'Steve', client_email: 'steve@example.com' },
      headers,
    });
    expect(firstError(checkout)).toMatchObject({ field: 'ref_code', code: 'REF_CODE_NOT_FOUND' });
    expect((await store.get('/v1/app/order')).body.meta.total).toBe(before);
  });
});

describe('links', () => {
  it('adds a link that credits its owner and counts its own sales and revenue, once', async () => {
    const store = await newStore();
    const { buyer, ref, panel } = await affiliateOf(store);
    const created = await buyer.post('/v1/webstore/affiliate/link', { name: 'YouTube', ref_code: 'Ana_YT' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: panel.id + 1, name: 'YouTube', ref_code: 'Ana_YT', url: `https://${store.domain}/?ref=Ana_YT`, sales: 0, revenue: 0, d7_visits: 0 });
    expect(dynamoDbCalls(created)).toBe(3); // credential + id ADD + TransactWrite: nothing read first, the conditions are the rules
    const order = await sale(store, 'ana_yt', 50);
    await store.post(`/v1/app/order/${order.id}/approve`);
    await sale(store, ref, 20);
    const me = (await buyer.get('/v1/webstore/affiliate/me')).body;
    expect(me.links).toEqual([
      { ...panel.links[0], sales: 1, revenue: 20 },
      { ...created.body, sales: 1, revenue: 50 },
    ]);
    expect(me).toMatchObject({ balance: 7, stats: { total_sales: 2, total_amount: 70 } });
  });

  it('refuses a code in use anywhere in the store (409), a short or bad code (422), the 21st link (422)', async () => {
    const store = await newStore();
    const { buyer, ref } = await affiliateOf(store);
    const other = await affiliateOf(store);
    await other.buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: 'TakenLink' });
    for (const code of [ref, ref.toUpperCase(), other.ref, 'takenlink']) {
      expect((await buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: code })).status).toBe(409);
    }
    for (const body of [{ name: 'x', ref_code: 'ab' }, { name: 'x', ref_code: 'a b c' }, { name: '', ref_code: 'abcd' }, { ref_code: 'abcd' }]) {
      expect((await buyer.post('/v1/webstore/affiliate/link', body)).status).toBe(422);
    }
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => buyer.post('/v1/webstore/affiliate/link', { name: `L${i}`, ref_code: uniqueRef('many') })));
    expect(made.map((r) => r.status)).toEqual(Array(20).fill(200));
    const extra = await buyer.post('/v1/webstore/affiliate/link', { name: 'L21', ref_code: 'one-too-many' });
    expect(firstError(extra)).toMatchObject({ code: 'LINK_LIMIT_REACHED' });
    const me = (await buyer.get('/v1/webstore/affiliate/me')).body;
    expect(me.links).toHaveLength(21);
    expect(me.links[0].ref_code).toBe(ref);
    // The refused code was not claimed.
    expect((await other.buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: 'one-too-many' })).status).toBe(200);
  });

  it("answers from the write's own conditions, nothing read first: not an affiliate 404, blocked 403 before a taken code, a taken code 409 before the limit; nothing claimed", async () => {
    const store = await newStore();
    const { buyer, panel, ref } = await affiliateOf(store);
    const stranger = await buyerLogin(store.domain);
    const notJoined = await stranger.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: 'stranger_code' });
    expect(notJoined.status).toBe(404);
    expect(firstError(notJoined).message).toBe('Affiliate not found');
    // The refused code was not claimed: an affiliate may take it.
    const claimed = await buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: 'stranger_code' });
    expect(claimed.status).toBe(200);
    await Promise.all(Array.from({ length: 19 }, (_, i) => buyer.post('/v1/webstore/affiliate/link', { name: `L${i}`, ref_code: uniqueRef('full') })));
    // At the limit with a code in use: the code's 409, as when the read came first.
    expect((await buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: ref })).status).toBe(409);
    await store.patch(`/v1/app/affiliate/${panel.id}`, { status: 'blocked' });
    // Blocked, at the limit, with a code in use: the block's 403.
    const blocked = await buyer.post('/v1/webstore/affiliate/link', { name: 'x', ref_code: ref });
    expect(blocked.status).toBe(403);
    expect(firstError(blocked)).toMatchObject({ code: 'AFFILIATE_BLOCKED' });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.links).toHaveLength(21);
  });

  it('deletes a link: its code becomes unknown (orders 422, visits 404) and free', async () => {
    const store = await newStore();
    const { buyer, panel } = await affiliateOf(store);
    const link = (await buyer.post('/v1/webstore/affiliate/link', { name: 'Video', ref_code: 'gone_code' })).body;
    const deleted = await buyer.delete(`/v1/webstore/affiliate/link/${link.id}`);
    expect(deleted.status).toBe(204);
    expect(dynamoDbCalls(deleted)).toBe(3);
    expect((await buyer.delete(`/v1/webstore/affiliate/link/${link.id}`)).status).toBe(404);
    expect((await buyer.delete(`/v1/webstore/affiliate/link/${panel.id}`)).status).toBe(422);
    const pkg = await createPackage(store);
    expect(firstError(await store.post('/v1/app/order', orderBody(pkg.id, { ref_code: 'gone_code' })))).toMatchObject({ field: 'ref_code' });
    expect((await call('POST', '/v1/webstore/affiliate/visit', { json: { ref_code: 'gone_code' }, headers: { 'x-store-domain': store.domain } })).status).toBe(404);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.links).toHaveLength(1);
    expect((await buyer.post('/v1/webstore/affiliate/link', { name: 'Again', ref_code: 'gone_code' })).status).toBe(200);
  });
});

describe('visits', () => {
  const visit = (store: Store, ref_code: string, at: string) =>
    call('POST', '/v1/webstore/affiliate/visit', { json: { ref_code }, headers: { 'x-store-domain': store.domain, ...atTime(at) } });

  it('counts d7_visits per code and for the panel, over the last 7 days (pinned times across 8 days)', async () => {
    const store = await newStore();
    const { buyer, ref, panel } = await affiliateOf(store);
    const link = (await buyer.post('/v1/webstore/affiliate/link', { name: 'Video', ref_code: uniqueRef('vid') })).body;
    const first = await visit(store, ref, '2030-03-01T10:00:00Z');
    expect(first.status).toBe(204);
    expect(dynamoDbCalls(first)).toBe(3); // domain lookup + sentinel Get + TransactWrite
    await visit(store, ref, '2030-03-01T11:00:00Z');
    await visit(store, link.ref_code, '2030-03-04T10:00:00Z');
    await visit(store, ref.toUpperCase(), '2030-03-08T10:00:00Z');
    // Read by the operator: a buyer's access token would have expired by these dates.
    const on = async (at: string) => {
      const me = (await store.get(`/v1/app/affiliate/${panel.id}`, { headers: atTime(at) })).body;
      return [me.stats.d7_visits, me.links[0].d7_visits, me.links[1].d7_visits];
    };
    expect(await on('2030-03-01T12:00:00Z')).toEqual([2, 2, 0]);
    expect(await on('2030-03-07T23:59:00Z')).toEqual([3, 2, 1]);
    expect(await on('2030-03-08T12:00:00Z')).toEqual([2, 1, 1]); // March 1 has left the window
    expect(await on('2030-03-11T12:00:00Z')).toEqual([1, 1, 0]);
    expect(await on('2030-03-15T12:00:00Z')).toEqual([0, 0, 0]);
  });

  it('counts one visitor once per code per hour: repeats answer 204 and add nothing', async () => {
    const store = await newStore();
    const { ref, panel } = await affiliateOf(store);
    const d7At = async (at: string) => (await store.get(`/v1/app/affiliate/${panel.id}`, { headers: atTime(at) })).body.stats.d7_visits;
    const results = await Promise.all(Array.from({ length: 5 }, () => visit(store, ref, '2030-05-01T10:05:00Z')));
    expect(results.map((r) => r.status)).toEqual(Array(5).fill(204));
    await visit(store, ref, '2030-05-01T10:59:00Z');
    expect(await d7At('2030-05-01T11:00:00Z')).toBe(1);
    await visit(store, ref, '2030-05-01T11:01:00Z');
    expect(await d7At('2030-05-01T12:00:00Z')).toBe(2);
  });

  it('answers 404 for an unknown code or store, 422 for a bad body', async () => {
    const store = await newStore();
    await affiliateOf(store, 'known_code');
    const other = await newStore();
    expect((await visit(other, 'known_code', '2030-01-01T00:00:00Z')).status).toBe(404);
    expect((await visit(store, 'unknown', '2030-01-01T00:00:00Z')).status).toBe(404);
    expect((await call('POST', '/v1/webstore/affiliate/visit', { json: { ref_code: 'known_code' }, headers: { 'x-store-domain': 'nobody.test.localhost' } })).status).toBe(404);
    expect((await call('POST', '/v1/webstore/affiliate/visit', { json: { ref_code: 'a b' }, headers: { 'x-store-domain': store.domain } })).status).toBe(422);
  });
});
