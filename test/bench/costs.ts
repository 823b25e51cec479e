import { resolve } from 'node:path';
import { capacityMeter } from '../support/capacity.ts';
import { startBenchStack } from './stack.ts';

/**
 * `npm run bench` (third part), or `npx tsx test/bench/costs.ts`: what the buying and delivery paths
 * cost as a store grows beside them (issue 24), side by side in one run. Each row is one call of
 * the flow against DynamoDB Local: its DynamoDB calls, the read and write units DynamoDB reports
 * (ReturnConsumedCapacity TOTAL on every command), and its wall time (median of RUNS,
 * BENCH_COST_RUNS).
 *
 * - quote: a cart of one package (in a category; a store-wide, a category and a package promo and a
 *   required variable apply to it) beside SMALL and LARGE promos and variables of another package;
 * - claim: a server with one player online, five runnable commands and the online player's one,
 *   behind SMALL and 10 x LARGE older offline-only commands of 5 players who are not online, and of
 *   as many players as commands / 2 (the roster longer than the online list).
 *
 * - affiliate list: page 1 (limit 25) of the operator's affiliates at 2 x SMALL and LARGE affiliates;
 * - storefront promos: page 1 (limit 25) of the public list at 2 x SMALL and LARGE promos in force
 *   (through the local stack's HTTP route: its calls include the domain's GetItem);
 * - storefront categories: page 1 (limit 25) at 2 x SMALL and LARGE categories with an enabled package.
 *
 * BENCH_COST_SIZES (default 10,1000) sets SMALL and LARGE. The claim's rows re-claim after putting
 * the handed-out commands back, so each run hands out the same six.
 */
const [SMALL, LARGE] = (process.env.BENCH_COST_SIZES ?? '10,1000').split(',').map(Number) as [number, number];
const RUNS = Number(process.env.BENCH_COST_RUNS ?? 5);
/** BENCH_COST_NAMES (e.g. `claim,affiliate`) measures only the paths named: quote, claim, affiliate, promo, category. */
const measured = (name: string) => !process.env.BENCH_COST_NAMES || process.env.BENCH_COST_NAMES.split(',').includes(name);

