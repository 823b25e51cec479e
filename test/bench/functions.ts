import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildFunctions, defaultFunctionsDir, formatSizeTable } from '#infra/build.ts';
import type { RouteSpec } from '#lib/http/route.ts';
import { routes } from '#lib/routes/index.ts';
import { startBenchStack } from './stack.ts';

/*
 * `npx tsx test/bench/functions.ts`: the bundle size of every function, then cold starts: a fresh
 * `node` process imports a built bundle and answers one request against the local stack (DynamoDB
 * Local), timed from spawn to answer, beside a bundle that only returns 200 (the floor). Median of
 * RUNS (BENCH_RUNS). The functions run as on Lambda: METRICS_NAMESPACE set, so each request writes its log line.
 * This machine runs Node 20, Lambda Node 24: compare the rows with each other, not with Lambda.
 */
/**
 * A read (one Query after the credential), the heaviest write (a transaction over catalog reads),
 * the login that sends mail, and a storefront checkout with PIX (the order, the provider secrets
 * opened, one create call to a fake Mercado Pago on loopback, the payment's two writes).
 */
const COLD_START_FUNCTIONS = ['tag-list', 'order-create', 'auth-login', 'webstore-checkout'] as const;
/**
 * `npm run bench -- label=dir ...`: the same functions from bundles built otherwise (a library
 * swapped, a build option changed), copied to `dir` beforehand, in the same interleaved runs:
 * on a busy machine only rows measured together compare.
 */
const comparedBundles = process.argv.slice(2).map((argument) => {
  const [label, dir] = argument.split('=');
  if (!label || !dir) throw new Error(`expected label=dir, got ${argument}`);
  return { label, dir: resolve(dir) };
});
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
/** The runner's own output lines start with it: the request log lines share its stdout. */
const RESULT_PREFIX = 'BENCH ';
const benchDir = resolve('.local/bench');

/** Runs in the child: `performance.now()` counts from process start, so it also shows node's own boot. */
const coldStartRunner = `
const booted = performance.now();
const { handler } = await import(process.env.BENCH_BUNDLE);
const imported = performance.now();
const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 30000 };
// {{unique}} differs per request: a login e-mail must not meet its own rate limit.
const eventOf = (request) => JSON.parse(process.env.BENCH_EVENT.replaceAll('{{unique}}', process.pid + '-' + request));
const response = await handler(eventOf(0), context);
const answered = performance.now();
const cpu = process.cpuUsage();
process.stdout.write('${RESULT_PREFIX}' + JSON.stringify({ status: response.statusCode, boot: booted, import: imported - booted, request: answered - imported, cpu: (cpu.user + cpu.system) / 1000 }) + '\\n');
// Then the same request warm, as a reused Lambda container answers it, and the memory it holds.
const warm = [];
for (let i = 1; i <= Number(process.env.BENCH_WARM); i++) {
  const started = performance.now();
  await handler(eventOf(i), context);
  warm.push(performance.now() - started);
}
warm.sort((a, b) => a - b);
process.stdout.write('${RESULT_PREFIX}' + JSON.stringify({ warm: warm.length ? warm[Math.floor(warm.length / 2)] : 0, rss: process.memoryUsage().rss / 1048576 }) + '\\n');
process.exit(0);
`;

interface ColdStart {
  total: number;
  boot: number;
  import: number;
  request: number;
  /** CPU time of the process from its start to the answer (boot included), ms: what a busy machine changes least. */
  cpu: number;
  status: number;
  /** Median of WARM_REQUESTS repeated requests in the same process, ms. */
  warm: number;
  /** Resident memory after them, MB. */
  rss: number;
}

const WARM_REQUESTS = 50;

