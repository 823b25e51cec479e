import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startJobTimers } from '#infra/local/jobs.ts';
import { startLocalStack } from '#infra/local/stack.ts';
import { LocalStackError } from '#infra/local/preflight.ts';

/**
 * `npm start`: the whole service on this machine. Environment:
 * HOST (127.0.0.1; 0.0.0.0 to open the API and S3 to the network), PORT (3000), DYNAMODB_PORT (8000), S3_PORT (4569),
 * OWNER_PORT (3001: the owner backend example, on 127.0.0.1, run with the demo store), DYNAMODB_ENDPOINT / S3_ENDPOINT to use
 * services you already run, LOCAL_DIR (.local), LOCAL_BIN_DIR (.local/bin), LOCAL_IN_MEMORY=1 and
 * LOCAL_SEED=0 (the test run), LOCAL_LOG=0 (no request lines), LOCAL_RELOAD=0 (no reload of
 * changed handlers); WEBHOOK_RETRY_SCALE (shrinks the webhook retry schedule, e.g. 0.00001 in
 * tests) and WEBHOOK_TIMEOUT_MS (10000).
 */
const env = process.env;
// Development machines run Node 20; Lambda runs a newer runtime. The SDK's notice is noise here.
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const stack = await startLocalStack({
  localDir: env.LOCAL_DIR,
  binDir: env.LOCAL_BIN_DIR,
  host: env.HOST || '127.0.0.1',
  port: Number(env.PORT ?? 3000),
  dynamodbPort: Number(env.DYNAMODB_PORT ?? 8000),
  s3Port: Number(env.S3_PORT ?? 4569),
  ownerPort: Number(env.OWNER_PORT ?? 3001),
  inMemory: env.LOCAL_IN_MEMORY === '1',
  seedDemo: env.LOCAL_SEED !== '0',
  log: env.LOCAL_LOG !== '0',
  reload: env.LOCAL_RELOAD !== '0',
}).catch((error: unknown) => {
  // A clash the user fixes with one variable is one line, not a stack trace.
  if (!(error instanceof LocalStackError)) throw error;
  console.error(`npm start: ${error.message}`);
  process.exit(1);
});

// One machine-readable line first (the test run waits for it), then the human summary.
console.log(
  JSON.stringify({
    ready: true,
    api_url: stack.apiUrl,
    dynamodb_endpoint: stack.dynamodbEndpoint,
    s3_endpoint: stack.s3Endpoint,
    table: stack.tableName,
    bucket: stack.bucket,
    owner_backend_url: stack.ownerBackendUrl,
  }),
);
console.log(`store-api is up: ${stack.apiUrl}/v1  (API reference: ${stack.apiUrl}/docs)`);
if (stack.ownerBackendUrl) {
  const demo = JSON.parse(readFileSync(join(stack.localDir, 'demo.json'), 'utf8')) as { store_url: string };
  console.log(`demo store: ${demo.store_url}/  (${stack.localDir}/demo.json; its owner backend: ${stack.ownerBackendUrl})`);
}

// The scheduled jobs (lib/routes/jobs.ts), as EventBridge runs them on AWS.
const stopJobs = startJobTimers(env.LOCAL_LOG !== '0');

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  stopJobs();
  await stack.stop();
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, shutdown);
// npm forwards SIGINT and SIGTERM to this process but not SIGHUP, and a wrapper killed outright
// forwards nothing: when the parent goes away, this process is reparented, and stops the stack.
const parentPid = process.ppid;
setInterval(() => process.ppid !== parentPid && shutdown(), 500).unref();
