import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildAgent } from '#infra/build-agent.ts';
import { createPackage, orderBody, placeOrder } from '../support/builders.ts';
import { newStore } from '../support/client.ts';
import { approvedOrder, createServer } from '../support/delivery.ts';
import { FakeRconServer } from '../support/fake-rcon.ts';
import { FlakyApi } from '../support/flaky-api.ts';

/**
 * `npm run build:agent`'s one file, run by Node from a folder with nothing else in it (no
 * node_modules), as a store owner runs it: flags, secrets from files and the environment, exit
 * codes, --once, and a stop by signal (extensions section 14).
 */
let folder: string;
let agentFile: string;
let externals: string[];
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'delivery-agent-'));
  ({ outfile: agentFile, externals } = await buildAgent(join(folder, 'agent.mjs')));
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Run {
  stdout: string;
  stderr: string;
  code: Promise<number | null>;
  signal: (name: NodeJS.Signals) => void;
}

function runAgent(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [agentFile, ...args], { cwd: folder, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: Run = {
    stdout: '',
    stderr: '',
    code: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    signal: (name) => child.kill(name),
  };
  child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return run;
}

async function game(): Promise<FakeRconServer> {
  const server = await new FakeRconServer({ password: 'rcon-secret' }).start(0);
  cleanups.push(() => server.stop());
  return server;
}

/** Secrets in files the way a service keeps them (0600, with the newline `echo` adds). */
function secretFiles(key: string) {
  writeFileSync(join(folder, 'key'), `${key}\n`, { mode: 0o600 });
  writeFileSync(join(folder, 'rcon-password'), 'rcon-secret\n', { mode: 0o600 });
  return ['--key-file', join(folder, 'key'), '--rcon-password-file', join(folder, 'rcon-password')];
}

const api = () => `${inject('apiUrl')}/v1`;

describe('dist/agent.mjs', () => {
  it('needs nothing beside it but Node: every module it leaves unbundled is built in', () => {
    expect(externals.length).toBeGreaterThan(0);
    expect(externals.filter((name) => !builtinModules.includes(name.replace(/^node:/, '')))).toEqual([]);
    expect(readFileSync(agentFile, 'utf8')).toContain('Bundles rcon-client 4.2.5 (MIT License');
  });

  it('prints its usage with --help and exits 0', async () => {
    const run = runAgent(['--help']);
    expect(await run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: node agent\.mjs --api <API base> --rcon <host:port>/);
  });

  it('exits 2 with one line on stderr for a missing key, a secret given as a flag, or a bad flag', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--api', api(), '--rcon', '127.0.0.1:1'], { RCON_PASSWORD: 'x' }, 'delivery agent: the delivery key is missing: set STORE_API_KEY or pass --key-file <path>\n'],
      [['--api', api(), '--rcon', '127.0.0.1:1'], { STORE_API_KEY: 'x' }, 'delivery agent: the RCON password is missing: set RCON_PASSWORD or pass --rcon-password-file <path>\n'],
      [
        ['--api', api(), '--rcon', '127.0.0.1:1', '--key', 'sak_x'],
        {},
        'delivery agent: the delivery key is never a command-line value: set STORE_API_KEY or pass --key-file <path>\n',
      ],
      [
        ['--api', api(), '--rcon', '127.0.0.1:1', '--key-file', join(folder, 'absent')],
        { RCON_PASSWORD: 'x' },
        `delivery agent: --key-file: cannot read ${join(folder, 'absent')} (ENOENT)\n`,
      ],
      [
        ['--api', api(), '--rcon', '127.0.0.1:1', '--interval', 'x'],
        { STORE_API_KEY: 'k', RCON_PASSWORD: 'x' },
        'delivery agent: --interval must be a number of seconds from 1 to 3600, not "x"\n',
      ],
    ];
    for (const [args, env, line] of cases) {
      const run = runAgent(args, env);
      expect(await run.code).toBe(2);
      expect(run.stderr).toBe(line);
      expect(run.stdout).toBe('');
    }
    const unwritable = runAgent(['--api', api(), '--rcon', '127.0.0.1:1', '--state-file', join(folder, 'absent', 'pending.json')], { STORE_API_KEY: 'k', RCON_PASSWORD: 'x' });
    expect(await unwritable.code).toBe(2);
    expect(unwritable.stderr).toMatch(new RegExp(`^delivery agent: --state-file ${join(folder, 'absent', 'pending.json')}: ENOENT: no such file or directory, open .*\n$`));
  });

  it('--once: prints its version and the server it serves, delivers, prints one line per command, exits 0', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('give', 'Gave 1 [Diamond] to Steve');
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);

    const run = runAgent(['--api', api(), '--rcon', `127.0.0.1:${fake.port}`, '--once', ...secretFiles(server.key)]);
    expect(await run.code).toBe(0);
    const [command] = (await store.get(`/v1/app/order/${order.id}/command`)).body;
    expect(command).toMatchObject({ status: 'DONE', response: 'Gave 1 [Diamond] to Steve' });
    expect(run.stdout.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^store-api delivery agent 1\\.0\\.0(\\+[0-9a-f]+)?: game server 127\\.0\\.0\\.1:${fake.port} \\(RCON\\), store API ${api()}, one cycle$`)),
      `order ${order.id} command ${command.id}: DONE (attempt 1) give Steve diamond 1 -> Gave 1 [Diamond] to Steve`,
      '',
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toContain(server.key);
    expect(run.stdout).not.toContain('rcon-secret');
  });

  it('--once exits 1 with the reason when the game server cannot be reached, and claims nothing', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const port = fake.port;
    await fake.stop();
    const { order } = await approvedOrder(store, [{ command: 'say hi' }]);
    const run = runAgent(['--api', api(), '--rcon', `127.0.0.1:${port}`, '--once'], { STORE_API_KEY: server.key, RCON_PASSWORD: 'rcon-secret' });
    expect(await run.code).toBe(1);
    expect(run.stderr).toBe(`game server refused the RCON connection (127.0.0.1:${port}): is it running with RCON enabled?\n`);
    expect((await store.get(`/v1/app/order/${order.id}/command`)).body[0]).toMatchObject({ status: 'PENDING', tries: 0 });
  });

  it('exits 1 when the API refuses the key', async () => {
    const fake = await game();
    const run = runAgent(['--api', api(), '--rcon', `127.0.0.1:${fake.port}`], { STORE_API_KEY: 'sak_not_a_key', RCON_PASSWORD: 'rcon-secret' });
    expect(await run.code).toBe(1);
    expect(run.stderr).toMatch(/^the API refused the delivery key: POST \/delivery\/claim: 401 /);
    expect(`${run.stdout}${run.stderr}`).not.toContain('sak_not_a_key');
    expect(`${run.stdout}${run.stderr}`).not.toContain('rcon-secret');
  });

  it('on SIGTERM finishes the command it runs, acks it, runs no other, and exits 0', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const pkg = await createPackage(store, { commands: [{ command: 'give {client_identifier} diamond {order_id}' }] });
    const orders = [];
    for (let i = 0; i < 2; i++) {
      const order = await placeOrder(store, orderBody(pkg.id));
      await store.post(`/v1/app/order/${order.id}/approve`);
      orders.push(order.id);
    }
    fake.answerNext({ text: 'Gave 1 [Diamond] to Steve', delayMs: 1500 });
    const run = runAgent(['--api', api(), '--rcon', `127.0.0.1:${fake.port}`], { STORE_API_KEY: server.key, RCON_PASSWORD: 'rcon-secret' });

    await expect.poll(() => fake.deliveries.length, { timeout: 20_000 }).toBe(1);
    run.signal('SIGTERM');
    expect(await run.code).toBe(0);
    expect(run.stdout).toContain('SIGTERM: finishing the acks of what ran, then stopping');
    expect(fake.deliveries.map((entry) => entry.command)).toEqual([`give Steve diamond ${orders[0]}`]);
    expect((await store.get(`/v1/app/order/${orders[0]}/command`)).body[0]).toMatchObject({ status: 'DONE', response: 'Gave 1 [Diamond] to Steve' });
    // Left to its lease: handed out again later, no try counted.
    expect((await store.get(`/v1/app/order/${orders[1]}/command`)).body[0]).toMatchObject({ status: 'PENDING', tries: 0 });
  });

  it('keeps a result it could not ack in --state-file through a stop, and acks it at the next start', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('give', 'Gave 1 [Diamond] to Steve');
    const proxy = new FlakyApi(inject('apiUrl'));
    const proxied = await proxy.start();
    cleanups.push(() => proxy.stop());
    proxy.fail('/delivery/ack', 1_000_000);
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const stateFile = join(folder, 'pending.json');
    const env = { STORE_API_KEY: server.key, RCON_PASSWORD: 'rcon-secret' };

    const first = runAgent(['--api', proxied, '--rcon', `127.0.0.1:${fake.port}`, '--state-file', stateFile], env);
    await expect.poll(() => first.stderr, { timeout: 20_000 }).toContain('acking: POST /delivery/ack: 503');
    first.signal('SIGTERM');
    // Still trying: the first signal waits for the acks.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    first.signal('SIGTERM');
    expect(await first.code).toBe(1);
    expect(first.stderr).toContain('1 result(s) ran but are not acked');
    const [command] = (await store.get(`/v1/app/order/${order.id}/command`)).body;
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).pending).toEqual([
      { lease_id: expect.any(String), result: { id: command.id, status: 'DONE', response: 'Gave 1 [Diamond] to Steve' } },
    ]);

    const second = runAgent(['--api', api(), '--rcon', `127.0.0.1:${fake.port}`, '--state-file', stateFile, '--once'], env);
    expect(await second.code).toBe(0);
    expect(second.stdout).toContain('acking 1 result(s) left by the last run');
    expect((await store.get(`/v1/app/order/${order.id}/command`)).body[0]).toMatchObject({ status: 'DONE', response: 'Gave 1 [Diamond] to Steve' });
    expect(fake.deliveries).toHaveLength(1);
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({ pending: [] });
  });
});
