import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildAgent } from '#infra/build-agent.ts';
import { FakeRconServer } from '../support/fake-rcon.ts';
import { startBenchStack } from './stack.ts';

/**
 * `npm run bench:agent`: the delivery agent as a store owner runs it (dist/agent.mjs, default
 * claim interval of 10 s) against a local stack of its own and a fake RCON game server. Prints
 * the time from an order's approval (the approve call answered) to its command reaching the game,
 * over BENCH_AGENT_SAMPLES orders approved at random moments of the agent's cycle, and the
 * agent's resident memory (RSS) at rest after BENCH_AGENT_REST_SECONDS of idle cycles.
 */
const SAMPLES = Number(process.env.BENCH_AGENT_SAMPLES ?? 8);
const REST_SECONDS = Number(process.env.BENCH_AGENT_REST_SECONDS ?? 30);

const localDir = resolve('.local/bench-agent');
const stack = await startBenchStack(localDir);
const fake = await new FakeRconServer({ password: 'bench' }).start(0);
let agent: ReturnType<typeof spawn> | undefined;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const memory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
};

try {
  const { createStore } = await import('#lib/db/store.ts');
  const { createApiToken } = await import('#lib/db/credential.ts');
  const store = await createStore({ name: 'Bench store', domain: `bench-agent-${Date.now()}.test.localhost` });
  const { api_token } = await createApiToken(store.id);
  const post = async (path: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const server = await post('/v1/app/server', { name: 'Survival' });
  const { key } = (await post(`/v1/app/server/${server.id}/key`)) as { key: string };
  const pkg = await post('/v1/app/package', { name: 'VIP', price: 5, commands: [{ command: 'give {client_identifier} diamond {order_id}' }] });

  const { outfile, bytes, version } = await buildAgent(resolve(localDir, 'agent.mjs'));
  console.log(`dist/agent.mjs ${version}: ${(bytes / 1024).toFixed(1)} KB`);
  agent = spawn(process.execPath, [outfile, '--api', `${stack.apiUrl}/v1`, '--rcon', `127.0.0.1:${fake.port}`], {
    env: { PATH: process.env.PATH ?? '', STORE_API_KEY: key, RCON_PASSWORD: 'bench' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await sleep(2000);
  const started = memory(agent.pid!);

  const latencies: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    // Approvals land anywhere in the agent's 10 s cycle.
    await sleep(Math.random() * 10_000);
    const order = await post('/v1/app/order', {
      client_identifier: 'Steve',
      client_email: 'steve@example.com',
      client_name: 'Steve',
      packages: [{ package_id: pkg.id, quantity: 1 }],
    });
    await post(`/v1/app/order/${order.id}/approve`);
    const approvedAt = Date.now();
    const command = `give Steve diamond ${order.id}`;
    while (!fake.deliveries.some((entry) => entry.command === command)) await sleep(20);
    latencies.push(fake.deliveries.find((entry) => entry.command === command)!.at - approvedAt);
  }

  await sleep(REST_SECONDS * 1000);
  const rest = memory(agent.pid!);
  const sorted = [...latencies].sort((a, b) => a - b);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`approval -> command on the game, default interval (10 s +-20 %), ${SAMPLES} orders:`);
  console.log(
    `  min ${seconds(sorted[0]!)}  median ${seconds(sorted[Math.floor(sorted.length / 2)]!)}  mean ${seconds(latencies.reduce((a, b) => a + b, 0) / latencies.length)}  max ${seconds(sorted[sorted.length - 1]!)}`,
  );
  console.log(`  each: ${latencies.map(seconds).join(', ')}`);
  console.log(`agent memory: RSS ${started.rss.toFixed(1)} MB 2 s after start; ${rest.rss.toFixed(1)} MB at rest after ${REST_SECONDS} s idle (peak ${rest.peak.toFixed(1)} MB)`);
} finally {
  agent?.kill('SIGTERM');
  await fake.stop();
  await stack.stop();
}
