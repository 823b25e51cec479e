/**
 * The invariants `npm run chaos` checks once faults are off and every failed POST was sent again
 * (issue 28), as pure functions of what the run saw: the answers of the workload and the store
 * as read back afterwards. Each rule answers its own problems, so a break names its rule; the
 * unit tests (test/unit/chaos-invariants.test.ts) break each rule on a snapshot and see it fail.
 */

export interface Answer {
  status: number | null;
  code?: string;
  retryAfter?: string;
  envelope: boolean;
  replayed: boolean;
  body: Record<string, unknown> | undefined;
  /** How long it took to come (or to be given up on). */
  ms?: number;
}

export type RequestKind = 'order' | 'checkout' | 'approve' | 'cancel' | 'refund' | CreationKind;
/** The other POSTs that create something, each recording it on its key (lib/db/idempotency.ts `createOnce`). */
export const CREATION_KINDS = ['tag', 'package', 'chat', 'withdraw'] as const;
export type CreationKind = (typeof CREATION_KINDS)[number];

export interface Sent {
  kind: RequestKind;
  path: string;
  body: unknown;
  headers: Record<string, string>;
  key: string;
}

/** One POST of the workload: its first answer, the careful client's one retry, and the key sent once more at the end. */
export interface Exchange {
  sent: Sent;
  first: Answer;
  retry?: Answer;
  /** The same key and body once more, after everything: a key left blocked answers 409 here. */
  replay?: Answer;
}

export interface OrderSeen {
  id: number;
  status: string;
  coupon: string | null;
  ref_code: string | null;
  client_email: string;
  client_identifier: string;
  total: number;
  packages: { package_id: number; quantity: number }[];
}

export interface PackageSeen {
  id: number;
  initialStock: number;
  stock: number;
  /** It has a `per_customer_limit`, so its units are counted per customer. */
  limited: boolean;
  /** Command templates per stage (APPROVED, REFUNDED, ...), each one command per order line. */
  templates: Record<string, number>;
}

export interface CommandSeen {
  id: number;
  order_id: number;
  stage: string;
  status: string;
}

/** A claim answer a game server received: its lease and what it handed out. */
export interface ClaimSeen {
  server: number;
  lease_id: string;
  expires_at: string;
  lease_seconds: number;
  commands: { id: number; attempt: number }[];
}

/** An ack (all DONE) a game server got an answer to. */
export interface AckSeen {
  server: number;
  lease_id: string;
  accepted: number[];
}

export interface Snapshot {
  /** Seconds each phase of the run took (setup, workload, retries, drain, replay, read back). */
  phases?: Record<string, number>;
  exchanges: Exchange[];
  orders: OrderSeen[];
  /** Page mode's `meta.total` of the order list, unfiltered and per status. */
  listTotals: { all: number; byStatus: Record<string, number> };
  packages: PackageSeen[];
  coupon: { code: string; uses: number };
  /** Stored counters: units per `<package>#<lower email>`, coupon uses per `<CLIENT_EMAIL|CLIENT_IDENTIFIER>#<lower value>`. */
  counters: { customerUnits: Record<string, number>; couponClientUses: Record<string, number> };
  affiliate: { refCode: string; percent: number; balance: number; transactions: { operation: string; amount: number; order_id: number | null }[] };
  commands: CommandSeen[];
  claims: ClaimSeen[];
  /** Claims answered 5xx or not at all: their commands may have been leased, and wait for the lease to lapse. */
  claimsFailed?: number;
  acks: AckSeen[];
  /** What the workload's other creations left in the store, read back: the ids of each kind (setup's own left out). */
  created?: Record<CreationKind, (number | string)[]>;
}

export interface RuleResult {
  rule: string;
  problems: string[];
}

/** Statuses in which an order holds its stock, limit units and coupon use. */
const HOLDING = new Set(['PENDING', 'APPROVED']);
/** Statuses an order reaches only through an approval. */
const WAS_APPROVED = new Set(['APPROVED', 'REFUNDED', 'CHARGEBACK']);
export const ORDER_STATUSES = ['PENDING', 'APPROVED', 'CANCELED', 'REFUNDED', 'CHARGEBACK'] as const;

