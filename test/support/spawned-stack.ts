import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.ts';

/**
 * A local stack of a test's own, started the way a user starts it (`npm start` by default), on
 * free ports with a private LOCAL_DIR, for the tests of the stack itself: its signals, its refusals,
 * its reload, the operator curl session (docs/operator.md).
 */
export interface SpawnedStack {
  child: ChildProcess;
  port: number;
  env: NodeJS.ProcessEnv;
  localDir: string;
  /** Everything written on stdout and stderr so far. */
  output(): string;
  /** Resolves with the `{"ready":...}` line, or rejects when the process exits first. */
  ready: Promise<Record<string, string>>;
  exited: Promise<unknown>;
}

export async function stackEnv(overrides: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const localDir = overrides.LOCAL_DIR ?? mkdtempSync(join(tmpdir(), 'store-api-stack-'));
  return {
    ...process.env,
    PORT: String(await freePort()),
    DYNAMODB_PORT: String(await freePort()),
    S3_PORT: String(await freePort()),
    OWNER_PORT: String(await freePort()),
    LOCAL_DIR: localDir,
    LOCAL_BIN_DIR: resolve('.local', 'bin'),
    LOCAL_IN_MEMORY: '1',
    LOCAL_SEED: '0',
    LOCAL_LOG: '0',
    LOCAL_RELOAD: '0',
    DYNAMODB_ENDPOINT: '',
    S3_ENDPOINT: '',
    TABLE_NAME: '',
    IMAGES_BUCKET: '',
    // Its own host in the URLs it gives out (notification_url, the TEST page), not the test run's stack.
    API_BASE_URL: '',
    ...overrides,
  };
}

export function spawnStack(env: NodeJS.ProcessEnv, options: { cwd?: string; command?: string[] } = {}): SpawnedStack {
  const [command, ...args] = options.command ?? ['npm', 'start', '--silent'];
  const child = spawn(command!, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const exited = once(child, 'exit');
  const ready = new Promise<Record<string, string>>((done, fail) => {
    child.once('exit', (code, signal) => fail(new Error(`local stack exited (${code ?? signal}) before it was ready: ${output}`)));
    child.stdout!.on('data', () => {
      const line = output.split('\n').find((text) => text.startsWith('{"ready"'));
      if (line) done(JSON.parse(line));
    });
  });
  ready.catch(() => undefined);
  return { child, port: Number(env.PORT), env, localDir: env.LOCAL_DIR!, output: () => output, ready, exited };
}

/** Every process below `pid`, read from `ps` (the tree npm start builds: npm, sh, node, java, esbuild). */
export function descendantsOf(pid: number): number[] {
  const table = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout;
  const children = new Map<number, number[]>();
  for (const line of table.trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    children.set(parent!, [...(children.get(parent!) ?? []), child!]);
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return condition();
}
