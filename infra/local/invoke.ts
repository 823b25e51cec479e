import { existsSync, readFileSync } from 'node:fs';

/**
 * `npm run invoke -- <function> <event file>`: runs one function's handler on this machine
 * against the local stack (start it with `npm start`), with the event's placeholders filled
 * from .local/demo.json or the environment (ACCESS_TOKEN, SESSION). Prints the response.
 */
const [name, eventFile] = process.argv.slice(2);
if (!name || !eventFile) {
  console.error('usage: npm run invoke -- <function> <event file>   e.g. npm run invoke -- tag-list events/tag-list.json');
  process.exit(2);
}

const env = process.env;
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
  OUTBOX_FILE: env.OUTBOX_FILE || '.local/outbox.jsonl',
  INSECURE_COOKIES: '1',
  PLAIN_HTTP_STORE_ORIGINS: '1',
});
env.IMAGES_BASE_URL ||= `${env.S3_ENDPOINT}/${env.IMAGES_BUCKET}`;

const demo: Record<string, unknown> = existsSync('.local/demo.json') ? JSON.parse(readFileSync('.local/demo.json', 'utf8')) : {};
const values: Record<string, string | undefined> = {
  api_token: demo.api_token as string | undefined,
  identify_key: demo.identify_key as string | undefined,
  store_domain: demo.store_domain as string | undefined,
  access_token: env.ACCESS_TOKEN,
  session: env.SESSION,
};
const text = readFileSync(eventFile, 'utf8').replace(/\{\{(\w+)\}\}/g, (match, key: string) => values[key] ?? match);
const event = JSON.parse(text);

const { loadHandler, lambdaContext } = await import('#infra/local/server.ts');
const handler = await loadHandler(name);
const result = await handler(event, lambdaContext(name, event.requestContext?.requestId ?? 'invoke'));
console.log(JSON.stringify({ ...result, body: result.body ? JSON.parse(result.body) : result.body }, null, 2));
