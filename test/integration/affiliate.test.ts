import { describe, expect, it } from 'vitest';
import { creditOrderCommission } from '#lib/flows/affiliate-commission.ts';
import { issueBuyerAccessToken } from '#lib/db/credential.ts';
import { buyerLogin } from '../support/buyer.ts';
import { call, firstError, newStore, dynamoDbCalls } from '../support/client.ts';

type Buyer = Awaited<ReturnType<typeof buyerLogin>>;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PIX = { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' };
const PACKAGES = [{ package_id: 7, name: 'VIP 30 days', quantity: 1 }];

/** What order approval calls, for an order placed by someone other than the affiliate. */
const creditCommission = (storeId: number, ref: string, orderId: number, total: number, packages: typeof PACKAGES) =>
  creditOrderCommission(storeId, { id: orderId, ref_code: ref, total, client_email: 'someone.else@example.com', packages });

let refCounter = 0;
const uniqueRef = (prefix = 'ref') => `${prefix}${process.pid}x${++refCounter}`;

async function affiliateOf(domain: string, ref = uniqueRef()) {
  const buyer = await buyerLogin(domain);
  const res = await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref });
  if (res.status !== 200) throw new Error(`join failed: ${res.status} ${res.text}`);
  return { buyer, ref, panel: res.body };
}

/** Gives the affiliate a balance through the function orders will call on approval. */
async function fund(storeId: number, ref: string, orderId: number, total: number) {
  const credited = await creditCommission(storeId, ref, orderId, total, PACKAGES);
  if (!credited) throw new Error('nothing credited');
  return credited;
}

const expectMessageOnly = (res: { status: number; body: any }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.body.errors).toHaveLength(1);
  expect(Object.keys(res.body.errors[0])).toEqual(['message']);
  return res.body.errors[0].message as string;
};