function coldStart({ bundle, event, nodeOptions }: ColdStartCase, env: NodeJS.ProcessEnv): Promise<ColdStart> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...nodeOptions, '--input-type=module', '-e', coldStartRunner], {
      env: { ...env, BENCH_BUNDLE: pathToFileURL(bundle).href, BENCH_EVENT: JSON.stringify(event), BENCH_WARM: String(WARM_REQUESTS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    let total = 0;
    const resultLines = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith(RESULT_PREFIX))
        .map((line) => line.slice(RESULT_PREFIX.length));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = resultLines();
      // The first line marks the cold answer; the second follows the warm requests.
      if (lines.length >= 1 && total === 0) total = performance.now() - started;
      if (lines.length < 2) return;
      done({ total, ...JSON.parse(lines[0]!), ...JSON.parse(lines[1]!) });
    });
    child.once('exit', (code) => {
      if (resultLines().length < 2) fail(new Error(`cold start run of ${bundle} exited with ${code} and no answer`));
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface ColdStartCase {
  label: string;
  bundle: string;
  event: unknown;
  /** What the request answers when it succeeds. */
  status: number;
  nodeOptions: string[];
}

/** Cases take turns, run after run, so that a busy moment of the machine hits them all alike. */
async function medianColdStarts(cases: ColdStartCase[], env: NodeJS.ProcessEnv): Promise<ColdStart[]> {
  const runs: ColdStart[][] = cases.map(() => []);
  for (let run = 0; run < RUNS; run++) {
    for (const [index, benchCase] of cases.entries()) runs[index]!.push(await coldStart(benchCase, env));
  }
  return runs.map((caseRuns, index) => {
    const { label, status } = cases[index]!;
    const statuses = new Set(caseRuns.map((run) => run.status));
    if (statuses.size !== 1 || !statuses.has(status)) throw new Error(`${label} answered ${[...statuses].join(', ')}, expected ${status}`);
    return {
      total: median(caseRuns.map((run) => run.total)),
      boot: median(caseRuns.map((run) => run.boot)),
      import: median(caseRuns.map((run) => run.import)),
      request: median(caseRuns.map((run) => run.request)),
      cpu: median(caseRuns.map((run) => run.cpu)),
      warm: median(caseRuns.map((run) => run.warm)),
      rss: median(caseRuns.map((run) => run.rss)),
      status,
    };
  });
}

const sizes = await buildFunctions();
console.log('Bundle sizes (minified ESM, AWS SDK bundled)');
console.log(formatSizeTable(sizes));

const bareBundle = join(benchDir, 'bare', 'index.mjs');
mkdirSync(join(benchDir, 'bare'), { recursive: true });
writeFileSync(bareBundle, 'export const handler = async () => ({ statusCode: 200 });\n');

const stack = await startBenchStack(benchDir);
// The checkout's provider, reached through MERCADOPAGO_API_URL (read per call); imported only now, as lib/config.ts reads DYNAMODB_ENDPOINT at import.
const { startFakeMercadoPago } = await import('../support/fake-mercadopago.ts');
const mercadoPago = await startFakeMercadoPago();
process.env.MERCADOPAGO_API_URL = mercadoPago.url;
try {
  // Imported only now: the table modules read TABLE_NAME (set by the local stack) at import.
  const { createStore } = await import('#lib/db/store.ts');
  const { createApiToken } = await import('#lib/db/credential.ts');
  const { sampleEvent } = await import('#infra/local/events.ts');
  const store = await createStore({ name: 'Bench store', domain: `bench-${process.pid}.localhost` });
  const { api_token: apiToken } = await createApiToken(store.id);
  const created = await fetch(`${stack.apiUrl}/v1/app/package`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'VIP', price: 9.99, commands: [{ command: 'give {client_identifier} vip' }] }),
  });
  const packageId = ((await created.json()) as { id: number }).id;
  mercadoPago.addAccount('APP_USR-bench-token', 4242);
  const connected = await fetch(`${stack.apiUrl}/v1/app/payment/provider/mercadopago`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ access_token: 'APP_USR-bench-token', webhook_secret: 'bench-webhook-secret', gateways: ['PIX'] }),
  });
  if (connected.status !== 200) throw new Error(`connecting Mercado Pago answered ${connected.status}`);
  const bodies: Record<(typeof COLD_START_FUNCTIONS)[number], unknown> = {
    'tag-list': undefined,
    'order-create': { client_identifier: 'Steve', client_email: 'steve@example.com', client_name: 'Steve', packages: [{ package_id: packageId, quantity: 1 }] },
    'auth-login': { email: 'bench-{{unique}}@example.com' },
    'webstore-checkout': { cart: [{ package_id: packageId, quantity: 1 }], client_name: 'Steve', client_email: 'steve@example.com', client_identifier: 'Steve', gateway: 'PIX' },
  };
  const eventOf = (name: (typeof COLD_START_FUNCTIONS)[number]) => {
    const event = sampleEvent(routes[name]);
    const body = bodies[name] === undefined ? event.body : JSON.stringify(bodies[name]);
    return JSON.parse(
      JSON.stringify({ ...event, body })
        .replaceAll('{{api_token}}', apiToken)
        .replaceAll('{{store_domain}}', store.domain),
    );
  };

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    TABLE_NAME: stack.tableName,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    IMAGES_BASE_URL: 'http://images.invalid',
    MAILER: 'outbox',
    OUTBOX_FILE: join(benchDir, 'outbox.jsonl'),
    // The stack's own secret file (on AWS: Secrets Manager, one GetSecretValue per container, which no local figure shows).
    SERVER_SECRET_FILE: process.env.SERVER_SECRET_FILE,
    // The checkout's: the local keyring of the provider secrets (KMS on AWS), the fake Mercado Pago, the notification_url's base.
    PAYMENT_SECRETS_KEY_FILE: process.env.PAYMENT_SECRETS_KEY_FILE,
    MERCADOPAGO_API_URL: mercadoPago.url,
    API_BASE_URL: process.env.API_BASE_URL,
    METRICS_NAMESPACE: 'StoreApi/bench',
    FUNCTION_GROUP: 'bench',
  };
  const functionCase = (name: (typeof COLD_START_FUNCTIONS)[number], nodeOptions: string[] = [], compared?: { label: string; dir: string }): ColdStartCase => ({
    label: `${name}${nodeOptions.length ? ` ${nodeOptions.join(' ')}` : ''}${compared ? ` [${compared.label}]` : ''}`,
    bundle: join(compared?.dir ?? defaultFunctionsDir, name, 'index.mjs'),
    event: eventOf(name),
    status: (routes[name] as RouteSpec).status ?? 200,
    nodeOptions,
  });
  const cases: ColdStartCase[] = [
    { label: 'bare handler (returns 200)', bundle: bareBundle, event: {}, status: 200, nodeOptions: [] },
    ...COLD_START_FUNCTIONS.map((name) => functionCase(name)),
    // Lambda runs every function with NODE_OPTIONS=--enable-source-maps: its price at load time.
    functionCase('tag-list', ['--enable-source-maps']),
    ...comparedBundles.flatMap((compared) => COLD_START_FUNCTIONS.map((name) => functionCase(name, [], compared))),
  ];
  const results = await medianColdStarts(cases, env);

  const width = Math.max(...cases.map(({ label }) => label.length));
  console.log(`\nCold start, median of ${RUNS} fresh processes (Node ${process.versions.node}), ms`);
  console.log(
    `${'case'.padEnd(width)}  ${'spawn→answer'.padStart(12)}  ${'node boot'.padStart(9)}  ${'import'.padStart(7)}  ${'request'.padStart(7)}  ${'CPU'.padStart(5)}  ${'warm req'.padStart(8)}  ${'RSS MB'.padStart(6)}`,
  );
  for (const [index, { label }] of cases.entries()) {
    const figures = results[index]!;
    console.log(
      `${label.padEnd(width)}  ${figures.total.toFixed(0).padStart(12)}  ${figures.boot.toFixed(0).padStart(9)}  ${figures.import.toFixed(0).padStart(7)}  ${figures.request.toFixed(0).padStart(7)}  ${figures.cpu.toFixed(0).padStart(5)}  ${figures.warm.toFixed(1).padStart(8)}  ${figures.rss.toFixed(0).padStart(6)}`,
    );
  }
  console.log(`(CPU: user + system time of the process up to its cold answer; warm req: median of ${WARM_REQUESTS} further requests in the same process; RSS after them)`);
} finally {
  await stack.stop();
  await mercadoPago.stop();
}