export const finalAnswer = (exchange: Exchange): Answer => exchange.retry ?? exchange.first;
const createsOrder = (exchange: Exchange) => exchange.sent.kind === 'order' || exchange.sent.kind === 'checkout';
const cents = (amount: number) => Math.round(amount * 100);
const tally = (into: Map<string, number>, key: string, by: number) => into.set(key, (into.get(key) ?? 0) + by);

/** 2xx, a 4xx in the envelope, or a 503 in the envelope with Retry-After: what a client may be answered. */
export function wellFormed(answer: Answer): boolean {
  const { status } = answer;
  if (status === null) return false;
  if (status >= 200 && status < 300) return true;
  if (status >= 400 && status < 500) return answer.envelope;
  return status === 503 && answer.envelope && Number(answer.retryAfter) >= 1;
}

function answersWellFormed(s: Snapshot): string[] {
  const answers = s.exchanges.flatMap((exchange) => [exchange.first, exchange.retry, exchange.replay].filter((answer) => answer !== undefined));
  const malformed = answers.filter((answer) => !wellFormed(answer));
  return malformed.length === 0 ? [] : [`${malformed.length} answers other than 2xx, 4xx in the envelope or 503 with Retry-After: ${JSON.stringify(malformed.slice(0, 3))}`];
}

export const describeAnswer = (answer: Answer) => `${answer.status ?? 'no answer'}${answer.code ? ` ${answer.code}` : ''}${answer.ms === undefined ? '' : ` in ${answer.ms} ms`}`;

function nothingLeftUnanswered(s: Snapshot): string[] {
  const problems: string[] = [];
  for (const exchange of s.exchanges) {
    const answer = finalAnswer(exchange);
    const failed = answer.status === null || answer.status >= 500;
    // Every key is fresh: a 409 after the retry is a key nobody else used, or an answer lost for good.
    const refused = answer.status === 409 && answer.code?.startsWith('IDEMPOTENCY_');
    if (failed || refused) problems.push(`${exchange.sent.kind} ${exchange.sent.key}: first ${describeAnswer(exchange.first)}, after the retry ${describeAnswer(answer)}`);
  }
  return problems;
}

/** The orders a request was answered with: its final answer's, and its replay's when that ran it again (a key that was left blocked). */
export function ordersAnswered(exchange: Exchange): number[] {
  if (!createsOrder(exchange)) return [];
  const ids = [finalAnswer(exchange), exchange.replay].filter((answer) => answer?.status === 200).map((answer) => answer!.body?.id as number);
  return [...new Set(ids)];
}

/** Orders beyond one per request: a request answered with two, an order answered to two requests, an order no request was answered with. */
export function doubledOrders(s: Snapshot): string[] {
  const problems: string[] = [];
  const requestOf = new Map<number, string>();
  for (const exchange of s.exchanges) {
    const ids = ordersAnswered(exchange);
    if (ids.length > 1) problems.push(`${exchange.sent.kind} ${exchange.sent.key} placed orders ${ids.join(' and ')}`);
    for (const id of ids) {
      if (requestOf.has(id)) problems.push(`order ${id} answered to two requests`);
      requestOf.set(id, exchange.sent.key);
    }
  }
  for (const order of s.orders.filter((candidate) => !requestOf.has(candidate.id))) problems.push(`order ${order.id}: no request was answered with it (doubled or orphaned)`);
  return problems;
}

function ordersExistOnce(s: Snapshot): string[] {
  const existing = new Set(s.orders.map((order) => order.id));
  const absent = s.exchanges.flatMap(ordersAnswered).filter((id) => !existing.has(id));
  return [...doubledOrders(s), ...absent.map((id) => `order ${id} answered 2xx but absent`)];
}

function stockEqualsUnitsHeld(s: Snapshot): string[] {
  const held = new Map<string, number>();
  for (const order of s.orders.filter((candidate) => HOLDING.has(candidate.status))) {
    for (const line of order.packages) tally(held, String(line.package_id), line.quantity);
  }
  return s.packages
    .filter((pkg) => pkg.stock !== pkg.initialStock - (held.get(String(pkg.id)) ?? 0))
    .map((pkg) => `package ${pkg.id}: stock ${pkg.stock}, expected ${pkg.initialStock} - ${held.get(String(pkg.id)) ?? 0} held`);
}