describe('POST /v1/webstore/affiliate/join', () => {
  it('creates the affiliate and answers the panel, with the store default commission', async () => {
    const store = await newStore();
    await store.patch('/v1/app/store', { affiliate: { percent_commission: 12.5 } });
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'Ana_Games' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'affiliate',
      id: 1,
      name: buyer.customer.name,
      email: buyer.email,
      ref_code: 'Ana_Games',
      percent_commission: 12.5,
      balance: 0,
      min_withdraw: null,
      withdraw_settings: { full_name: '', pix_key: '', pix_key_type: '', cpf_cnpj: '' },
      stats: { total_sales: 0, total_amount: 0, d7_visits: 0 },
      links: [{ id: 1, name: 'Main link', ref_code: 'Ana_Games', url: `https://${store.domain}/?ref=Ana_Games`, sales: 0, revenue: 0, d7_visits: 0 }],
    });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toEqual(res.body);
    // A later change of the store default does not touch an existing affiliate.
    await store.patch('/v1/app/store', { affiliate: { percent_commission: 30 } });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.percent_commission).toBe(12.5);
  });

  it('gives an existing affiliate its panel without error, keeping its code and leaving the new one free', async () => {
    const store = await newStore();
    const { buyer, ref, panel } = await affiliateOf(store.domain);
    const again = await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'another-code' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(panel);
    expect(again.body.ref_code).toBe(ref);
    expect((await affiliateOf(store.domain, 'another-code')).panel.id).toBe(panel.id + 1);
  });

  it('answers 403 (message only) when self-registration is disabled, creating nothing', async () => {
    const store = await newStore();
    await store.patch('/v1/app/store', { affiliate: { self_registration: false } });
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'closed' });
    expect(expectMessageOnly(res, 403)).toMatch(/self-registration/);
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
    await store.patch('/v1/app/store', { affiliate: { self_registration: true } });
    expect((await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'closed' })).status).toBe(200);
  });

  it('answers 409 (message only) for a code in use, ignoring case', async () => {
    const store = await newStore();
    await affiliateOf(store.domain, 'TakenCode');
    const buyer = await buyerLogin(store.domain);
    for (const ref_code of ['TakenCode', 'takencode', 'TAKENCODE']) {
      expect(expectMessageOnly(await buyer.post('/v1/webstore/affiliate/join', { ref_code }), 409)).toMatch(/in use/);
    }
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
  });

  it('lets the same code exist in two stores', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    await affiliateOf(a.domain, 'shared');
    expect((await affiliateOf(b.domain, 'shared')).panel.ref_code).toBe('shared');
  });

  it.each([
    ['shorter than 3 characters', 'ab'],
    ['shorter than 3 characters after trimming spaces', ' ab '],
    ['empty', ''],
  ])('answers 422 (message only) for a ref_code %s, creating nothing', async (_case, ref_code) => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    expect(expectMessageOnly(await buyer.post('/v1/webstore/affiliate/join', { ref_code }), 422)).toBe('ref_code must be at least 3 characters');
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
  });

  it.each([
    ['longer than 32 characters', { ref_code: 'a'.repeat(33) }],
    ['with characters unsafe in a link', { ref_code: 'ana games' }],
    ['with a slash', { ref_code: 'ana/games' }],
    ['missing', {}],
    ['not a string', { ref_code: 1234 }],
  ])('answers 422 for a ref_code %s, creating nothing', async (_case, body) => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.post('/v1/webstore/affiliate/join', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'ref_code', code: 'VALIDATION_FAILED' });
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
  });

  it('rejects unknown fields (422)', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'valid', percent_commission: 90 });
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('percent_commission');
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
  });

  it('makes exactly one affiliate when 6 customers race for one code; the others get 409', async () => {
    const store = await newStore();
    const buyers = await Promise.all(Array.from({ length: 6 }, () => buyerLogin(store.domain)));
    const results = await Promise.all(buyers.map((buyer) => buyer.post('/v1/webstore/affiliate/join', { ref_code: 'race' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    const members = await Promise.all(buyers.map((buyer) => buyer.get('/v1/webstore/affiliate/me')));
    expect(members.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('makes one membership when one customer joins 5 times at once with different codes', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const codes = ['one1', 'two2', 'three3', 'four4', 'five5'];
    const results = await Promise.all(codes.map((ref_code) => buyer.post('/v1/webstore/affiliate/join', { ref_code })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const kept = results[0]!.body.ref_code;
    // The codes that lost were never claimed.
    for (const code of codes.filter((c) => c !== kept)) expect((await affiliateOf(store.domain, code)).panel.ref_code).toBe(code);
  });

  it('answers 401 CUSTOMER_UNAUTHENTICATED without a session, with an expired one, or with a token of another store', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const buyer = await buyerLogin(a.domain);
    const expired = await issueBuyerAccessToken(a.storeId, buyer.customer.id, -1);
    const join = (token: string | undefined, domain: string) =>
      call('POST', '/v1/webstore/affiliate/join', { token, json: { ref_code: 'sneaky' }, headers: { 'x-store-domain': domain } });
    for (const res of [await join(buyer.token, b.domain), await join(undefined, a.domain), await join(expired.token, a.domain)]) {
      expect(res.status).toBe(401);
      expect(firstError(res)).toMatchObject({ code: 'CUSTOMER_UNAUTHENTICATED', message: 'Invalid or expired session' });
    }
    expect((await buyer.get('/v1/webstore/affiliate/me')).status).toBe(404);
  });
});

describe('GET /v1/webstore/affiliate/me and /transactions of a non-affiliate', () => {
  it('answers 404 with a message only', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    expect(expectMessageOnly(await buyer.get('/v1/webstore/affiliate/me'), 404)).toBe('Affiliate not found');
    expect(expectMessageOnly(await buyer.get('/v1/webstore/affiliate/transactions'), 404)).toBe('Affiliate not found');
    expect(expectMessageOnly(await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX }), 404)).toBe('Affiliate not found');
    expect(expectMessageOnly(await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 10 }), 404)).toBe('Affiliate not found');
  });

  it('answers 401 CUSTOMER_UNAUTHENTICATED to the statement without a session or with an expired one', async () => {
    const store = await newStore();
    const { buyer } = await affiliateOf(store.domain);
    const expired = await issueBuyerAccessToken(store.storeId, buyer.customer.id, -1);
    for (const token of [undefined, expired.token]) {
      const res = await call('GET', '/v1/webstore/affiliate/transactions', { token, headers: { 'x-store-domain': store.domain } });
      expect(res.status).toBe(401);
      expect(firstError(res)).toMatchObject({ code: 'CUSTOMER_UNAUTHENTICATED', message: 'Invalid or expired session' });
    }
  });
});

