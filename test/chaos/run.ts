import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDynamoDbLocal, stopDynamoDbLocal } from '#infra/local/dynamodb-local.ts';
import { freePort } from '../support/ports.ts';
import { startStackProcess } from '../integration/global-setup.ts';
import { FAULT_KINDS, seededRandom, startChaosProxy } from './proxy.ts';

/**
 * `npm run chaos -- [--seed 1] [--rate 0.3] [--seconds 30] [--workers 6]`: the local stack with
 * its DynamoDB behind the fault-injecting proxy (test/chaos/proxy.ts), a busy store's workload
 * (operator orders, guest checkouts of stocked packages with a limited coupon, approvals, some
 * two at once), every POST with a fresh Idempotency-Key; then faults off, and, after the longest
 * Retry-After it was given, every POST that got a 5xx, no answer or a 409 re-sent once with the
 * same key and body, as a careful client would.
 * Prints the answers and the invariants; exits 1 when one breaks. Bounded by --seconds.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '0.3' },
    seconds: { type: 'string', default: '30' },
    workers: { type: 'string', default: '6' },
  },
});
const seed = Number(values.seed);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const workers = Number(values.workers);

interface Sent {
  kind: 'order' | 'checkout' | 'approve';
  path: string;
  body: unknown;
  headers: Record<string, string>;
  key: string;
}
interface Answer {
  status: number | null;
  code?: string;
  retryAfter?: string;
  envelope: boolean;
  body: Record<string, unknown> | undefined;
}

const STOCK = 60;
const COUPON_USES = 25;

async function main() {
  const started = Date.now();
  const dynamodbPort = await freePort();
  const dynamodb = await startDynamoDbLocal({ binDir: resolve('.local', 'bin'), port: dynamodbPort });
  const proxy = await startChaosProxy({ host: '127.0.0.1', port: dynamodbPort }, seed);
  const localDir = mkdtempSync(join(tmpdir(), 'store-api-chaos-'));
  const stack = await startStackProcess({ LOCAL_SEED: '0', DYNAMODB_ENDPOINT: `http://127.0.0.1:${proxy.port}`, LOCAL_DIR: localDir });
  try {
    const api = stack.ready.api_url!;
    // The runner's own setup writes straight to DynamoDB Local, never through the faults.
    process.env.TABLE_NAME = stack.ready.table!;
    process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${dynamodbPort}`;
    const { createStore } = await import('#lib/db/store.ts');
    const { createApiToken } = await import('#lib/db/credential.ts');
    const domain = `chaos-${seed}-${Date.now().toString(36)}.test.localhost`;
    const store = await createStore({ name: 'Chaos', domain });
    const { api_token: token } = await createApiToken(store.id);

    const send = async (method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Answer> => {
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
          body: parsed,
        };
      } catch {
        return { status: null, envelope: false, body: undefined };
      }
    };
    const operator = { authorization: `Bearer ${token}` };
    const must = async (path: string, body: unknown) => {
      const answer = await send('POST', path, body, operator);
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`setup ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body!;
    };
    const packages: number[] = [];
    for (const name of ['VIP', 'MVP', 'Kit']) {
      packages.push((await must('/v1/app/package', { name, price: 10, stock: STOCK, commands: [{ command: `give {client_identifier} ${name}` }] })).id as number);
    }
    await must('/v1/app/discount', { coupon: 'CHAOS', type: 'PERCENTAGE', value: 10, max_uses: COUPON_USES });

    // ---- the workload, faults on ----
    proxy.setRate(rate);
    const random = seededRandom(seed * 7919 + 1);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const log: { sent: Sent; first: Answer; retry?: Answer }[] = [];
    const placed: number[] = [];
    let serial = 0;
    const fresh = (kind: string) => `${kind}-${seed}-${++serial}-${Math.floor(random() * 1e9).toString(36)}`;
    const run = async (sent: Sent) => {
      const first = await send('POST', sent.path, sent.body, { ...sent.headers, 'idempotency-key': sent.key });
      log.push({ sent, first });
      if (sent.kind !== 'approve' && first.status === 200 && typeof first.body?.id === 'number') placed.push(first.body.id);
    };
    const deadline = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (Date.now() < deadline) {
          const roll = random();
          const line = { package_id: pick(packages), quantity: 1 + Math.floor(random() * 2) };
          if (roll < 0.35) {
            await run({
              kind: 'order',
              path: '/v1/app/order',
              key: fresh('order'),
              headers: operator,
              body: { client_name: 'Op', client_identifier: `op${serial}`, client_email: `op${serial}@example.com`, packages: [line] },
            });
          } else if (roll < 0.75) {
            const body = {
              cart: [line],
              client_name: 'Guest',
              client_identifier: `g${serial}`,
              client_email: `g${serial}@example.com`,
              ...(random() < 0.5 ? { coupon: 'CHAOS' } : {}),
            };
            await run({ kind: 'checkout', path: '/v1/webstore/checkout', key: fresh('checkout'), headers: { 'x-store-domain': domain }, body });
          } else if (placed.length > 0) {
            const orderId = pick(placed);
            const approve = () => run({ kind: 'approve', path: `/v1/app/order/${orderId}/approve`, key: fresh('approve'), headers: operator, body: {} });
            // Some approvals two at once, each with its own key.
            await (random() < 0.3 ? Promise.all([approve(), approve()]) : approve());
          }
        }
      }),
    );

    // ---- the careful client, faults off ----
    proxy.setRate(0);
    // A careful client waits as long as a 503 or 409 asked (at most the 30 s a claim runs) before it sends again.
    const wait = Math.max(0, ...log.map((entry) => Number(entry.first.retryAfter ?? 0)).filter(Number.isFinite));
    await new Promise((resume) => setTimeout(resume, Math.min(wait, 31) * 1000));
    for (const entry of log) {
      const { first, sent } = entry;
      if (first.status === null || first.status >= 500 || first.status === 409) {
        entry.retry = await send('POST', sent.path, sent.body, { ...sent.headers, 'idempotency-key': sent.key });
      }
    }

    // ---- what the answers were ----
    const final = (entry: (typeof log)[number]) => entry.retry ?? entry.first;
    const wellFormed = (answer: Answer) =>
      answer.status !== null &&
      ((answer.status >= 200 && answer.status < 300) ||
        (answer.status >= 400 && answer.status < 500 && answer.envelope) ||
        (answer.status === 503 && answer.envelope && Number(answer.retryAfter) >= 1));
    const answers = log.flatMap((entry) => (entry.retry ? [entry.first, entry.retry] : [entry.first]));
    const malformed = answers.filter((answer) => !wellFormed(answer));
    const count = (predicate: (answer: Answer) => boolean) => log.filter((entry) => predicate(final(entry))).length;

    // ---- the store as it is ----
    const orders: { id: number; status: string; coupon: string | null; packages: { package_id: number; quantity: number }[] }[] = [];
    for (let cursor = ''; ; ) {
      const page = await send('GET', `/v1/app/order?page_size=200&page_cursor=${encodeURIComponent(cursor)}`, undefined, operator);
      orders.push(...((page.body?.data as typeof orders) ?? []));
      cursor = (page.body?.next_cursor as string | null) ?? '';
      if (!cursor) break;
    }
    const answeredOrders = log.filter((entry) => entry.sent.kind !== 'approve' && final(entry).status === 200).map((entry) => final(entry).body!.id as number);
    const byId = new Map(orders.map((order) => [order.id, order]));
    const held = orders.filter((order) => order.status !== 'CANCELED');
    const problems: string[] = [];
    if (malformed.length > 0) problems.push(`${malformed.length} answers other than 2xx, 4xx in the envelope or 503 with Retry-After: ${JSON.stringify(malformed.slice(0, 3))}`);
    const keysIn409 = count((answer) => answer.status === 409);
    if (keysIn409 > 0) problems.push(`${keysIn409} requests answered 409 after the retry (a key nobody else used)`);
    if (new Set(answeredOrders).size !== answeredOrders.length) problems.push('one order answered to two requests');
    const missing = answeredOrders.filter((id) => !byId.has(id));
    if (missing.length > 0) problems.push(`${missing.length} orders answered 2xx but absent`);
    const unanswered = orders.filter((order) => !answeredOrders.includes(order.id));
    if (unanswered.length > 0) problems.push(`${unanswered.length} orders no request was answered with (doubled or orphaned)`);
    for (const packageId of packages) {
      const stock = (await send('GET', `/v1/app/package/${packageId}`, undefined, operator)).body?.stock as number;
      const units = held.reduce((sum, order) => sum + order.packages.filter((line) => line.package_id === packageId).reduce((n, line) => n + line.quantity, 0), 0);
      if (stock !== STOCK - units) problems.push(`package ${packageId}: stock ${stock}, expected ${STOCK} - ${units} held`);
    }
    const discounts = (await send('GET', '/v1/app/discount', undefined, operator)).body?.data as { uses: number }[];
    const couponOrders = held.filter((order) => order.coupon !== null).length;
    if (discounts?.[0]?.uses !== couponOrders) problems.push(`coupon uses ${discounts?.[0]?.uses}, orders holding it ${couponOrders}`);
    for (const order of held.filter((candidate) => candidate.status === 'APPROVED')) {
      const commands = (await send('GET', `/v1/app/order/${order.id}/command`, undefined, operator)).body as unknown;
      const list = (Array.isArray(commands) ? commands : ((commands as { data?: unknown[] })?.data ?? [])) as unknown[];
      const expected = order.packages.reduce((n, line) => n + line.quantity, 0);
      if (list.length !== expected && list.length !== order.packages.length) problems.push(`order ${order.id}: ${list.length} commands queued, expected one set`);
    }

    const statusCounts = (pick: (entry: (typeof log)[number]) => Answer | undefined) => {
      const counts: Record<string, number> = {};
      for (const entry of log) {
        const answer = pick(entry);
        if (!answer) continue;
        const label = answer.status === null ? 'no answer' : `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
        counts[label] = (counts[label] ?? 0) + 1;
      }
      return counts;
    };
    console.log(
      JSON.stringify(
        {
          seed,
          rate,
          seconds,
          workers,
          wall_seconds: Math.round((Date.now() - started) / 1000),
          dynamodb_calls: proxy.counts.calls,
          faults: Object.fromEntries(FAULT_KINDS.map((kind) => [kind, proxy.counts[kind]])),
          requests: log.length,
          retried: log.filter((entry) => entry.retry).length,
          first_answers: statusCounts((entry) => entry.first),
          after_retry: statusCounts(final),
          orders: orders.length,
          approved: orders.filter((order) => order.status === 'APPROVED').length,
          problems,
        },
        null,
        2,
      ),
    );
    process.exitCode = problems.length > 0 ? 1 : 0;
  } finally {
    await stack.stop();
    await proxy.close();
    await stopDynamoDbLocal(dynamodb);
    rmSync(localDir, { recursive: true, force: true });
  }
}

await main();