function countersEqualOrdersHolding(s: Snapshot): string[] {
  const problems: string[] = [];
  const holding = s.orders.filter((order) => HOLDING.has(order.status));
  const withCoupon = holding.filter((order) => order.coupon !== null);
  if (s.coupon.uses !== withCoupon.length) problems.push(`coupon ${s.coupon.code}: uses ${s.coupon.uses}, orders holding it ${withCoupon.length}`);
  const limited = new Set(s.packages.filter((pkg) => pkg.limited).map((pkg) => pkg.id));
  const units = new Map<string, number>();
  for (const order of holding) {
    for (const line of order.packages.filter((candidate) => limited.has(candidate.package_id))) {
      tally(units, `${line.package_id}#${order.client_email.toLowerCase()}`, line.quantity);
    }
  }
  const clientUses = new Map<string, number>();
  for (const order of withCoupon) {
    tally(clientUses, `CLIENT_EMAIL#${order.client_email.toLowerCase()}`, 1);
    tally(clientUses, `CLIENT_IDENTIFIER#${order.client_identifier.toLowerCase()}`, 1);
  }
  const compare = (what: string, stored: Record<string, number>, expected: Map<string, number>) => {
    for (const key of new Set([...Object.keys(stored), ...expected.keys()])) {
      if ((stored[key] ?? 0) !== (expected.get(key) ?? 0)) problems.push(`${what} ${key}: counter ${stored[key] ?? 0}, orders holding ${expected.get(key) ?? 0}`);
    }
  };
  compare('per-customer units', s.counters.customerUnits, units);
  compare('coupon uses of', s.counters.couponClientUses, clientUses);
  return problems;
}

function listTotalsEqualOrders(s: Snapshot): string[] {
  const problems: string[] = [];
  if (s.listTotals.all !== s.orders.length) problems.push(`order list total ${s.listTotals.all}, orders ${s.orders.length}`);
  for (const status of ORDER_STATUSES) {
    const real = s.orders.filter((order) => order.status === status).length;
    const total = s.listTotals.byStatus[status] ?? 0;
    if (total !== real) problems.push(`order list total for ${status} ${total}, orders ${real}`);
  }
  return problems;
}

/** Commands of `stage` an order should hold: one per template of that stage per line. */
function expectedCommands(s: Snapshot, order: OrderSeen, stage: string): number {
  const templates = new Map(s.packages.map((pkg) => [pkg.id, pkg.templates[stage] ?? 0]));
  return order.packages.reduce((sum, line) => sum + (templates.get(line.package_id) ?? 0), 0);
}

function commandsOfStage(s: Snapshot) {
  const byOrder = new Map<string, CommandSeen[]>();
  for (const command of s.commands) {
    const key = `${command.order_id}#${command.stage}`;
    byOrder.set(key, [...(byOrder.get(key) ?? []), command]);
  }
  return (order: OrderSeen, stage: string) => byOrder.get(`${order.id}#${stage}`) ?? [];
}

function commandsQueuedOncePerApproval(s: Snapshot): string[] {
  const of = commandsOfStage(s);
  const problems: string[] = [];
  for (const order of s.orders) {
    const expected = WAS_APPROVED.has(order.status) ? expectedCommands(s, order, 'APPROVED') : 0;
    const queued = of(order, 'APPROVED').length;
    if (queued !== expected) problems.push(`order ${order.id} (${order.status}): ${queued} APPROVED-stage commands, expected ${expected}`);
  }
  return problems;
}

