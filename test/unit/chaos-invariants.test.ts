import { describe, expect, it } from 'vitest';
import { checkInvariants, RULES, type Answer, type Snapshot } from '../chaos/invariants.ts';

/**
 * The invariants of `npm run chaos` (issue 28) each fail when their rule breaks: a consistent
 * store passes them all, and each break below is caught by its own rule.
 */
const ok = (body: Record<string, unknown>, replayed = false): Answer => ({ status: 200, envelope: false, replayed, body });
const unavailable: Answer = { status: 503, code: 'UNAVAILABLE', retryAfter: '1', envelope: true, replayed: false, body: { errors: [{ code: 'UNAVAILABLE' }] } };
const sent = (kind: 'order' | 'checkout' | 'approve' | 'refund' | 'tag' | 'withdraw', key: string, path = '/v1/app/order') => ({ kind, key, path, body: {}, headers: {} });
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 26, 12, 0, seconds)).toISOString();

/**
 * Four orders of package 1 (stock 10, limited per customer; one APPROVED-stage and one
 * REFUNDED-stage command) and package 2: #1 APPROVED with the coupon and the affiliate's code
 * (its first answer a 503, its retry the order), #2 approved then REFUNDED, #3 PENDING with the
 * coupon, #4 CANCELED; two leases, each acked; a tag (its first answer a 503, its retry the tag)
 * and a withdrawal of 0.5 from the affiliate's balance.
 */
function consistent(): Snapshot {
  const order = (id: number, status: string, extra: Partial<Snapshot['orders'][number]>) => ({
    id,
    status,
    coupon: null,
    ref_code: null,
    client_email: 'Ana@example.com',
    client_identifier: 'ana',
    total: 10,
    packages: [{ package_id: 1, quantity: 1 }],
    ...extra,
  });
  return {
    exchanges: [
      { sent: sent('order', 'k1'), first: unavailable, retry: ok({ id: 1 }), replay: ok({ id: 1 }, true) },
      { sent: sent('order', 'k2'), first: ok({ id: 2 }), replay: ok({ id: 2 }, true) },
      { sent: sent('checkout', 'k3', '/v1/webstore/checkout'), first: ok({ id: 3 }), replay: ok({ id: 3 }, true) },
      { sent: sent('order', 'k4'), first: ok({ id: 4 }), replay: ok({ id: 4 }, true) },
      { sent: sent('approve', 'k5', '/v1/app/order/1/approve'), first: ok({ id: 1 }), replay: ok({ id: 1 }, true) },
      { sent: sent('refund', 'k6', '/v1/app/order/2/refund'), first: ok({ id: 2 }), replay: ok({ id: 2 }, true) },
      { sent: sent('tag', 'k7', '/v1/app/tag'), first: unavailable, retry: ok({ id: 5 }), replay: ok({ id: 5 }, true) },
      { sent: sent('withdraw', 'k8', '/v1/webstore/affiliate/withdraw'), first: ok({ id: 9 }), replay: ok({ id: 9 }, true) },
    ],
    orders: [
      order(1, 'APPROVED', { coupon: 'CHAOS', ref_code: 'ref1', total: 20, packages: [{ package_id: 1, quantity: 2 }] }),
      order(2, 'REFUNDED', { ref_code: 'REF1', client_email: 'bo@example.com', client_identifier: 'bo' }),
      order(3, 'PENDING', { coupon: 'CHAOS', total: 9 }),
      order(4, 'CANCELED', { coupon: 'CHAOS', packages: [{ package_id: 2, quantity: 1 }] }),
    ],
    listTotals: { all: 4, byStatus: { PENDING: 1, APPROVED: 1, CANCELED: 1, REFUNDED: 1, CHARGEBACK: 0 } },
    packages: [
      { id: 1, initialStock: 10, stock: 7, limited: true, templates: { APPROVED: 1, REFUNDED: 1 } },
      { id: 2, initialStock: 10, stock: 10, limited: false, templates: { APPROVED: 1 } },
    ],
    coupon: { code: 'CHAOS', uses: 2 },
    counters: { customerUnits: { '1#ana@example.com': 3, '1#bo@example.com': 0 }, couponClientUses: { 'CLIENT_EMAIL#ana@example.com': 2, 'CLIENT_IDENTIFIER#ana': 2 } },
    affiliate: {
      refCode: 'ref1',
      percent: 10,
      balance: 1.5,
      transactions: [
        { operation: 'COMMISSION_REVERSED', amount: -1, order_id: 2 },
        { operation: 'COMMISSION', amount: 1, order_id: 2 },
        { operation: 'COMMISSION', amount: 2, order_id: 1 },
        { operation: 'WITHDRAW_PENDING', amount: 0.5, order_id: null },
      ],
    },
    commands: [
      { id: 11, order_id: 1, stage: 'APPROVED', status: 'DONE' },
      { id: 21, order_id: 2, stage: 'APPROVED', status: 'CANCELED' },
      { id: 22, order_id: 2, stage: 'REFUNDED', status: 'DONE' },
    ],
    claims: [
      { server: 1, lease_id: 'L1', expires_at: at(10), lease_seconds: 10, commands: [{ id: 11, attempt: 1 }] },
      { server: 2, lease_id: 'L2', expires_at: at(20), lease_seconds: 10, commands: [{ id: 22, attempt: 1 }] },
    ],
    acks: [
      { server: 1, lease_id: 'L1', accepted: [11] },
      { server: 2, lease_id: 'L2', accepted: [22] },
      // An ack repeated after its answer was lost lists the id again: still one delivery.
      { server: 2, lease_id: 'L2', accepted: [22] },
    ],
    created: { tag: [5], package: [], chat: [], withdraw: [9] },
  };
}

