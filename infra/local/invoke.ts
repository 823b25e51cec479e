import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * `npm run invoke -- <function> [event file]`: runs one function's handler on this machine
 * against the local stack (start it with `npm start`) with events/<function>.json or the given
 * event, its placeholders filled from <LOCAL_DIR>/demo.json or the environment (ACCESS_TOKEN,
 * SESSION; issued for the demo buyer when absent). Prints the response; exits 1 on a 4xx or 5xx.
 * Without a function it lists them (with each sample's method and path); an unknown name or a
 * missing file is one line (exit 2); a sample that takes leases or spends what the seed prepared
 * for it (or deletes) says so on stderr before it runs.
 */
const [name, eventFileArgument] = process.argv.slice(2);
// One line for every way a name or a file can be wrong: a user typo is not a stack trace.
const functionNames = readdirSync('functions')
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3))
  .sort();
const sampleOf = (fn: string) => `events/${fn}.json`;
if (!name || name === '--help' || name === '-h') {
  const width = Math.max(...functionNames.map((fn) => fn.length));
  const describe = (fn: string) => {
    if (!existsSync(sampleOf(fn))) return '(no sample event: pass an event file)';
    const { requestContext, rawPath } = JSON.parse(readFileSync(sampleOf(fn), 'utf8')) as { requestContext: { http: { method: string } }; rawPath: string };
    return `${requestContext.http.method} ${rawPath}`;
  };
  console.log(
    [
      'usage: npm run invoke -- <function> [event file]   e.g. npm run invoke -- tag-list',
      '',
      'functions:',
      ...functionNames.map((fn) => `  ${fn.padEnd(width)}  ${describe(fn)}`),
    ].join('\n'),
  );
  process.exit(0);
}
const fail = (message: string): never => {
  console.error(`npm run invoke: ${message}`);
  process.exit(2);
};
if (!functionNames.includes(name)) fail(`no function "${name}" (\`npm run invoke\` lists them)`);
const eventFile = eventFileArgument ?? sampleOf(name);
if (!existsSync(eventFile)) fail(eventFileArgument ? `no event file ${eventFile}` : `${name} has no sample event: pass an event file (npm run invoke -- ${name} <file>)`);
const eventText = readFileSync(eventFile, 'utf8');

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

const { runnableEvent, sampleWarning } = await import('#infra/local/invoke-event.ts');
const warning = sampleWarning(name, eventText);
if (warning) console.error(warning);
const event = await runnableEvent(eventText, localDir);
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