function commissionOncePerApprovedReferral(s: Snapshot): string[] {
  const problems: string[] = [];
  const { affiliate } = s;
  const credits = new Map<number, number[]>();
  for (const entry of affiliate.transactions.filter((transaction) => transaction.operation === 'COMMISSION')) {
    credits.set(entry.order_id ?? -1, [...(credits.get(entry.order_id ?? -1) ?? []), entry.amount]);
  }
  const byId = new Map(s.orders.map((order) => [order.id, order]));
  for (const orderId of credits.keys()) {
    const order = byId.get(orderId);
    if (!order || order.ref_code?.toLowerCase() !== affiliate.refCode.toLowerCase() || !WAS_APPROVED.has(order.status)) {
      problems.push(`commission for order ${orderId} (${order?.status ?? 'absent'}), which was not an approved referred order`);
    }
  }
  for (const order of s.orders.filter((candidate) => candidate.ref_code !== null && WAS_APPROVED.has(candidate.status))) {
    const amounts = credits.get(order.id) ?? [];
    const expected = Math.round(order.total * affiliate.percent) / 100;
    if (amounts.length !== 1) problems.push(`order ${order.id}: ${amounts.length} commissions, expected 1`);
    else if (cents(amounts[0]!) !== cents(expected)) problems.push(`order ${order.id}: commission ${amounts[0]}, expected ${expected}`);
  }
  // A withdrawal's line shows the amount it took (rejected: given back, so it counts for nothing).
  const debits = new Set(['WITHDRAW_PENDING', 'WITHDRAW_PAID']);
  const sum = affiliate.transactions.reduce((total, transaction) => total + (debits.has(transaction.operation) ? -1 : 1) * cents(transaction.amount), 0);
  if (sum !== cents(affiliate.balance)) problems.push(`affiliate balance ${affiliate.balance}, its transactions sum to ${sum / 100}`);
  return problems;
}

function refundsOnce(s: Snapshot): string[] {
  const of = commandsOfStage(s);
  const problems: string[] = [];
  const reversals = new Map<string, number>();
  for (const entry of s.affiliate.transactions.filter((transaction) => transaction.operation === 'COMMISSION_REVERSED')) tally(reversals, String(entry.order_id), 1);
  for (const order of s.orders) {
    const refunded = order.status === 'REFUNDED';
    const queued = of(order, 'REFUNDED').length;
    const expected = refunded ? expectedCommands(s, order, 'REFUNDED') : 0;
    if (queued !== expected) problems.push(`order ${order.id} (${order.status}): ${queued} REFUNDED-stage commands, expected ${expected}`);
    const reversed = reversals.get(String(order.id)) ?? 0;
    const owed = refunded && order.ref_code !== null ? 1 : 0;
    if (reversed !== owed) problems.push(`order ${order.id} (${order.status}): ${reversed} commission reversals, expected ${owed}`);
    if (refunded) {
      const live = of(order, 'APPROVED').filter((command) => command.status !== 'DONE' && command.status !== 'CANCELED');
      if (live.length > 0) problems.push(`order ${order.id} refunded with ${live.length} APPROVED-stage commands still ${live[0]!.status}`);
    }
  }
  return problems;
}

/** Leases seen by the servers that overlap on one command (a lease runs `lease_seconds` up to `expires_at`, both the server's clock). */
function oneLeaseAtATime(s: Snapshot): string[] {
  const problems: string[] = [];
  const leases = new Map<number, { start: number; end: number; lease: string; attempt: number }[]>();
  for (const claim of s.claims) {
    const end = Date.parse(claim.expires_at);
    for (const command of claim.commands) {
      leases.set(command.id, [...(leases.get(command.id) ?? []), { start: end - claim.lease_seconds * 1000, end, lease: claim.lease_id, attempt: command.attempt }]);
    }
  }
  for (const [commandId, list] of leases) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) {
      const [before, after] = [list[i - 1]!, list[i]!];
      if (after.start < before.end) problems.push(`command ${commandId}: leases ${before.lease} and ${after.lease} overlap`);
      if (after.attempt <= before.attempt) problems.push(`command ${commandId}: attempt ${after.attempt} after attempt ${before.attempt}`);
    }
  }
  return problems;
}

