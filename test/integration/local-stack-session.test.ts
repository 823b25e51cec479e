import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnStack, stackEnv, waitUntil, type SpawnedStack } from '../support/spawned-stack.ts';

/**
 * `npm start` as a user runs it, with the demo store and reload on, in a copy of the project
 * (so that the reload test may edit sources): the operator's curl session (docs/operator.md), `npm run invoke`, reload.
 */
const hasCurl = spawnSync('curl', ['--version']).status === 0;
let copy: string;
let stack: SpawnedStack;

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'store-api-copy-'));
  for (const entry of ['functions', 'lib', 'infra', 'events', 'examples', 'package.json', 'tsconfig.json']) cpSync(entry, join(copy, entry), { recursive: true });
  symlinkSync(resolve('node_modules'), join(copy, 'node_modules'));
  mkdirSync(join(copy, '.local'));
  // The session reads ./.local/demo.json, as on a developer's machine.
  stack = spawnStack(await stackEnv({ LOCAL_DIR: join(copy, '.local'), LOCAL_SEED: '1', LOCAL_RELOAD: '1' }), { cwd: copy });
  await stack.ready;
}, 120_000);

afterAll(async () => {
  if (stack?.child.exitCode === null) {
    stack.child.kill('SIGTERM');
    await stack.exited;
  }
  rmSync(copy, { recursive: true, force: true });
});

/** The block of docs/operator.md between its curl-session markers, verbatim. */
function operatorCurlSession(): string {
  const page = readFileSync('docs/operator.md', 'utf8');
  const block = /<!-- curl-session:start -->\s*```sh\n([\s\S]*?)```\s*<!-- curl-session:end -->/.exec(page);
  if (!block) throw new Error('docs/operator.md has no curl-session block between its markers');
  return block[1]!;
}

describe('the local stack as a developer uses it', () => {
  it.skipIf(!hasCurl)(
    hasCurl
      ? 'runs the operator curl session of docs/operator.md verbatim, twice, with no 4xx or 5xx, the TEST purchase paid and approved'
      : 'operator curl session: SKIPPED, curl is not installed on this machine',
    () => {
      const session = operatorCurlSession();
      const commands = session.split('\n').filter((line) => /(^|\$\()curl /.test(line)).length;
      for (const run of [1, 2]) {
        const statuses = mkdtempSync(join(tmpdir(), 'store-api-curl-'));
        // Each curl call dumps its response headers to a file of its own: the status of every call, pipes and $(...) included.
        const script = `set -e\ncurl() { command curl -D "$(mktemp -p ${statuses})" "$@"; }\n${session}`;
        const result = spawnSync('bash', ['-c', script], { cwd: copy, encoding: 'utf8' });
        expect(result.status, `run ${run}: ${result.stderr}`).toBe(0);
        // The final answer of each call: a call that follows a redirect (-L, the TEST page's button) dumps each answer's headers in turn.
        const lines = readdirSync(statuses).map(
          (file) =>
            readFileSync(join(statuses, file), 'utf8')
              .split('\r\n')
              .filter((line) => line.startsWith('HTTP/'))
              .at(-1)!,
        );
        rmSync(statuses, { recursive: true });
        expect(lines, `run ${run}`).toHaveLength(commands);
        for (const line of lines) expect(line, `run ${run}: ${result.stdout}`).toMatch(/^HTTP\/1\.1 2\d\d /);
        // The paid walkthrough: "pay" on the TEST page, the notification approved the order, and its delivery is queued.
        expect(result.stdout, `run ${run}`).toContain('<dd id="status">PAID');
        expect(result.stdout, `run ${run}`).toContain('notify route answered 200');
        expect(result.stdout, `run ${run}`).toContain('{"status":"APPROVED"}');
        expect(result.stdout, `run ${run}`).toMatch(/^PENDING lp user alex parent add vip$/m);
        // A second run the same second would reuse its names.
        if (run === 1) spawnSync('sleep', ['1.1']);
      }
    },
  );

  it('answers the order-create sample event 2xx through `npm run invoke order-create`', () => {
    const result = spawnSync('npm', ['run', '--silent', 'invoke', 'order-create'], { cwd: copy, env: stack.env, encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.slice(result.stdout.indexOf('{')))).toMatchObject({ statusCode: 200, body: { status: 'PENDING' } });
  });

  it('answers the sample events that act on what the seed prepared through `npm run invoke` (a lease, a webhook attempt, a multipart file)', () => {
    for (const [name, status] of [
      ['delivery-ack', 200],
      ['webhook-redeliver', 202],
      ['package-image-put', 200],
    ] as const) {
      const result = spawnSync('npm', ['run', '--silent', 'invoke', name], { cwd: copy, env: stack.env, encoding: 'utf8' });
      expect(result.status, `${name}: ${result.stdout}${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))), name).toMatchObject({ statusCode: status });
    }
  });

  it('reloads a changed lib/ module on the next request, without a restart', async () => {
    const probe = () => fetch(`http://127.0.0.1:${stack.port}/v1/openapi.json`).then((response) => response.headers.get('x-reload-probe'));
    expect(await probe()).toBeNull();
    const reply = join(copy, 'lib/http/reply.ts');
    writeFileSync(reply, readFileSync(reply, 'utf8').replace("'cache-control': 'no-store',", "'cache-control': 'no-store', 'x-reload-probe': 'reloaded',"));
    expect(await waitUntil(async () => (await probe()) === 'reloaded', 10_000)).toBe(true);
  });

  it("reloads a file replaced by a rename (sed -i, git checkout, an editor's rename-save), and its later edits too", async () => {
    const probe = () => fetch(`http://127.0.0.1:${stack.port}/v1/openapi.json`).then((response) => response.headers.get('x-rename-probe'));
    const reply = join(copy, 'lib/http/reply.ts');
    const original = readFileSync(reply, 'utf8');
    const withProbe = (value: string) => original.replace("'cache-control': 'no-store',", `'cache-control': 'no-store', 'x-rename-probe': '${value}',`);
    const replaceByRename = (text: string) => {
      const temporary = join(copy, 'lib/http/.reply.ts.swp');
      writeFileSync(temporary, text);
      renameSync(temporary, reply);
    };
    replaceByRename(withProbe('renamed'));
    expect(await waitUntil(async () => (await probe()) === 'renamed', 10_000)).toBe(true);
    // The file is a new inode now: an in-place edit after the rename is seen too, and another rename after that.
    writeFileSync(reply, withProbe('edited after the rename'));
    expect(await waitUntil(async () => (await probe()) === 'edited after the rename', 10_000)).toBe(true);
    replaceByRename(withProbe('renamed again'));
    expect(await waitUntil(async () => (await probe()) === 'renamed again', 10_000)).toBe(true);
    writeFileSync(reply, withProbe('edited again'));
    expect(await waitUntil(async () => (await probe()) === 'edited again', 10_000)).toBe(true);
  });
});
