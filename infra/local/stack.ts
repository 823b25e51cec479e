import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createTableInput, tableKeys, tableStream } from '#lib/db/table.ts';
import { startDynamoDbLocal, stopDynamoDbLocal, DYNAMODB_LOCAL_HOST } from '#infra/local/dynamodb-local.ts';
import { IMAGE_ORIGIN_HEADERS } from '#infra/image-origin-headers.ts';
import { acquireStackLock, assertPortFree } from '#infra/local/preflight.ts';
import { ensureLocalPaymentKey, ensureLocalServerSecret } from '#infra/local/server-secret.ts';

/**
 * The whole service on one machine (extensions section 7): DynamoDB Local, the S3 emulator,
 * and the API on one port serving both the /v1 API and the stores' own domains.
 */
export interface LocalStackOptions {
  /** State folder (default `.local`). */
  localDir?: string;
  /** Where the DynamoDB Local jar is kept (default `.local/bin`, shared by every run). */
  binDir?: string;
  /** Interface the API and the S3 emulator listen on (default 127.0.0.1: nothing reachable from the network). */
  host?: string;
  port?: number;
  dynamodbPort?: number;
  s3Port?: number;
  /** Keep nothing on disk (the test run). */
  inMemory?: boolean;
  /** Create the demo store and write demo.json (npm start; not the tests). */
  seedDemo?: boolean;
  /** Port of the owner backend example (examples/owner-backend), run for the demo store on 127.0.0.1 (default 3001); only with seedDemo. */
  ownerPort?: number;
  log?: boolean;
  /** Reload a changed handler or lib/ module on the next request (npm start; not the tests). */
  reload?: boolean;
}

export interface LocalStack {
  apiUrl: string;
  port: number;
  dynamodbEndpoint: string;
  s3Endpoint: string;
  tableName: string;
  bucket: string;
  localDir: string;
  /** The owner backend example holding the demo store's identify key, when the demo store is seeded. */
  ownerBackendUrl?: string;
  stop(): Promise<void>;
}

export const LOCAL_TABLE = 'store-api-local';
export const LOCAL_BUCKET = 'store-api-images-local';
/** s3rver accepts only these credentials. */
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A table kept in .local/data from before an index was added to lib/db/table.ts gets it now, as CloudFormation would add it. */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, existing: Set<string | undefined>): Promise<void> {
  const wanted = createTableInput(tableName);
  for (const index of wanted.GlobalSecondaryIndexes.filter((candidate) => !existing.has(candidate.IndexName))) {
    const names = new Set<string>(index.KeySchema.map((key) => key.AttributeName));
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: wanted.AttributeDefinitions.filter((attribute) => names.has(attribute.AttributeName)),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  }
}

async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A table kept from before webhooks existed gets its stream (webhooks are derived from it).
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: tableStream.viewType } }));
    }
    await addMissingIndexes(client, tableName, new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName)));
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: tableKeys.ttlAttribute, Enabled: true } }));
  } finally {
    client.destroy();
  }
}

async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3RVER_CREDENTIALS });
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}

interface DemoFile {
  api_url: string;
  store_url: string;
  store_id: number;
  store_domain: string;
  identify_key: string;
}

/**
 * Seeds the demo store once (reseeds if the data was reset but demo.json was left behind). Every
 * start writes demo.json's URLs for the port and host it runs on now, and moves the demo webhook's
 * receiver with them, so that nothing the stack prints, writes or hands on names an earlier start's.
 */
async function seedDemo(localDir: string, apiUrl: string, port: number): Promise<DemoFile> {
  const demoFile = join(localDir, 'demo.json');
  const { getStore } = await import('#lib/db/store.ts');
  const { followStackAddress, seedDemoStore } = await import('#infra/local/seed.ts');
  const kept = existsSync(demoFile) ? (JSON.parse(readFileSync(demoFile, 'utf8')) as DemoFile) : undefined;
  const reused = kept && (await getStore(kept.store_id)) ? kept : undefined;
  if (reused) await followStackAddress(reused.store_id, apiUrl);
  const demo = reused ?? (await seedDemoStore(apiUrl));
  const urls = { api_url: `${apiUrl}/v1`, store_url: `http://${demo.store_domain}:${port}` };
  // The URLs first in the file, then the rest as kept.
  const current: DemoFile = { ...urls, ...demo, ...urls };
  writeFileSync(demoFile, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
  return current;
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen());
  });

/** Every connection cut, then the server closed: a keep-alive browser must not hold a stop. */
const closeServer = async (server: Server) => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
};