function deliveredOnce(s: Snapshot): string[] {
  const problems: string[] = [];
  const doneUnder = new Map<number, Set<string>>();
  for (const ack of s.acks) for (const id of ack.accepted) doneUnder.set(id, (doneUnder.get(id) ?? new Set()).add(ack.lease_id));
  for (const [id, leases] of doneUnder) if (leases.size > 1) problems.push(`command ${id}: DONE accepted under ${leases.size} leases`);
  const statusOf = new Map(s.orders.map((order) => [order.id, order.status]));
  for (const command of s.commands) {
    // Nothing lost: once the servers drained the queue, every command an order still wants has run.
    const wanted =
      (command.stage === 'APPROVED' && statusOf.get(command.order_id) === 'APPROVED') || (command.stage === 'REFUNDED' && statusOf.get(command.order_id) === 'REFUNDED');
    if (wanted && command.status !== 'DONE') problems.push(`command ${command.id} of order ${command.order_id}: ${command.status}, never delivered`);
    if (command.status === 'DONE' && !doneUnder.has(command.id)) problems.push(`command ${command.id}: DONE without an ack the servers were answered`);
  }
  return problems;
}

function keysNeverLeftBlocked(s: Snapshot): string[] {
  const problems: string[] = [];
  for (const exchange of s.exchanges) {
    const { replay } = exchange;
    const final = finalAnswer(exchange);
    if (!replay) continue;
    if (replay.status === 409 && replay.code?.startsWith('IDEMPOTENCY_')) problems.push(`${exchange.sent.kind} ${exchange.sent.key}: key still answers 409 ${replay.code ?? ''}`);
    else if (final.status !== null && final.status < 500 && (!replay.replayed || replay.status !== final.status)) {
      problems.push(`${exchange.sent.kind} ${exchange.sent.key}: answered ${final.status}, then ${replay.status}${replay.replayed ? ' (replayed)' : ' (run again)'}`);
    }
  }
  return problems;
}

/**
 * The other creations (tags, packages, chat messages, withdrawals): each request answered 2xx
 * with one thing no other request got, and the store holding exactly the things answered: one
 * the store holds that no request was answered with was created twice (or its answer lost).
 */
function creationsExistOnce(s: Snapshot): string[] {
  if (!s.created) return [];
  const problems: string[] = [];
  for (const kind of CREATION_KINDS) {
    const answeredTo = new Map<string, string>();
    for (const exchange of s.exchanges.filter((candidate) => candidate.sent.kind === kind)) {
      const ids = [finalAnswer(exchange), exchange.replay].filter((answer) => answer?.status === 200).map((answer) => String(answer!.body?.id));
      if (new Set(ids).size > 1) problems.push(`${kind} ${exchange.sent.key} answered with ${[...new Set(ids)].join(' and ')}`);
      const id = ids[0];
      if (id === undefined) continue;
      if (answeredTo.has(id)) problems.push(`${kind} ${id} answered to two requests`);
      answeredTo.set(id, exchange.sent.key);
    }
    const held = new Set(s.created[kind].map(String));
    for (const id of held) if (!answeredTo.has(id)) problems.push(`${kind} ${id}: no request was answered with it (created twice, or its answer lost)`);
    for (const [id, key] of answeredTo) if (!held.has(id)) problems.push(`${kind} ${id} (${key}): answered, not in the store`);
  }
  return problems;
}

export const RULES: Record<string, (s: Snapshot) => string[]> = {
  'every answer 2xx, 4xx in the envelope or 503 with Retry-After': answersWellFormed,
  'no request left failed or refused 409 after the retry': nothingLeftUnanswered,
  'every 2xx order exists exactly once, no order doubled': ordersExistOnce,
  'every other creation exists once: tags, packages, chat messages, withdrawals': creationsExistOnce,
  'stock = initial - units held': stockEqualsUnitsHeld,
  'coupon and limit counters = orders holding them': countersEqualOrdersHolding,
  'order list totals = the orders': listTotalsEqualOrders,
  'commands queued once per approved order': commandsQueuedOncePerApproval,
  'a commission once per approved referred order': commissionOncePerApprovedReferral,
  'refunds once': refundsOnce,
  'each command under at most one lease at a time': oneLeaseAtATime,
  'each command delivered once, none lost': deliveredOnce,
  'idempotency keys never left blocked': keysNeverLeftBlocked,
};

export const checkInvariants = (s: Snapshot): RuleResult[] => Object.entries(RULES).map(([rule, check]) => ({ rule, problems: check(s) }));