const stack = await startBenchStack(resolve('.local/bench-costs'));
try {
  const v = await import('valibot');
  const { db, TABLE } = await import('#lib/db/client.ts');
  const { BatchWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { createStore } = await import('#lib/db/store.ts');
  const { quoteCart } = await import('#lib/flows/checkout.ts');
  const { createPromo } = await import('#lib/flows/promo.ts');
  const { createVariable } = await import('#lib/flows/variable.ts');
  const { claimCommands } = await import('#lib/flows/delivery.ts');
  const { quoteBody } = await import('#lib/schemas/checkout.ts');
  const { promoCreateBody } = await import('#lib/schemas/promo.ts');
  const { variableCreateBody } = await import('#lib/schemas/variable.ts');
  const { createApiToken } = await import('#lib/db/credential.ts');

  const meter = capacityMeter(db, 'benchCostCapacity');

  /** The operator's API on the bench stack, for what the flows above need first (categories, packages, servers, orders). */
  async function operator(name: string) {
    const store = await createStore({ name, domain: `bench-costs-${name}-${process.pid}.localhost`.toLowerCase() });
    const { api_token: token } = await createApiToken(store.id);
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${stack.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown> & { id: number; key: string };
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    return { storeId: store.id, call };
  }

  const inGroups = async (count: number, make: (index: number) => Promise<unknown>) => {
    for (let start = 0; start < count; start += 20) await Promise.all(Array.from({ length: Math.min(20, count - start) }, (_, offset) => make(start + offset)));
  };
  const tier = (min_amount: number, reward_value: number) => ({ min_amount, reward_type: 'PERCENTAGE', reward_value });
  const promo = (name: string, targets: unknown[], tiers = [tier(1, 5), tier(3, 10)]) =>
    v.parse(promoCreateBody, { name, type: 'PROGRESSIVE', condition_mode: 'QUANTITY', starts_at: '2020-01-01T00:00:00.000Z', targets, tiers });
  const variable = (name: string, appliesTo: number[]) => v.parse(variableCreateBody, { name, type: 'TEXT', description: name, required: true, applies_to: appliesTo });

  interface Row {
    what: string;
    size: number;
    calls: number;
    read: number;
    write: number;
    ms: number;
    answer: string;
  }
  const rows: Row[] = [];
  async function measure(what: string, size: number, run: () => Promise<string>, reset: () => Promise<void> = async () => {}) {
    const samples: Row[] = [];
    for (let index = 0; index < RUNS; index++) {
      await reset();
      const started = performance.now();
      const { result: answer, usage } = await meter.measure(run);
      samples.push({ what, size, ...usage, ms: performance.now() - started, answer });
    }
    samples.sort((a, b) => a.ms - b.ms);
    rows.push(samples[Math.floor(samples.length / 2)]!);
  }

  for (const size of measured('quote') ? [SMALL, LARGE] : []) {
    const { storeId, call } = await operator(`quote${size}`);
    const category = await call('POST', '/v1/app/category', { name: 'Ranks' });
    const pkg = await call('POST', '/v1/app/package', { name: 'VIP', price: 10, category_id: category.id });
    const other = await call('POST', '/v1/app/package', { name: 'Other', price: 10 });
    await createPromo(storeId, promo('Store wide', [{ type: 'STORE' }]));
    await createPromo(storeId, promo('Ranks', [{ type: 'CATEGORY', id: category.id }], [tier(2, 15)]));
    await createPromo(storeId, promo('VIP', [{ type: 'PRODUCT', id: pkg.id }], [tier(5, 20)]));
    await createVariable(storeId, variable('server', [pkg.id]));
    await inGroups(size, (index) => createPromo(storeId, promo(`Off ${index}`, [{ type: 'PRODUCT', id: other.id }])));
    await inGroups(size, (index) => createVariable(storeId, variable(`off${index}`, [other.id])));
    const body = v.parse(quoteBody, { cart: [{ package_id: pkg.id, quantity: 2 }], fields: { server: 'eu' }, client_identifier: 'Steve' });
    await measure('quote (promos and variables off the cart)', size, async () => {
      const quote = await quoteCart(storeId, body);
      return `total ${quote.total}, next_tiers ${quote.next_tiers.length}`;
    });
  }

  const { commandPuts, getCommandRecord, saveChange } = await import('#lib/db/command.ts');
  const orderOf = (player: string) => ({ client_identifier: player, client_email: 'o@example.com', client_name: player, client_social: null, internal_id: 'x', variables: [] });
  const claimCases = [
    [SMALL, 5],
    [LARGE * 10, 5],
    [LARGE * 10, LARGE * 5],
  ] as const;
  for (const [offline, players] of measured('claim') ? claimCases : []) {
    const { storeId, call } = await operator(`claim${offline}x${players}`);
    const server = await call('POST', '/v1/app/server', { name: 'Survival' });
    const items = new Map<string, Record<string, unknown>>();
    for (let index = 0; index < offline; index++) {
      const plan = [
        {
          delivery: { package_id: 1, command: 'give away', offline_execute: false, delay_seconds: 0 },
          server_id: index % 3 ? server.id : null,
          stage: 'APPROVED' as const,
          waiting: false,
          releases: false,
        },
      ];
      for (const write of commandPuts(storeId, 1, orderOf(`Away${index % players}`), plan, null, 2_000_000 + index, '2020-01-01T00:00:00.000Z')) {
        const item = write.item.Put!.Item!;
        items.set(`${item.pk}\n${item.sk}`, item);
      }
    }
    const all = [...items.values()];
    const batches: Record<string, unknown>[][] = [];
    for (let start = 0; start < all.length; start += 25) batches.push(all.slice(start, start + 25));
    await inGroups(batches.length, (index) => db.send(new BatchWriteCommand({ RequestItems: { [TABLE]: batches[index]!.map((Item) => ({ PutRequest: { Item } })) } })));
    const handedIds: number[] = [];
    for (let i = 0; i < 6; i++) {
      const pkg = await call('POST', '/v1/app/package', { name: `P${i}`, price: 1, commands: [{ command: `mine ${i}`, servers: [server.id], offline_execute: i < 5 }] });
      const order = await call('POST', '/v1/app/order', {
        client_identifier: i < 5 ? 'Steve' : 'Here',
        client_email: 's@example.com',
        client_name: 'S',
        packages: [{ package_id: pkg.id, quantity: 1 }],
      });
      await call('POST', `/v1/app/order/${order.id}/approve`);
    }
    // Every run hands out the same six: their leases are ended before it.
    const release = async () => {
      for (const id of handedIds) {
        const record = (await getCommandRecord(storeId, id))!;
        await saveChange(record, { ...record, lease_id: null, lease_until: null });
      }
    };
    await measure(
      `claim (offline-only commands of ${players === 5 ? '5 players' : `${players} players`})`,
      offline,
      async () => {
        const claimed = await claimCommands(storeId, server.id, { online: ['Here', 'Nobody'], limit: 50, lease_seconds: 60 });
        handedIds.splice(0, handedIds.length, ...claimed.commands.map((command) => command.id));
        return `handed out ${claimed.commands.length}`;
      },
      release,
    );
  }

  const { findOrCreateCustomer } = await import('#lib/db/customer.ts');
  const { createAffiliate } = await import('#lib/db/affiliate.ts');
  const { listAffiliatePanels } = await import('#lib/flows/affiliate-admin.ts');
  for (const size of measured('affiliate') ? [SMALL * 2, LARGE] : []) {
    const { storeId } = await operator(`affiliate${size}`);
    await inGroups(size, async (index) => createAffiliate(storeId, await findOrCreateCustomer(storeId, `a${index}@example.com`), `code${String(index).padStart(5, '0')}`, 10));
    await listAffiliatePanels(storeId, { page: 1, limit: 25 } as never);
    await measure('operator affiliate list, page 1 of 25', size, async () => {
      const page = await listAffiliatePanels(storeId, { page: 1, limit: 25 } as never);
      return `total ${page.total}, shown ${page.data.length}`;
    });
  }

  for (const size of measured('promo') ? [SMALL * 2, LARGE] : []) {
    const { storeId } = await operator(`promo${size}`);
    await inGroups(size, (index) => createPromo(storeId, promo(`In force ${index}`, [{ type: 'STORE' }])));
    const domain = `bench-costs-promo${size}-${process.pid}.localhost`;
    const page1 = async () => {
      const response = await fetch(`${stack.apiUrl}/v1/webstore/promo?page=1&limit=25`, { headers: { 'x-store-domain': domain } });
      const answer = (await response.json()) as { meta: { total: number }; data: unknown[] };
      return `total ${answer.meta.total}, shown ${answer.data.length}`;
    };
    await page1();
    await measure('storefront promos in force, page 1 of 25', size, page1);
  }

  for (const size of measured('category') ? [SMALL * 2, LARGE] : []) {
    const { call } = await operator(`category${size}`);
    await inGroups(size, async (index) => {
      const category = await call('POST', '/v1/app/category', { name: `Category ${index}` });
      await call('POST', '/v1/app/package', { name: `Package ${index}`, price: 1, category_id: category.id });
    });
    const domain = `bench-costs-category${size}-${process.pid}.localhost`;
    const page1 = async () => {
      const response = await fetch(`${stack.apiUrl}/v1/webstore/category?page=1&limit=25`, { headers: { 'x-store-domain': domain } });
      const answer = (await response.json()) as { meta: { total: number }; data: unknown[] };
      return `total ${answer.meta.total}, shown ${answer.data.length}`;
    };
    await page1();
    await measure('storefront categories, page 1 of 25', size, page1);
  }

  console.log(`\nCosts that follow the cart, not the store (issue 24): one call of the flow (median of ${RUNS} by wall time)`);
  console.log(`${'what'.padEnd(52)}  ${'beside'.padStart(6)}  ${'calls'.padStart(5)}  ${'read'.padStart(6)}  ${'write'.padStart(6)}  ${'ms'.padStart(6)}  answer`);
  for (const row of rows) {
    console.log(
      `${row.what.padEnd(52)}  ${String(row.size).padStart(6)}  ${String(row.calls).padStart(5)}  ${row.read.toFixed(1).padStart(6)}  ${row.write.toFixed(1).padStart(6)}  ${row.ms.toFixed(1).padStart(6)}  ${row.answer}`,
    );
  }
} finally {
  await stack.stop();
}
