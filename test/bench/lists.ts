import { resolve } from 'node:path';
import { startBenchStack } from './stack.ts';

/**
 * `npm run bench` (second part), or `npx tsx test/bench/lists.ts`: what a page of a page-mode
 * list costs as the list grows. For the discount, package, tag and order lists of a store holding
 * SIZES items each, page 1 and page 20 (limit 25) are asked through the real handlers of the local
 * stack (DynamoDB Local), and each row prints the request's DynamoDB calls (the local header
 * x-local-dynamodb-calls), the read units DynamoDB reports for them (every command is sent with
 * ReturnConsumedCapacity TOTAL by a middleware on the one client) and the wall time of the
 * request (median of RUNS, BENCH_LIST_RUNS). The stores are filled through the create routes
 * first (BENCH_LIST_SIZES, default 20,5000), so the counters a list keeps are the ones real
 * creates keep. The first request of each list is made once before the measured ones: a list
 * whose counter was never written (data older than the counter) counts once, then never again.
 * BENCH_LIST_NAMES (e.g. `order`) measures only the lists named (`discount-status`, the discounts
 * filtered by `status`, needs `discount`, whose coupons it reads).
 */
const SIZES = (process.env.BENCH_LIST_SIZES ?? '20,5000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_LIST_RUNS ?? 5);
const LIMIT = 25;
const PAGES = [1, 20];
const SEED_CONCURRENCY = 16;

interface ListCase {
  name: string;
  path: string;
  /** Filters of the measured request (`status=ACTIVE`), kept on every page asked. */
  query?: string;
  /** The list whose seeded items this case reads (a filtered view of them): nothing seeded again. */
  seededBy?: string;
  /** The page size asked, when not LIMIT (a filtered list whose page 1 must be full at the smallest size to compare). */
  limit?: number;
  /** What the items need first (an order needs a package): made once per store, handed to `body`. */
  prepare?: (post: (path: string, body: unknown) => Promise<{ id: number }>) => Promise<Record<string, number>>;
  body: (index: number, prepared: Record<string, number>) => unknown;
}

const ALL_LISTS: ListCase[] = [
  // A third expired (a past expires_in), a third limited to 5 uses, a third plain: the status filter keeps some of each.
  {
    name: 'discount',
    path: '/v1/app/discount',
    body: (i) => ({ coupon: `BENCH${i}`, type: 'PERCENTAGE', value: 10, ...(i % 3 === 0 ? { expires_in: '2020-01-01T00:00:00.000Z' } : i % 3 === 1 ? { max_uses: 5 } : {}) }),
  },
  // Issue 24 item 2's last list: the status follows the clock and the uses, and today it reads every coupon for its total.
  // Limit 10: page 1 is full at 20 coupons (13 ACTIVE) as at 1,000, so the two compare item for item.
  { name: 'discount-status', path: '/v1/app/discount', query: 'status=ACTIVE', limit: 10, seededBy: 'discount', body: () => ({}) },
  { name: 'package', path: '/v1/app/package', body: (i) => ({ name: `Package ${i}`, price: 9.99, commands: [{ command: 'give {client_identifier} vip' }] }) },
  { name: 'tag', path: '/v1/app/tag', body: (i) => ({ name: `Tag ${i}`, color: '#ef4444' }) },
  {
    name: 'order',
    path: '/v1/app/order',
    prepare: async (post) => ({ packageId: (await post('/v1/app/package', { name: 'Bench VIP', price: 4.99, commands: [{ command: 'give {client_identifier} vip' }] })).id }),
    body: (i, { packageId }: Record<string, number>) => ({
      client_identifier: `player${i}`,
      client_email: `p${i}@example.com`,
      client_name: `Player ${i}`,
      packages: [{ package_id: packageId, quantity: 1 }],
    }),
  },
];
const LISTS = ALL_LISTS.filter((list) => !process.env.BENCH_LIST_NAMES || process.env.BENCH_LIST_NAMES.split(',').includes(list.name));
for (const list of LISTS) {
  if (list.seededBy && !LISTS.some((other) => other.name === list.seededBy)) throw new Error(`${list.name} reads the items of ${list.seededBy}: name both in BENCH_LIST_NAMES`);
}

const stack = await startBenchStack(resolve('.local/bench-lists'));

try {
  // Imported only now: the table modules read TABLE_NAME (set by the local stack) at import.
  // The local server runs the handlers in this process with this very client (generation 0).
  const { db } = await import('#lib/db/client.ts');
  const { createStore } = await import('#lib/db/store.ts');
  const { createApiToken } = await import('#lib/db/credential.ts');

  let readUnits = 0;
  db.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) readUnits += entry.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );

  const request = async (token: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as { id: number; meta?: { total: number }; data?: unknown[] };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return { answer, calls: Number(response.headers.get('x-local-dynamodb-calls')) };
  };

  async function seed(token: string, list: ListCase, count: number): Promise<void> {
    const prepared = (await list.prepare?.(async (path, body) => (await request(token, 'POST', path, body)).answer)) ?? {};
    let next = 0;
    const worker = async () => {
      while (next < count) await request(token, 'POST', list.path, list.body(next++, prepared));
    };
    await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  }

  interface Row {
    list: string;
    items: number;
    page: number;
    returned: number;
    total: number;
    calls: number;
    readUnits: number;
    ms: number;
  }
  const rows: Row[] = [];
  for (const size of SIZES) {
    const store = await createStore({ name: `Bench ${size}`, domain: `bench-lists-${size}-${process.pid}.localhost` });
    const { api_token: token } = await createApiToken(store.id);
    const seeding = performance.now();
    for (const list of LISTS) if (!list.seededBy) await seed(token, list, size);
    console.log(`seeded ${size} of each list in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);
    for (const list of LISTS) {
      const filters = list.query ? `&${list.query}` : '';
      const limit = list.limit ?? LIMIT;
      await request(token, 'GET', `${list.path}?page=1&limit=${limit}${filters}`);
      for (const page of PAGES) {
        const samples: { ms: number; calls: number; readUnits: number; returned: number; total: number }[] = [];
        for (let run = 0; run < RUNS; run++) {
          readUnits = 0;
          const started = performance.now();
          const { answer, calls } = await request(token, 'GET', `${list.path}?page=${page}&limit=${limit}${filters}`);
          samples.push({ ms: performance.now() - started, calls, readUnits, returned: answer.data?.length ?? 0, total: answer.meta?.total ?? -1 });
        }
        samples.sort((a, b) => a.ms - b.ms);
        const median = samples[Math.floor(samples.length / 2)]!;
        rows.push({ list: list.name, items: size, page, ...median });
      }
    }
  }

  console.log(
    `\nPage-mode lists, limit ${LIMIT} (${
      LISTS.filter((list) => list.limit)
        .map((list) => `${list.name} ${list.limit}`)
        .join(', ') || 'every list'
    }): one request through the handler (median of ${RUNS} by wall time)`,
  );
  console.log(
    `${'list'.padEnd(15)}  ${'items'.padStart(5)}  ${'page'.padStart(4)}  ${'returned'.padStart(8)}  ${'total'.padStart(5)}  ${'calls'.padStart(5)}  ${'read units'.padStart(10)}  ${'ms'.padStart(6)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.list.padEnd(15)}  ${String(row.items).padStart(5)}  ${String(row.page).padStart(4)}  ${String(row.returned).padStart(8)}  ${String(row.total).padStart(5)}  ${String(row.calls).padStart(5)}  ${row.readUnits.toFixed(1).padStart(10)}  ${row.ms.toFixed(1).padStart(6)}`,
    );
  }
  console.log('(calls and read units include the credential GetItem every operator request makes)');
} finally {
  await stack.stop();
}