const broken = (snapshot: Snapshot) =>
  Object.fromEntries(
    checkInvariants(snapshot)
      .filter((result) => result.problems.length > 0)
      .map((result) => [result.rule, result.problems]),
  );

function breaking(change: (s: Snapshot) => void): Record<string, string[]> {
  const snapshot = consistent();
  change(snapshot);
  return broken(snapshot);
}

describe('chaos invariants', () => {
  it('a consistent store passes every rule', () => {
    expect(broken(consistent())).toEqual({});
    expect(Object.keys(RULES)).toHaveLength(13);
  });

  it('an answer outside the envelope (a 502) or a 503 without Retry-After breaks the answers rule', () => {
    expect(Object.keys(breaking((s) => (s.exchanges[0]!.first = { status: 502, envelope: false, replayed: false, body: undefined })))).toEqual([
      'every answer 2xx, 4xx in the envelope or 503 with Retry-After',
    ]);
    expect(Object.keys(breaking((s) => (s.exchanges[0]!.first = { ...unavailable, retryAfter: undefined })))).toEqual([
      'every answer 2xx, 4xx in the envelope or 503 with Retry-After',
    ]);
  });

  it('a 409 for a fresh key, or a 5xx, left after the retry breaks "no request left"', () => {
    const inUse: Answer = { status: 409, code: 'IDEMPOTENCY_KEY_IN_USE', retryAfter: '1', envelope: true, replayed: false, body: undefined };
    const result = breaking((s) => {
      s.exchanges[4]!.retry = inUse;
      s.exchanges[4]!.replay = undefined;
    });
    expect(result['no request left failed or refused 409 after the retry']).toEqual(['approve k5: first 200, after the retry 409 IDEMPOTENCY_KEY_IN_USE']);
    expect(breaking((s) => (s.exchanges[0]!.retry = unavailable))['no request left failed or refused 409 after the retry']).toEqual([
      'order k1: first 503 UNAVAILABLE, after the retry 503 UNAVAILABLE',
    ]);
  });

  it('an order placed twice for one request (its retry ran again) breaks "exists once"', () => {
    const result = breaking((s) => {
      s.orders.push({ ...s.orders[2]!, id: 5 });
      s.listTotals.all = 5;
      s.listTotals.byStatus.PENDING = 2;
      s.packages[0]!.stock = 6;
      s.coupon.uses = 3;
      s.counters.customerUnits['1#ana@example.com'] = 4;
      s.counters.couponClientUses = { 'CLIENT_EMAIL#ana@example.com': 3, 'CLIENT_IDENTIFIER#ana': 3 };
    });
    expect(result).toEqual({ 'every 2xx order exists exactly once, no order doubled': ['order 5: no request was answered with it (doubled or orphaned)'] });
    expect(breaking((s) => (s.exchanges[3]!.first = ok({ id: 1 })))['every 2xx order exists exactly once, no order doubled']).toContain('order 1 answered to two requests');
    // A key left blocked whose last send ran the request again: two orders for one request.
    const again = breaking((s) => {
      s.orders.push({ ...s.orders[2]!, id: 5 });
      s.exchanges[2]!.replay = ok({ id: 5 });
    });
    expect(again['every 2xx order exists exactly once, no order doubled']).toEqual(['checkout k3 placed orders 3 and 5']);
    expect(again['idempotency keys never left blocked']).toEqual(['checkout k3: answered 200, then 200 (run again)']);
  });

  it('stock not equal to the initial stock less the units held breaks the stock rule', () => {
    // A refund that gave its unit back twice.
    expect(breaking((s) => (s.packages[0]!.stock = 8))).toEqual({ 'stock = initial - units held': ['package 1: stock 8, expected 10 - 3 held'] });
  });

  it('a coupon or limit counter that differs from the orders holding it breaks the counters rule', () => {
    expect(breaking((s) => (s.coupon.uses = 3))).toEqual({ 'coupon and limit counters = orders holding them': ['coupon CHAOS: uses 3, orders holding it 2'] });
    expect(breaking((s) => (s.counters.customerUnits['1#bo@example.com'] = 1))).toEqual({
      'coupon and limit counters = orders holding them': ['per-customer units 1#bo@example.com: counter 1, orders holding 0'],
    });
    expect(breaking((s) => delete s.counters.couponClientUses['CLIENT_IDENTIFIER#ana'])).toEqual({
      'coupon and limit counters = orders holding them': ['coupon uses of CLIENT_IDENTIFIER#ana: counter 0, orders holding 2'],
    });
  });

  it('a list total that differs from the orders breaks the list totals rule', () => {
    expect(breaking((s) => (s.listTotals.byStatus.APPROVED = 2))).toEqual({ 'order list totals = the orders': ['order list total for APPROVED 2, orders 1'] });
    expect(breaking((s) => (s.listTotals.all = 3))).toEqual({ 'order list totals = the orders': ['order list total 3, orders 4'] });
  });

  it('a second set of commands for an approval, or commands for an order never approved, breaks the commands rule', () => {
    expect(breaking((s) => s.commands.push({ id: 12, order_id: 1, stage: 'APPROVED', status: 'CANCELED' }))['commands queued once per approved order']).toEqual([
      'order 1 (APPROVED): 2 APPROVED-stage commands, expected 1',
    ]);
    expect(breaking((s) => s.commands.push({ id: 31, order_id: 3, stage: 'APPROVED', status: 'CANCELED' }))).toEqual({
      'commands queued once per approved order': ['order 3 (PENDING): 1 APPROVED-stage commands, expected 0'],
    });
  });

  it('a commission credited twice, of the wrong amount, or for an order never approved breaks the commission rule', () => {
    const rule = 'a commission once per approved referred order';
    expect(
      breaking((s) => {
        s.affiliate.transactions.push({ operation: 'COMMISSION', amount: 2, order_id: 1 });
        s.affiliate.balance = 3.5;
      }),
    ).toEqual({ [rule]: ['order 1: 2 commissions, expected 1'] });
    expect(breaking((s) => (s.affiliate.transactions[2]!.amount = 2.5))[rule]).toContain('order 1: commission 2.5, expected 2');
    expect(breaking((s) => s.affiliate.transactions.push({ operation: 'COMMISSION', amount: 0, order_id: 3 }))[rule]).toEqual([
      'commission for order 3 (PENDING), which was not an approved referred order',
    ]);
    expect(breaking((s) => (s.affiliate.balance = 3))[rule]).toEqual(['affiliate balance 3, its transactions sum to 1.5']);
  });

  it('a refund that queues its commands twice, reverses the commission twice or leaves a command running breaks "refunds once"', () => {
    expect(breaking((s) => s.commands.push({ id: 23, order_id: 2, stage: 'REFUNDED', status: 'DONE' }))['refunds once']).toEqual([
      'order 2 (REFUNDED): 2 REFUNDED-stage commands, expected 1',
    ]);
    expect(
      breaking((s) => {
        s.affiliate.transactions.push({ operation: 'COMMISSION_REVERSED', amount: -1, order_id: 2 });
        s.affiliate.balance = 0.5;
      }),
    ).toEqual({ 'refunds once': ['order 2 (REFUNDED): 2 commission reversals, expected 1'] });
    expect(breaking((s) => (s.commands[1]!.status = 'PENDING'))['refunds once']).toEqual(['order 2 refunded with 1 APPROVED-stage commands still PENDING']);
  });

  it('one command under two live leases at once breaks the lease rule', () => {
    const result = breaking((s) => s.claims.push({ server: 2, lease_id: 'L3', expires_at: at(15), lease_seconds: 10, commands: [{ id: 11, attempt: 2 }] }));
    expect(result['each command under at most one lease at a time']).toEqual(['command 11: leases L1 and L3 overlap']);
    // After the first lease lapsed, a second claim is fine.
    expect(breaking((s) => s.claims.push({ server: 2, lease_id: 'L3', expires_at: at(21), lease_seconds: 10, commands: [{ id: 11, attempt: 2 }] }))).toEqual({});
  });

  it('a command acked DONE under two leases, or never delivered, breaks "delivered once"', () => {
    const rule = 'each command delivered once, none lost';
    expect(breaking((s) => s.acks.push({ server: 2, lease_id: 'L3', accepted: [11] }))).toEqual({ [rule]: ['command 11: DONE accepted under 2 leases'] });
    expect(
      breaking((s) => {
        s.commands[0]!.status = 'PENDING';
        s.acks.shift();
      }),
    ).toEqual({ [rule]: ['command 11 of order 1: PENDING, never delivered'] });
  });

  it('a tag created twice for one request, or one answered and not stored, breaks "every other creation exists once"', () => {
    const rule = 'every other creation exists once: tags, packages, chat messages, withdrawals';
    expect(breaking((s) => s.created!.tag.push(6))).toEqual({ [rule]: ['tag 6: no request was answered with it (created twice, or its answer lost)'] });
    expect(breaking((s) => (s.created!.withdraw = []))).toEqual({ [rule]: ['withdraw 9 (k8): answered, not in the store'] });
    expect(breaking((s) => (s.exchanges[6]!.replay = ok({ id: 6 }, true)))[rule]).toContain('tag k7 answered with 5 and 6');
  });

  it('a key that still answers 409, or runs again instead of replaying, breaks "keys never left blocked"', () => {
    const rule = 'idempotency keys never left blocked';
    expect(breaking((s) => (s.exchanges[1]!.replay = { status: 409, code: 'IDEMPOTENCY_KEY_IN_USE', retryAfter: '1', envelope: true, replayed: false, body: undefined }))).toEqual({
      [rule]: ['order k2: key still answers 409 IDEMPOTENCY_KEY_IN_USE'],
    });
    expect(breaking((s) => (s.exchanges[4]!.replay = ok({ id: 1 })))).toEqual({ [rule]: ['approve k5: answered 200, then 200 (run again)'] });
    // A business 409 (approving a refunded order) is an answer like any other: kept and replayed.
    const conflict: Answer = { status: 409, code: 'CONFLICT', envelope: true, replayed: false, body: undefined };
    expect(
      breaking((s) => {
        s.exchanges[4]!.first = conflict;
        s.exchanges[4]!.retry = conflict;
        s.exchanges[4]!.replay = { ...conflict, replayed: true };
      }),
    ).toEqual({});
  });
});