/** The address clients use: a wildcard bind is reached on loopback; an IPv6 literal needs brackets. */
const urlHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host);

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const localDir = resolve(options.localDir ?? '.local');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3000;
  const dynamodbPort = options.dynamodbPort ?? 8000;
  const s3Port = options.s3Port ?? 4569;
  const ownerPort = options.ownerPort ?? 3001;
  const dataDir = join(localDir, 'data');
  mkdirSync(localDir, { recursive: true });

  // Every clash is found before anything starts, so a failed start leaves nothing behind.
  const releaseLock = acquireStackLock(localDir);
  process.once('exit', releaseLock);
  await assertPortFree(port, host, 'PORT', 'the API');
  if (!process.env.DYNAMODB_ENDPOINT) await assertPortFree(dynamodbPort, DYNAMODB_LOCAL_HOST, 'DYNAMODB_PORT', 'DynamoDB Local');
  if (!process.env.S3_ENDPOINT) await assertPortFree(s3Port, host, 'S3_PORT', 'the S3 emulator');
  // Holds an identify key: loopback only, whatever HOST says.
  if (options.seedDemo) await assertPortFree(ownerPort, '127.0.0.1', 'OWNER_PORT', 'the owner backend example');

  let java: ChildProcess | undefined;
  let dynamodbEndpoint = process.env.DYNAMODB_ENDPOINT;
  if (!dynamodbEndpoint) {
    java = await startDynamoDbLocal({ binDir: resolve(options.binDir ?? '.local/bin'), port: dynamodbPort, dataDir: options.inMemory ? undefined : join(dataDir, 'dynamodb') });
    dynamodbEndpoint = `http://127.0.0.1:${dynamodbPort}`;
    // Never leave the JVM behind, however this process ends.
    process.once('exit', () => java?.kill('SIGKILL'));
  }

  let s3: S3rver | undefined;
  let s3Endpoint = process.env.S3_ENDPOINT;
  if (!s3Endpoint) {
    const directory = options.inMemory ? join(localDir, `s3-${process.pid}`) : join(dataDir, 's3');
    mkdirSync(directory, { recursive: true });
    s3 = new S3rver({ address: host, port: s3Port, directory, silent: true, resetOnClose: Boolean(options.inMemory) });
    // The emulator is also the local image origin: it sends the headers CloudFront adds on AWS.
    // First in the chain, because s3rver's router ends the request without calling on.
    s3.middleware.unshift(async (context, next) => {
      await next();
      context.set(IMAGE_ORIGIN_HEADERS);
    });
    await s3.run();
    s3Endpoint = `http://${urlHost(host)}:${s3Port}`;
  }

  const tableName = process.env.TABLE_NAME || LOCAL_TABLE;
  const bucket = process.env.IMAGES_BUCKET || LOCAL_BUCKET;
  await ensureTable(dynamodbEndpoint, tableName);
  await ensureBucket(s3Endpoint, bucket);

  // The functions read their configuration at import: set it before the first handler loads.
  Object.assign(process.env, {
    TABLE_NAME: tableName,
    IMAGES_BUCKET: bucket,
    IMAGES_BASE_URL: process.env.IMAGES_BASE_URL || `${s3Endpoint}/${bucket}`,
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    S3_ENDPOINT: s3Endpoint,
    AWS_REGION: process.env.AWS_REGION || 'us-east-1',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    MAILER: 'outbox',
    OUTBOX_FILE: join(localDir, 'outbox.jsonl'),
    INSECURE_COOKIES: '1',
    PLAIN_HTTP_STORE_ORIGINS: '1',
    // Receivers on this machine (http://localhost, 127.0.0.1) are allowed here only.
    WEBHOOK_LOCAL_TARGETS: '1',
    // What Secrets Manager holds on AWS: a file of this LOCAL_DIR (mode 0600), made on the first start.
    SERVER_SECRET_FILE: process.env.SERVER_SECRET_FILE || ensureLocalServerSecret(localDir),
    // What the stage's KMS key does on AWS for payment provider secrets: an AES-256-GCM key of this LOCAL_DIR.
    PAYMENT_SECRETS_KEY_FILE: process.env.PAYMENT_SECRETS_KEY_FILE || ensureLocalPaymentKey(localDir),
  });

  const apiUrl = `http://${urlHost(host)}:${port}`;
  // Where providers send notifications (the notification_url of a provider account), and the TEST gateway offered (section 13).
  process.env.API_BASE_URL ||= apiUrl;
  process.env.TEST_GATEWAY ||= '1';
  // The API reference the stack serves at /docs is the one `npm run build` ships: written now, from this route table.
  const { writeApiReference } = await import('#infra/docs.ts');
  writeApiReference();
  // The stream and queue consumers run from the first change on, so the demo seed's webhooks are delivered (infra/local/webhooks.ts).
  const { startConsumers } = await import('#infra/local/webhooks.ts');
  const webhooks = await startConsumers({ endpoint: dynamodbEndpoint, tableName, region: process.env.AWS_REGION! });
  // Seeded before the port opens: whoever waits for the port finds the demo store ready.
  const demo = options.seedDemo ? await seedDemo(localDir, apiUrl, port) : undefined;
  let ownerBackend: Server | undefined;
  let ownerBackendUrl: string | undefined;
  if (demo) {
    // The storefront's "verify my account" works out of the box: the owner's side of the handoff runs in this process.
    const { createOwnerBackend } = await import('../../examples/owner-backend/server.ts');
    ownerBackend = createOwnerBackend({ identifyKey: demo.identify_key, apiUrl: demo.api_url, storeOrigin: demo.store_url });
    await listen(ownerBackend, ownerPort, '127.0.0.1');
    ownerBackendUrl = `http://127.0.0.1:${ownerPort}`;
    // The storefront page reads it (infra/local/pages.ts).
    process.env.OWNER_BACKEND_URL = ownerBackendUrl;
  }
  const { createLocalServer, watchSourcesForReload } = await import('#infra/local/server.ts');
  const stopWatching = options.reload ? watchSourcesForReload() : () => undefined;
  const server: Server = createLocalServer({ log: options.log, webhookInbox: join(localDir, 'webhooks.jsonl') });
  await listen(server, port, host);

  let stopped = false;
  return {
    apiUrl,
    port,
    dynamodbEndpoint,
    s3Endpoint,
    tableName,
    bucket,
    localDir,
    ownerBackendUrl,
    async stop() {
      if (stopped) return;
      stopped = true;
      await webhooks.stop();
      stopWatching();
      await closeServer(server);
      if (ownerBackend) await closeServer(ownerBackend);
      await s3?.close();
      if (java) await stopDynamoDbLocal(java);
      releaseLock();
    },
  };
}
