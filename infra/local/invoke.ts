import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * `npm run invoke -- <function> [event file]`: runs one function's handler on this machine
 * against the local stack (start it with `npm start`) with events/<function>.json or the given
 * event, its placeholders filled from <LOCAL_DIR>/demo.json or the environment (ACCESS_TOKEN,
 * SESSION; issued for the demo buyer when absent). Prints the response; exits 1 on a 4xx or 5xx.
 */
const [name, eventFile = `events/${name}.json`] = process.argv.slice(2);
if (!name) {
  console.error('usage: npm run invoke -- <function> [event file]   e.g. npm run invoke -- tag-list');
  process.exit(2);
}

const env = process.env;
const localDir = resolve(env.LOCAL_DIR ?? '.local');
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
Object.assign(env, {
  TABLE_NAME: env.TABLE_NAME || 'store-api-local',
  DYNAMODB_ENDPOINT: env.DYNAMODB_ENDPOINT || `http://127.0.0.1:${env.DYNAMODB_PORT ?? 8000}`,
  S3_ENDPOINT: env.S3_ENDPOINT || `http://127.0.0.1:${env.S3_PORT ?? 4569}`,
  IMAGES_BUCKET: env.IMAGES_BUCKET || 'store-api-images-local',
  AWS_REGION: env.AWS_REGION || 'us-east-1',
  AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID || 'local',
  AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY || 'local',
  MAILER: 'outbox',
  OUTBOX_FILE: env.OUTBOX_FILE || join(localDir, 'outbox.jsonl'),
  INSECURE_COOKIES: '1',
  PLAIN_HTTP_STORE_ORIGINS: '1',
  WEBHOOK_LOCAL_TARGETS: '1',
  // The running stack's secret (it made the file on its first start): codes and cursors it checks are made with it.
  SERVER_SECRET_FILE: env.SERVER_SECRET_FILE || join(localDir, 'server-secret.json'),
  PAYMENT_SECRETS_KEY_FILE: env.PAYMENT_SECRETS_KEY_FILE || join(localDir, 'payment-secrets.key'),
});
env.IMAGES_BASE_URL ||= `${env.S3_ENDPOINT}/${env.IMAGES_BUCKET}`;

const { runnableEvent } = await import('#infra/local/invoke-event.ts');
const event = await runnableEvent(readFileSync(eventFile, 'utf8'), localDir);
const unfilled = [...new Set([...JSON.stringify(event).matchAll(/\{\{(\w+)\}\}/g)].map(([, key]) => key))];
if (unfilled.length > 0) {
  // A demo store seeded by an older version lacks what newer samples act on.
  console.error(`npm run invoke: ${localDir}/demo.json has no ${unfilled.join(', ')}; a demo store seeded before these existed gets them from \`npm run reset\` and a new start`);
}
const { loadHandler, lambdaContext } = await import('#infra/local/server.ts');
const handler = await loadHandler(name);
const result = await handler(event, lambdaContext(name, event.requestContext?.requestId ?? 'invoke'));
console.log(JSON.stringify({ ...result, body: result.body ? JSON.parse(result.body) : result.body }, null, 2));
if ((result.statusCode ?? 200) >= 400) process.exitCode = 1;
