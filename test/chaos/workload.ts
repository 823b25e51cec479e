import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AckSeen, Answer, ClaimSeen, CommandSeen, Exchange, OrderSeen, PackageSeen, Sent, Snapshot } from './invariants.ts';
import { CREATION_KINDS, finalAnswer, ORDER_STATUSES, type CreationKind } from './invariants.ts';
import { seededRandom, type ChaosProxy } from './proxy.ts';

/**
 * A busy store's day for `npm run chaos` (issue 28), against a local stack whose DynamoDB sits
 * behind the fault proxy: set up with faults off, then with faults on operator orders and guest
 * checkouts (stock, a per-customer limit, a coupon of limited uses, half of them referred by an
 * affiliate), approvals and refunds (some two at once), cancels, two game servers claiming and acking
 * the commands, and now and then another creation (a tag, a package, a chat message on an order,
 * the affiliate's withdrawal); every POST with a fresh Idempotency-Key. Then faults off and the careful client:
 * after the longest Retry-After it was given, every POST that got a 5xx, no answer or a 409 sent
 * once more with its key and body, every unanswered ack sent again, the leases of lost claims
 * left to lapse and the queue drained; every key sent once more, and the store read back.
 */
export interface WorkloadOptions {
  api: string;
  /** The stack's LOCAL_DIR, whose outbox.jsonl holds the login codes. */
  localDir: string;
  proxy: ChaosProxy;
  seed: number;
  rate: number;
  seconds: number;
  workers: number;
  /** The game servers' lease (10..600 s): after faults, a lost claim's commands wait this long. */
  leaseSeconds: number;
  /** Reads the store's per-client counters straight from DynamoDB Local (not through the faults). */
  readCounters: (storeId: number) => Promise<Snapshot['counters']>;
  createStore: () => Promise<{ storeId: number; domain: string; token: string }>;
}

export const STOCK = 60;
export const COUPON = { code: 'CHAOS', maxUses: 25, maxUsesPerClient: 3 };
const COMMISSION_PERCENT = 10;
const CLIENTS = 12;

const sleep = (ms: number) => new Promise((resume) => setTimeout(resume, ms));

