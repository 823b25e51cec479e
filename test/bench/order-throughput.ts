import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../support/ports.ts';

/**
 * `npm run bench` (a part), or `npx tsx test/bench/order-throughput.ts`: order creation
 * (`POST /v1/app/order`, one package, no coupon) at CONNECTIONS concurrent connections on the local
 * stack, this working tree against earlier commits (issue 24 item 5). Each version runs its own
 * local stack (`infra/local/start.ts` of that commit, in memory, its own DynamoDB Local) from a copy
 * made with `git archive` under .local/bench-orders/<ref> (the working tree's node_modules linked
 * in); its store and token are made by that commit's own `createStore` / `createApiToken`, its
 * package through its API. Versions take turns, round after round (the order rotated), so a
 * busy moment of this shared machine hits them alike; only rows of one run compare.
 *
 * BENCH_ORDER_REFS (default `177d681`: the last commit before the order list counts) names the
 * commits, comma-separated; BENCH_ORDER_SECONDS (10) the length of one measured window,
 * BENCH_ORDER_ROUNDS (3) the rounds, BENCH_ORDER_WARMUP (15) the seconds of load each version first
 * answers, not counted.
 */
const REFS = (process.env.BENCH_ORDER_REFS ?? '177d681').split(',').filter(Boolean);
const SECONDS = Number(process.env.BENCH_ORDER_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ORDER_ROUNDS ?? 3);
const CONNECTIONS = 50;
/** DynamoDB Local's JVM and the server compile their hot paths in the first seconds: the first windows of a cold stack ran at a third of the later ones. */
const WARM_UP_SECONDS = Number(process.env.BENCH_ORDER_WARMUP ?? 15);
const root = resolve('.');
const benchDir = resolve('.local/bench-orders');

interface Version {
  label: string;
  dir: string;
}

/** A commit's tree, extracted once (git archive: no worktree), with this tree's node_modules. */
function checkout(ref: string): Version {
  const commit = spawnSync('git', ['rev-parse', '--short', ref], { encoding: 'utf8' }).stdout.trim();
  if (!commit) throw new Error(`unknown commit ${ref}`);
  const dir = join(benchDir, commit);
  if (!existsSync(join(dir, 'package.json'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const archive = spawnSync('sh', ['-c', `git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`], { stdio: 'inherit' });
    if (archive.status !== 0) throw new Error(`git archive ${commit} failed`);
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return { label: commit, dir };
}

interface RunningStack {
  version: Version;
  apiUrl: string;
  token: string;
  packageId: number;
  process: ChildProcess;
}

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
});

/** Runs `script` (an ES module) with that version's modules, answering the JSON line it prints. */
function runIn(version: Version, env: NodeJS.ProcessEnv, script: string): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: version.dir, env, encoding: 'utf8' });
  const line = result.stdout.split('\n').find((candidate) => candidate.startsWith('{'));
  if (result.status !== 0 || !line) throw new Error(`${version.label}: ${result.stderr || result.stdout}`);
  return JSON.parse(line);
}

async function startStack(version: Version): Promise<RunningStack> {
  const localDir = join(version.dir, '.local');
  const env = {
    ...baseEnv(),
    PORT: String(await freePort()),
    DYNAMODB_PORT: String(await freePort()),
    S3_PORT: String(await freePort()),
    OWNER_PORT: String(await freePort()),
    LOCAL_DIR: localDir,
    LOCAL_BIN_DIR: join(root, '.local/bin'),
    LOCAL_IN_MEMORY: '1',
    LOCAL_SEED: '0',
    LOCAL_LOG: '0',
    LOCAL_RELOAD: '0',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], { cwd: version.dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = await new Promise<{ api_url: string; dynamodb_endpoint: string; table: string }>((done, fail) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith('{"ready"'));
      if (line) done(JSON.parse(line));
    });
    child.once('exit', (code) => fail(new Error(`${version.label}: the local stack exited with ${code}`)));
  });
  child.stdout!.resume();
  const made = runIn(
    version,
    { ...baseEnv(), TABLE_NAME: ready.table, DYNAMODB_ENDPOINT: ready.dynamodb_endpoint },
    `const { createStore } = await import('#lib/db/store.ts');
     const { createApiToken } = await import('#lib/db/credential.ts');
     const store = await createStore({ name: 'Bench orders', domain: 'bench-orders-${version.label}.localhost' });
     const { api_token } = await createApiToken(store.id);
     console.log(JSON.stringify({ token: api_token }));
     process.exit(0);`,
  );
  const token = String(made.token);
  const created = await fetch(`${ready.api_url}/v1/app/package`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'VIP', price: 9.99, commands: [{ command: 'give {client_identifier} vip' }] }),
  });
  if (created.status !== 200 && created.status !== 201) throw new Error(`${version.label}: creating the package answered ${created.status}`);
  const packageId = ((await created.json()) as { id: number }).id;
  return { version, apiUrl: ready.api_url, token, packageId, process: child };
}

interface Window {
  ordersPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

/** CONNECTIONS clients placing orders back to back for `seconds`: orders a second and latencies of the 2xx. */
async function load(stack: RunningStack, seconds: number): Promise<Window> {
  const body = JSON.stringify({ client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve', packages: [{ package_id: stack.packageId, quantity: 1 }] });
  const until = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let failed = 0;
  const client = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const response = await fetch(`${stack.apiUrl}/v1/app/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
        body,
      });
      await response.arrayBuffer();
      if (response.ok) latencies.push(performance.now() - started);
      else failed += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, client));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (share: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))] ?? 0;
  return { ordersPerSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), failed };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const load1 = () => loadavg()[0]!.toFixed(1);

const versions: Version[] = [...REFS.map(checkout), { label: 'this tree', dir: root }];
const stacks: RunningStack[] = [];
try {
  for (const version of versions) stacks.push(await startStack(version));
  for (const stack of stacks) await load(stack, WARM_UP_SECONDS);
  const loadBefore = load1();
  const windows: Window[][] = stacks.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let turn = 0; turn < stacks.length; turn++) {
      const index = (round + turn) % stacks.length;
      windows[index]!.push(await load(stacks[index]!, SECONDS));
    }
  }
  console.log(
    `\nOrder creation at ${CONNECTIONS} connections on the local stack, ${ROUNDS} interleaved windows of ${SECONDS} s each (load average ${loadBefore} before, ${load1()} after, ${cpus().length} cores)`,
  );
  const width = Math.max(...versions.map(({ label }) => label.length));
  console.log(`${'version'.padEnd(width)}  ${'orders/s per window'.padEnd(24)}  ${'median'.padStart(6)}  ${'p50 ms'.padStart(6)}  ${'p99 ms'.padStart(6)}  failed`);
  for (const [index, { label }] of versions.entries()) {
    const runs = windows[index]!;
    console.log(
      `${label.padEnd(width)}  ${runs
        .map((run) => run.ordersPerSecond.toFixed(1))
        .join(' / ')
        .padEnd(24)}  ${median(runs.map((run) => run.ordersPerSecond))
        .toFixed(1)
        .padStart(6)}  ${median(runs.map((run) => run.p50))
        .toFixed(0)
        .padStart(6)}  ${median(runs.map((run) => run.p99))
        .toFixed(0)
        .padStart(6)}  ${runs.reduce((sum, run) => sum + run.failed, 0)}`,
    );
  }
} finally {
  for (const stack of stacks) {
    stack.process.kill('SIGTERM');
    await new Promise((done) => (stack.process.exitCode === null ? stack.process.once('exit', done) : done(undefined)));
  }
}