describe('creditOrderCommission (called by order approval)', () => {
  it("credits the affiliate's percentage of the total, with the order's packages, once per order", async () => {
    const store = await newStore();
    await store.patch('/v1/app/store', { affiliate: { percent_commission: 15 } });
    const { buyer, ref } = await affiliateOf(store.domain, 'Promo_Ana');
    const credited = await creditCommission(store.storeId, 'promo_ana', 501, 19.99, PACKAGES);
    expect(credited).toEqual({
      id: expect.any(Number),
      operation: 'COMMISSION',
      amount: 3,
      message: null,
      order_id: 501,
      order_packages: PACKAGES,
      created_at: expect.stringMatching(ISO),
    });
    expect(await creditCommission(store.storeId, ref, 501, 19.99, PACKAGES)).toBeUndefined();
    const panel = (await buyer.get('/v1/webstore/affiliate/me')).body;
    expect(panel).toMatchObject({ balance: 3, stats: { total_sales: 1, total_amount: 19.99, d7_visits: 0 } });
    expect(panel.links[0]).toMatchObject({ sales: 1, revenue: 19.99 });
    const statement = await buyer.get('/v1/webstore/affiliate/transactions');
    expect(statement.body.data).toEqual([credited]);
  });

  it('credits once when the same order is credited 8 times at once', async () => {
    const store = await newStore();
    const { buyer, ref } = await affiliateOf(store.domain);
    const results = await Promise.all(Array.from({ length: 8 }, () => creditCommission(store.storeId, ref, 77, 100, PACKAGES)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toMatchObject({ balance: 10, stats: { total_sales: 1, total_amount: 100 } });
  });

  it('does nothing for a code no affiliate owns, or a code of another store', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const { ref } = await affiliateOf(a.domain);
    expect(await creditCommission(a.storeId, 'nobody-has-this', 1, 50, PACKAGES)).toBeUndefined();
    expect(await creditCommission(b.storeId, ref, 1, 50, PACKAGES)).toBeUndefined();
  });

  it('adds cents exactly', async () => {
    const store = await newStore();
    const { buyer, ref } = await affiliateOf(store.domain);
    for (const [order, total] of [
      [1, 1],
      [2, 2],
      [3, 1],
    ] as const)
      await fund(store.storeId, ref, order, total);
    // 0.1 + 0.2 + 0.1 in decimal, not 0.4000000000000001.
    expect((await buyer.get('/v1/webstore/affiliate/me')).body.balance).toBe(0.4);
  });
});

describe('GET /v1/webstore/affiliate/transactions', () => {
  it('pages 15 at a time, newest first, with the page meta', async () => {
    const store = await newStore();
    const { buyer, ref } = await affiliateOf(store.domain);
    for (let order = 1; order <= 17; order++) await fund(store.storeId, ref, order, order * 10);
    const first = await buyer.get('/v1/webstore/affiliate/transactions');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(15);
    expect(first.body.data.map((t: { order_id: number }) => t.order_id)).toEqual(Array.from({ length: 15 }, (_, i) => 17 - i));
    expect(first.body.meta).toEqual({
      total: 17,
      per_page: 15,
      current_page: 1,
      last_page: 2,
      first_page: 1,
      first_page_url: '/v1/webstore/affiliate/transactions?page=1',
      last_page_url: '/v1/webstore/affiliate/transactions?page=2',
      next_page_url: '/v1/webstore/affiliate/transactions?page=2',
      previous_page_url: null,
    });
    const second = await buyer.get('/v1/webstore/affiliate/transactions?page=2');
    expect(second.body.data.map((t: { order_id: number }) => t.order_id)).toEqual([2, 1]);
    expect(second.body.meta).toMatchObject({ current_page: 2, next_page_url: null, previous_page_url: '/v1/webstore/affiliate/transactions?page=1' });
    const past = await buyer.get('/v1/webstore/affiliate/transactions?page=9');
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toMatchObject({ total: 17, last_page: 2 });
  });

  it("shows only the caller's own movements", async () => {
    const store = await newStore();
    const one = await affiliateOf(store.domain);
    const two = await affiliateOf(store.domain);
    await fund(store.storeId, one.ref, 1, 10);
    expect((await two.buyer.get('/v1/webstore/affiliate/transactions')).body).toMatchObject({ data: [], meta: { total: 0, per_page: 15 } });
  });

  it('rejects a bad page (400 malformed, 422 out of range)', async () => {
    const store = await newStore();
    const { buyer } = await affiliateOf(store.domain);
    expect((await buyer.get('/v1/webstore/affiliate/transactions?page=x')).status).toBe(400);
    expect((await buyer.get('/v1/webstore/affiliate/transactions?page=0')).status).toBe(422);
  });
});

describe('PATCH /v1/webstore/affiliate/me', () => {
  it('saves the withdraw settings and answers the panel', async () => {
    const store = await newStore();
    const { buyer, panel } = await affiliateOf(store.domain);
    const res = await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...panel, withdraw_settings: PIX });
    const cpf = { full_name: 'Ana Souza', pix_key: '12345678909', pix_key_type: 'CPF', cpf_cnpj: '12345678909' };
    expect((await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: cpf })).body.withdraw_settings).toEqual(cpf);
  });

  it.each([
    ['no withdraw_settings', {}, 'withdraw_settings'],
    ['an unknown pix_key_type', { withdraw_settings: { ...PIX, pix_key_type: 'IBAN' } }, 'withdraw_settings.pix_key_type'],
    ['a pix_key unlike its type', { withdraw_settings: { ...PIX, pix_key_type: 'CPF' } }, 'withdraw_settings.pix_key'],
    ['a phone key with letters', { withdraw_settings: { ...PIX, pix_key_type: 'PHONE', pix_key: '+55 11 abc' } }, 'withdraw_settings.pix_key'],
    ['a bad cpf_cnpj', { withdraw_settings: { ...PIX, cpf_cnpj: '123' } }, 'withdraw_settings.cpf_cnpj'],
    ['no full_name', { withdraw_settings: { ...PIX, full_name: undefined } }, 'withdraw_settings.full_name'],
    ['an unknown setting', { withdraw_settings: { ...PIX, bank: 'x' } }, 'withdraw_settings.bank'],
    ['another field', { withdraw_settings: PIX, balance: 1000 }, 'balance'],
  ])('rejects %s with 422 and changes nothing', async (_case, body, field) => {
    const store = await newStore();
    const { buyer, panel } = await affiliateOf(store.domain);
    const res = await buyer.patch('/v1/webstore/affiliate/me', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field, code: 'VALIDATION_FAILED' });
    expect((await buyer.get('/v1/webstore/affiliate/me')).body).toEqual(panel);
  });
});

