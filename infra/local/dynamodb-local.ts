import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DynamoDB Local, the official emulator, without Docker: its jar ships inside the npm package
 * amplify-dynamodb-simulator. `npm pack` fetches only that tarball (56 MB) from the registry;
 * we check its SHA-256, unpack `package/emulator` and run it with Java 17.
 */
const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
const TARBALL_SHA256 = '3503ffac19f183407909fecdacf4db51ab1fdad1da7b2f177016670b2d80e4b9';

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

/** Returns the folder holding DynamoDBLocal.jar, downloading it on first use. */
export function ensureDynamoDbLocal(binDir: string): string {
  const target = join(binDir, 'dynamodb-local');
  if (existsSync(join(target, 'DynamoDBLocal.jar'))) return target;
  const work = join(binDir, `.download-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    console.error(`[local] fetching DynamoDB Local (${PACKAGE}) from the npm registry...`);
    run('npm', ['pack', PACKAGE, '--silent', '--pack-destination', work], work);
    const tarball = join(work, 'amplify-dynamodb-simulator-2.9.30.tgz');
    const digest = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    if (digest !== TARBALL_SHA256) throw new Error(`DynamoDB Local tarball checksum mismatch: ${digest}`);
    run('tar', ['xzf', tarball, 'package/emulator'], work);
    rmSync(target, { recursive: true, force: true });
    renameSync(join(work, 'package', 'emulator'), target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return target;
}

/**
 * DynamoDB Local has no option to pick the interface: it builds Jetty's `new Server(port)`, which
 * listens on every interface, and reads no system property for the host (checked in the jar run here, 1.25.1: the
 * options are -port, -inMemory, -dbPath, -sharedDb, -cors, -delayTransientStatuses,
 * -optimizeDbBeforeStartup, -disableTelemetry). Its port is therefore checked on the wildcard
 * address, and docs/local-stack.md says it is reachable from the network.
 */
export const DYNAMODB_LOCAL_HOST = '0.0.0.0';

export interface DynamoDbLocalOptions {
  binDir: string;
  port: number;
  /** Persist here; in memory when undefined. */
  dataDir?: string;
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<ChildProcess> {
  const home = ensureDynamoDbLocal(options.binDir);
  // -sharedDb: one database whatever the access key (and TTL deletion only runs with it).
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    'java',
    ['-Djava.library.path=./DynamoDBLocal_lib', '-jar', 'DynamoDBLocal.jar', '-sharedDb', ...storage, '-port', String(options.port), '-disableTelemetry'],
    {
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  try {
    await waitForPort(options.port, child, () => output);
  } catch (error) {
    // A JVM that never answered must not outlive this failed start (and hold the port for the next).
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

/** Ends the JVM and waits until it has gone (forcibly after 5 s), so that no Java outlives the stack. */
export async function stopDynamoDbLocal(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(force);
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  // A loaded machine (a test run beside other work) can take half a minute to start a JVM.
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}): ${output()}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`DynamoDB Local did not answer on port ${port}: ${output()}`);
}
