import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort } from '../support/ports.ts';
import { makeTestPki, type TestPki } from '../support/test-pki.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    apiUrl: string;
    apiPort: number;
    dynamodbEndpoint: string;
    s3Endpoint: string;
    tableName: string;
    bucket: string;
    localDir: string;
    /** The port the stack's MERCADOPAGO_API_URL names: a test file that starts the fake Mercado Pago there is the provider the stack calls. */
    mercadopagoPort: number;
    /** The ports of the stack's STRIPE_API_URL and PAYPAL_API_URL, for the fakes' test files. */
    stripePort: number;
    paypalPort: number;
    /** The run's test CA: the stack trusts its root for PayPal's webhook certificates (PAYPAL_TRUSTED_ROOTS_FILE). */
    paypalPki: TestPki;
  }
}

/**
 * Starts the local stack once for the whole integration run: the same `infra/local/start.ts`
 * that `npm start` runs, in a child process, on free ports, with DynamoDB Local in memory.
 */
export default async function setup(project: TestProject) {
  // Nothing listens there until a test file starts the fake: any other call to Mercado Pago is refused, as from a stack offline.
  const [mercadopagoPort, stripePort, paypalPort] = [await freePort(), await freePort(), await freePort()];
  const paypalPki = makeTestPki();
  const rootsDir = mkdtempSync(join(tmpdir(), 'paypal-roots-'));
  writeFileSync(join(rootsDir, 'roots.pem'), paypalPki.rootPem);
  const stack = await startStackProcess({
    LOCAL_SEED: '0',
    MERCADOPAGO_API_URL: `http://127.0.0.1:${mercadopagoPort}`,
    STRIPE_API_URL: `http://127.0.0.1:${stripePort}`,
    PAYPAL_API_URL: `http://127.0.0.1:${paypalPort}`,
    PAYPAL_TRUSTED_ROOTS_FILE: join(rootsDir, 'roots.pem'),
  });
  project.provide('mercadopagoPort', mercadopagoPort);
  project.provide('stripePort', stripePort);
  project.provide('paypalPort', paypalPort);
  project.provide('paypalPki', paypalPki);
  project.provide('apiUrl', stack.ready.api_url!);
  project.provide('apiPort', stack.port);
  project.provide('dynamodbEndpoint', stack.ready.dynamodb_endpoint!);
  project.provide('s3Endpoint', stack.ready.s3_endpoint!);
  project.provide('tableName', stack.ready.table!);
  project.provide('bucket', stack.ready.bucket!);
  project.provide('localDir', stack.localDir);
  return async () => {
    await stack.stop();
    rmSync(rootsDir, { recursive: true, force: true });
  };
}

/** The local stack in a child process on free ports, in its own LOCAL_DIR; `env` adds to or overrides its environment. */
export async function startStackProcess(env: Record<string, string>) {
  const localDir = resolve('.local', `test-${process.pid}-${env.LOCAL_SEED === '1' ? 'seeded' : 'empty'}`);
  const [port, dynamodbPort, s3Port, ownerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      DYNAMODB_PORT: String(dynamodbPort),
      S3_PORT: String(s3Port),
      // The owner backend example runs with a seeded demo store only; on a port of its own all the same.
      OWNER_PORT: String(ownerPort),
      LOCAL_DIR: localDir,
      LOCAL_BIN_DIR: resolve('.local', 'bin'),
      LOCAL_IN_MEMORY: '1',
      LOCAL_LOG: '0',
      DYNAMODB_ENDPOINT: '',
      S3_ENDPOINT: '',
      TABLE_NAME: '',
      IMAGES_BUCKET: '',
      // A day of webhook retries in about a second, and a short receiver timeout (webhook.test.ts).
      WEBHOOK_RETRY_SCALE: '0.00001',
      WEBHOOK_TIMEOUT_MS: '500',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<Record<string, string>>((done, fail) => {
    let buffer = '';
    const timer = setTimeout(() => fail(new Error('local stack did not start within 120 s')), 120_000);
    child.once('exit', (code) => fail(new Error(`local stack exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('{"ready"')) continue;
        clearTimeout(timer);
        done(JSON.parse(line));
      }
    });
  });
  // Keep the pipe drained so the child never blocks on a full stdout.
  child.stdout!.resume();

  const stop = async () => {
    // A stack that crashed during the run has already exited: waiting for its exit would hang.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(localDir, { recursive: true, force: true });
  };
  return { ready, port, localDir, stop };
}

export const outboxFileOf = (localDir: string) => join(localDir, 'outbox.jsonl');