describe('POST /v1/webstore/affiliate/withdraw', () => {
  async function fundedAffiliate(balance: number, options: { minWithdraw?: number; settings?: boolean } = {}) {
    const store = await newStore();
    if (options.minWithdraw !== undefined) await store.patch('/v1/app/store', { affiliate: { min_withdraw: options.minWithdraw } });
    const { buyer, ref } = await affiliateOf(store.domain);
    await fund(store.storeId, ref, 1, balance * 10);
    if (options.settings !== false) await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX });
    return { store, buyer };
  }
  const balanceOf = async (buyer: Buyer) => (await buyer.get('/v1/webstore/affiliate/me')).body.balance;

  it('debits the balance and records a WITHDRAW_PENDING carrying the withdraw settings', async () => {
    const { buyer } = await fundedAffiliate(100);
    const res = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 40.5 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      operation: 'WITHDRAW_PENDING',
      amount: 40.5,
      message: null,
      order_id: null,
      withdraw_info: PIX,
      created_at: expect.stringMatching(ISO),
    });
    expect(await balanceOf(buyer)).toBe(59.5);
    const statement = (await buyer.get('/v1/webstore/affiliate/transactions')).body.data;
    expect(statement[0]).toEqual(res.body);
    expect(statement[1].operation).toBe('COMMISSION');
  });

  it('allows the whole balance, never more', async () => {
    const { buyer } = await fundedAffiliate(25);
    const over = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 25.01 });
    expect(over.status).toBe(422);
    expect(firstError(over)).toMatchObject({ code: 'INSUFFICIENT_BALANCE', field: 'amount' });
    expect((await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 25 })).status).toBe(200);
    expect(await balanceOf(buyer)).toBe(0);
  });

  it('never overdraws when 10 withdrawals race: 3 of 30 from 100 pass, 10 remains', async () => {
    const { buyer } = await fundedAffiliate(100);
    const results = await Promise.all(Array.from({ length: 10 }, () => buyer.post('/v1/webstore/affiliate/withdraw', { amount: 30 })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(7);
    for (const res of refused) expect(firstError(res).code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(buyer)).toBe(10);
    expect((await buyer.get('/v1/webstore/affiliate/transactions')).body.meta.total).toBe(4);
  });

  it('needs withdraw settings first (422), debiting nothing', async () => {
    const { buyer } = await fundedAffiliate(50, { settings: false });
    const res = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 10 });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ code: 'WITHDRAW_SETTINGS_REQUIRED', field: 'withdraw_settings' });
    expect(await balanceOf(buyer)).toBe(50);
  });

  it("needs at least the store's min_withdraw when the affiliate has none", async () => {
    const { buyer } = await fundedAffiliate(100, { minWithdraw: 20 });
    const below = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 19.99 });
    expect(below.status).toBe(422);
    expect(firstError(below)).toMatchObject({ code: 'BELOW_MIN_WITHDRAW', field: 'amount', message: 'amount must be at least 20' });
    expect(await balanceOf(buyer)).toBe(100);
    expect((await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 20 })).status).toBe(200);
  });

  it.each([
    ['zero', { amount: 0 }],
    ['negative', { amount: -5 }],
    ['with three decimals', { amount: 1.005 }],
    ['too large to store', { amount: 1e200 }],
    ['a string', { amount: '10' }],
    ['missing', {}],
    ['with an unknown field', { amount: 10, to: 'me' }],
  ])('rejects an amount %s (422), debiting nothing', async (_case, body) => {
    const { buyer } = await fundedAffiliate(50);
    const res = await buyer.post('/v1/webstore/affiliate/withdraw', body);
    expect(res.status).toBe(422);
    expect(firstError(res).code).toBe('VALIDATION_FAILED');
    expect(await balanceOf(buyer)).toBe(50);
  });
});