async function send(api: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(new URL(path, api), {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const errors = parsed?.errors as { code?: string }[] | undefined;
    return {
      status: response.status,
      code: errors?.[0]?.code,
      retryAfter: response.headers.get('retry-after') ?? undefined,
      envelope: Array.isArray(errors) && errors.length > 0,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: parsed,
      ms: Date.now() - started,
    };
  } catch {
    return { status: null, envelope: false, replayed: false, body: undefined, ms: Date.now() - started };
  }
}

interface Server {
  id: number;
  key: string;
}

export async function runWorkload(options: WorkloadOptions): Promise<Snapshot> {
  const { api, proxy, seed, leaseSeconds } = options;
  const call = (method: string, path: string, body: unknown, headers: Record<string, string>) => send(api, method, path, body, headers);
  const phases: Record<string, number> = {};
  let phaseStarted = Date.now();
  const phaseEnds = (name: string) => {
    phases[name] = Math.round((Date.now() - phaseStarted) / 100) / 10;
    phaseStarted = Date.now();
  };
  const { storeId, domain, token } = await options.createStore();
  const operator = { authorization: `Bearer ${token}` };
  const must = async (method: string, path: string, body: unknown, headers: Record<string, string> = operator) => {
    const answer = await call(method, path, body, headers);
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`setup ${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body!;
  };

  // ---- the store, faults off ----
  await must('PATCH', '/v1/app/store', { affiliate: { percent_commission: COMMISSION_PERCENT } });
  const catalog = [
    { name: 'VIP', price: 10, commands: [{ command: 'give {client_identifier} VIP' }, { command: 'take {client_identifier} VIP', stage: 'REFUNDED' }] },
    { name: 'MVP', price: 15, per_customer_limit: 4, commands: [{ command: 'give {client_identifier} MVP' }] },
    { name: 'Kit', price: 7.5, commands: [{ command: 'kit {client_identifier} 1' }, { command: 'kit {client_identifier} 2' }] },
  ];
  const packages: PackageSeen[] = [];
  for (const { commands, ...fields } of catalog) {
    const created = await must('POST', '/v1/app/package', { ...fields, stock: STOCK, commands });
    const templates: Record<string, number> = {};
    for (const command of commands as { stage?: string }[]) templates[command.stage ?? 'APPROVED'] = (templates[command.stage ?? 'APPROVED'] ?? 0) + 1;
    packages.push({ id: created.id as number, initialStock: STOCK, stock: STOCK, limited: 'per_customer_limit' in fields, templates });
  }
  await must('POST', '/v1/app/discount', {
    coupon: COUPON.code,
    type: 'PERCENTAGE',
    value: 10,
    max_uses: COUPON.maxUses,
    max_uses_per_client: COUPON.maxUsesPerClient,
    limit_criteria: 'CLIENT_EMAIL',
  });
  const store = { 'x-store-domain': domain };
  const affiliateEmail = `affiliate-${seed}@example.com`;
  await must('POST', '/v1/webstore/auth/login', { email: affiliateEmail }, store);
  const mails = readFileSync(join(options.localDir, 'outbox.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { to: string; code: string });
  const code = mails.filter((mail) => mail.to === affiliateEmail).at(-1)!.code;
  const buyer = { ...store, authorization: `Bearer ${(await must('POST', '/v1/webstore/auth/verify', { email: affiliateEmail, code }, store)).access_token}` };
  const refCode = `chaos${seed}`;
  await must('POST', '/v1/webstore/affiliate/join', { ref_code: refCode }, buyer);
  await must(
    'PATCH',
    '/v1/webstore/affiliate/me',
    { withdraw_settings: { full_name: 'Chaos Affiliate', pix_key: affiliateEmail, pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' } },
    buyer,
  );
  const servers: Server[] = [];
  for (const name of ['Survival', 'Creative']) {
    const server = await must('POST', '/v1/app/server', { name });
    servers.push({ id: server.id as number, key: (await must('POST', `/v1/app/server/${server.id}/key`, {})).key as string });
  }

  phaseEnds('setup');

  // ---- the workload, faults on ----
  proxy.setRate(options.rate);
  const random = seededRandom(seed * 7919 + 1);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const exchanges: Exchange[] = [];
  const placed: number[] = [];
  /** The internal ids of the orders placed, where chat messages go. */
  const chats: string[] = [];
  const approved: number[] = [];
  const claims: ClaimSeen[] = [];
  const acks: AckSeen[] = [];
  const unacked: { server: Server; leaseId: string; ids: number[] }[] = [];
  let claimsUnanswered = 0;
  /** When the last lease a server may not know of lapses: a claim sent that got no answer holds its commands until then. */
  let unknownLeasesEnd = 0;
  let serial = 0;
  const fresh = (kind: string) => `${kind}-${seed}-${++serial}-${Math.floor(random() * 1e9).toString(36)}`;
  const post = async (sent: Sent) => {
    const first = await call('POST', sent.path, sent.body, { ...sent.headers, 'idempotency-key': sent.key });
    exchanges.push({ sent, first });
    if (first.status !== 200 || typeof first.body?.id !== 'number') return;
    if (sent.kind === 'order' || sent.kind === 'checkout') placed.push(first.body.id);
    if (sent.kind === 'order' && typeof first.body.internal_id === 'string') chats.push(first.body.internal_id);
    if (sent.kind === 'approve') approved.push(first.body.id);
  };
  const lines = () => {
    const first = pick(packages).id;
    const second = pick(packages).id;
    const quantity = () => 1 + Math.floor(random() * 2);
    return second !== first && random() < 0.3
      ? [
          { package_id: first, quantity: quantity() },
          { package_id: second, quantity: quantity() },
        ]
      : [{ package_id: first, quantity: quantity() }];
  };
  const client = () => {
    const n = Math.floor(random() * CLIENTS);
    return { client_name: `Player ${n}`, client_identifier: `player${n}`, client_email: `player${n}@example.com` };
  };
  const extras = () => ({ ...(random() < 0.4 ? { coupon: COUPON.code } : {}), ...(random() < 0.5 ? { ref_code: refCode } : {}) });
  const transition = (action: 'approve' | 'cancel' | 'refund', orderId: number) =>
    post({ kind: action, path: `/v1/app/order/${orderId}/${action}`, key: fresh(action), headers: operator, body: {} });

  const deadline = Date.now() + options.seconds * 1000;
  const ack = async (server: Server, leaseId: string, ids: number[]) => {
    const answer = await call('POST', '/v1/delivery/ack', { lease_id: leaseId, results: ids.map((id) => ({ id, status: 'DONE' })) }, { authorization: `Bearer ${server.key}` });
    if (answer.status === 200) acks.push({ server: server.id, lease_id: leaseId, accepted: answer.body!.accepted as number[] });
    return answer.status !== null && answer.status < 500;
  };
  /** One claim, its commands "run" and acked DONE; answers how many it handed out. An ack that fails is kept, as an agent keeps its results. */
  const claimAndRun = async (server: Server) => {
    const answer = await call('POST', '/v1/delivery/claim', { limit: 10, lease_seconds: leaseSeconds }, { authorization: `Bearer ${server.key}` });
    if (answer.status === null || answer.status >= 500) {
      claimsUnanswered += 1;
      // Any lease it took was set before it answered (or gave up): it lapses within a lease of now.
      unknownLeasesEnd = Math.max(unknownLeasesEnd, Date.now() + leaseSeconds * 1000);
    }
    if (answer.status !== 200 || typeof answer.body?.lease_id !== 'string') return 0;
    const commands = (answer.body.commands as { id: number; attempt: number }[]).map(({ id, attempt }) => ({ id, attempt }));
    const leaseId = answer.body.lease_id;
    claims.push({ server: server.id, lease_id: leaseId, expires_at: answer.body.expires_at as string, lease_seconds: leaseSeconds, commands });
    const ids = commands.map((command) => command.id);
    let answered = false;
    for (let attempt = 0; attempt < 3 && !answered; attempt++) answered = await ack(server, leaseId, ids);
    if (!answered) unacked.push({ server, leaseId, ids });
    return ids.length;
  };
  /** One of the other creations, each recorded on its key (lib/db/idempotency.ts `createOnce`). */
  const create = async (kind: CreationKind) => {
    const key = fresh(kind);
    if (kind === 'tag') return post({ kind, path: '/v1/app/tag', key, headers: operator, body: { name: `Tag ${serial}`, color: '#ef4444' } });
    if (kind === 'package') return post({ kind, path: '/v1/app/package', key, headers: operator, body: { name: `Extra ${serial}`, price: 3 } });
    // Small amounts: most find a balance from the commissions; one that does not is a 422, and debits nothing.
    if (kind === 'withdraw') return post({ kind, path: '/v1/webstore/affiliate/withdraw', key, headers: buyer, body: { amount: 0.5 } });
    if (chats.length > 0) return post({ kind, path: `/v1/app/order/${pick(chats)}/chat/messages`, key, headers: operator, body: { message: `Note ${serial}` } });
  };
  const buyers = Array.from({ length: options.workers }, async () => {
    while (Date.now() < deadline) {
      if (random() < 0.1) {
        await create(pick(CREATION_KINDS));
        continue;
      }
      const roll = random();
      if (roll < 0.3) {
        await post({ kind: 'order', path: '/v1/app/order', key: fresh('order'), headers: operator, body: { ...client(), packages: lines(), ...extras() } });
      } else if (roll < 0.65) {
        await post({ kind: 'checkout', path: '/v1/webstore/checkout', key: fresh('checkout'), headers: store, body: { ...client(), cart: lines(), ...extras() } });
      } else if (roll < 0.87 && placed.length > 0) {
        const orderId = pick(placed);
        await (random() < 0.3 ? Promise.all([transition('approve', orderId), transition('approve', orderId)]) : transition('approve', orderId));
      } else if (roll < 0.92 && placed.length > 0) {
        // A cancel gives back what a PENDING order holds (it may race an approval of the same order).
        await transition('cancel', pick(placed));
      } else if (approved.length > 0) {
        const orderId = pick(approved);
        await (random() < 0.3 ? Promise.all([transition('refund', orderId), transition('refund', orderId)]) : transition('refund', orderId));
      }
    }
  });
  const agents = servers.map(async (server) => {
    while (Date.now() < deadline) if ((await claimAndRun(server)) === 0) await sleep(500);
  });
  await Promise.all([...buyers, ...agents]);
  phaseEnds('workload');

  // ---- the careful client, faults off ----
  proxy.setRate(0);
  // It waits as long as a 503 or 409 asked (at most the 30 s a claim runs) before it sends again.
  const wait = Math.max(0, ...exchanges.map((exchange) => Number(exchange.first.retryAfter ?? 0)).filter(Number.isFinite));
  await sleep(Math.min(wait, 31) * 1000);
  for (const exchange of exchanges) {
    const { first, sent } = exchange;
    if (first.status === null || first.status >= 500 || first.status === 409) {
      exchange.retry = await call('POST', sent.path, sent.body, { ...sent.headers, 'idempotency-key': sent.key });
    }
  }
  for (const { server, leaseId, ids } of unacked) await ack(server, leaseId, ids);
  phaseEnds('retries');
  // A claim whose answer was lost, or a command whose ack was refused, may be held until its lease lapses; then the servers drain the queue.
  const accepted = new Set(acks.flatMap((answered) => answered.accepted));
  const refusedLeasesEnd = Math.max(0, ...claims.filter((claim) => claim.commands.some((command) => !accepted.has(command.id))).map((claim) => Date.parse(claim.expires_at)));
  // The margin covers the proxy's injected latency (up to 1.5 s before it forwards a claim), which starts a lease later than the client's clock says.
  await sleep(Math.max(0, Math.max(unknownLeasesEnd, refusedLeasesEnd) + 2000 - Date.now()));
  // As a running agent does, the servers keep claiming until two rounds a second apart find nothing.
  // A claim of the drain left unanswered (faults are off, but a loaded machine can still answer 503
  // past the request's deadline) found nothing the client knows of, and may hold commands under a
  // lease it never saw: such a round is not empty, and the drain waits that lease out.
  for (let emptyRounds = 0; emptyRounds < 2; ) {
    let handedOut = 0;
    const [unansweredBefore, unackedBefore] = [claimsUnanswered, unacked.length];
    for (const server of servers) handedOut += await claimAndRun(server);
    if (claimsUnanswered > unansweredBefore || unacked.length > unackedBefore) {
      // (Commands whose ack went unanswered three times are handed out again once their lease lapses.)
      const leasesEnd = Math.max(unknownLeasesEnd, ...claims.slice(-servers.length).map((claim) => Date.parse(claim.expires_at)));
      emptyRounds = 0;
      await sleep(Math.max(0, leasesEnd + 2000 - Date.now()));
      continue;
    }
    emptyRounds = handedOut > 0 ? 0 : emptyRounds + 1;
    if (handedOut === 0) await sleep(1000);
  }
  phaseEnds('drain');
  // Every key once more: a key left blocked answers 409, a kept answer is replayed as it was.
  for (const exchange of exchanges) {
    const { sent } = exchange;
    if (finalAnswer(exchange).status !== null) exchange.replay = await call('POST', sent.path, sent.body, { ...sent.headers, 'idempotency-key': sent.key });
  }

  phaseEnds('replay');

  // ---- the store as it is ----
  const get = async (path: string, headers: Record<string, string> = operator) => {
    const answer = await call('GET', path, undefined, headers);
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body as Record<string, unknown>;
  };
  const orders: OrderSeen[] = [];
  for (let cursor = ''; ; ) {
    const page = await get(`/v1/app/order?page_size=200&page_cursor=${encodeURIComponent(cursor)}`);
    orders.push(...(page.data as OrderSeen[]));
    cursor = (page.next_cursor as string | null) ?? '';
    if (!cursor) break;
  }
  const total = async (query: string) => ((await get(`/v1/app/order?page=1&limit=1${query}`)).meta as { total: number }).total;
  const listTotals = { all: await total(''), byStatus: {} as Record<string, number> };
  for (const status of ORDER_STATUSES) listTotals.byStatus[status] = await total(`&status=${status}`);
  for (const pkg of packages) pkg.stock = (await get(`/v1/app/package/${pkg.id}`)).stock as number;
  const discount = ((await get('/v1/app/discount')).data as { uses: number }[])[0]!;
  const commands: CommandSeen[] = [];
  for (let cursor = ''; ; ) {
    const page = await get(`/v1/app/command?page_size=200&page_cursor=${encodeURIComponent(cursor)}`);
    commands.push(...(page.data as CommandSeen[]).map(({ id, order_id, stage, status }) => ({ id, order_id, stage, status })));
    cursor = (page.next_cursor as string | null) ?? '';
    if (!cursor) break;
  }
  const transactions: Snapshot['affiliate']['transactions'] = [];
  for (let page = 1; ; page++) {
    const statement = await get(`/v1/webstore/affiliate/transactions?page=${page}`, buyer);
    transactions.push(...(statement.data as Snapshot['affiliate']['transactions']));
    if (page >= (statement.meta as { last_page: number }).last_page) break;
  }
  const panel = await get('/v1/webstore/affiliate/me', buyer);
  const all = async (path: string) => {
    const ids: (number | string)[] = [];
    for (let page = 1; ; page++) {
      const answer = await get(`${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=100`);
      ids.push(...(answer.data as { id: number | string }[]).map((thing) => thing.id));
      if (page >= (answer.meta as { last_page: number }).last_page) break;
    }
    return ids;
  };
  const setupPackages = new Set(packages.map((pkg) => pkg.id));
  const messages: string[] = [];
  for (const internalId of new Set(chats)) messages.push(...((await all(`/v1/app/order/${internalId}/chat/messages`)) as string[]));
  const created: Record<CreationKind, (number | string)[]> = {
    tag: await all('/v1/app/tag'),
    package: (await all('/v1/app/package')).filter((id) => !setupPackages.has(id as number)),
    chat: messages,
    withdraw: await all('/v1/app/affiliate/withdrawal'),
  };
  phaseEnds('read back');
  return {
    phases,
    exchanges,
    orders,
    listTotals,
    packages,
    coupon: { code: COUPON.code, uses: discount.uses },
    counters: await options.readCounters(storeId),
    affiliate: { refCode, percent: COMMISSION_PERCENT, balance: panel.balance as number, transactions },
    commands,
    claims,
    claimsFailed: claimsUnanswered,
    acks,
    created,
  };
}