describe('DynamoDB calls per request (x-local-dynamodb-calls)', () => {
  const calls = dynamoDbCalls;

  it('join, panel, statement, settings and withdrawal', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const ref = uniqueRef();
    // auth BatchGet + BatchGet (store, affiliate, customer, ref sentinel) + id ADD + TransactWrite (affiliate + ref sentinel)
    expect(calls(await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref }))).toBe(4);
    // an existing affiliate: auth BatchGet + BatchGet
    expect(calls(await buyer.post('/v1/webstore/affiliate/join', { ref_code: ref }))).toBe(2);
    // a code in use: refused from the BatchGet, no id allocated and no transaction tried
    const other = await buyerLogin(store.domain);
    expect(calls(await other.post('/v1/webstore/affiliate/join', { ref_code: ref }))).toBe(2);
    // a code too short: refused before any read beyond the credential
    expect(calls(await other.post('/v1/webstore/affiliate/join', { ref_code: 'ab' }))).toBe(1);
    expect(calls(await buyer.get('/v1/webstore/affiliate/me'))).toBe(2);
    // auth BatchGet + one Query (membership and statement together)
    expect(calls(await buyer.get('/v1/webstore/affiliate/transactions'))).toBe(2);
    // auth BatchGet + UpdateItem and customer Get (in parallel)
    expect(calls(await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: PIX }))).toBe(3);
    await fund(store.storeId, ref, 1, 100);
    // auth BatchGet + BatchGet (affiliate, store, customer) + id ADD + TransactWrite (debit + line)
    expect(calls(await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 5 }))).toBe(4);
  });
});
