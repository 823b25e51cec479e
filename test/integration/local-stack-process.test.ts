import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantsOf, isAlive, spawnStack, stackEnv, waitUntil, type SpawnedStack } from '../support/spawned-stack.ts';

/** `npm start` as a process: what it listens on, what it leaves behind, what it refuses. */
const started: SpawnedStack[] = [];
afterEach(() => {
  for (const stack of started.splice(0)) if (stack.child.exitCode === null) stack.child.kill('SIGKILL');
});

const start = async (overrides: NodeJS.ProcessEnv = {}) => {
  const stack = spawnStack(await stackEnv(overrides));
  started.push(stack);
  return stack;
};

const listenOn = (port: number, host: string) =>
  new Promise<Server>((done) => {
    const server = createServer((socket) => socket.end());
    server.listen(port, host, () => done(server));
  });

/** The storefront page as the demo store's domain gets it (Host header: demo.localhost need not resolve here). */
const storefrontPage = (port: number, domain: string) =>
  new Promise<string>((done, fail) => {
    request({ host: '127.0.0.1', port, path: '/', headers: { host: `${domain}:${port}` } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk));
      response.on('end', () => done(body));
    })
      .on('error', fail)
      .end();
  });

async function expectEveryProcessToStop(stack: SpawnedStack, signal: NodeJS.Signals) {
  const tree = descendantsOf(stack.child.pid!);
  const commands = spawnSync('ps', ['-o', 'args=', '-p', tree.join(',')], { encoding: 'utf8' }).stdout;
  expect(commands).toMatch(/java .*DynamoDBLocal\.jar/);
  expect(existsSync(join(stack.localDir, 'stack.pid'))).toBe(true);
  stack.child.kill(signal);
  expect(await waitUntil(() => tree.every((pid) => !isAlive(pid)), 15_000), `still running: ${tree.filter(isAlive)}`).toBe(true);
  expect(existsSync(join(stack.localDir, 'stack.pid'))).toBe(false);
}

describe('npm start', () => {
  it('listens on 127.0.0.1 only, refuses a second start on its LOCAL_DIR, makes `npm run reset` refuse, and stops every process it started on SIGTERM', async () => {
    const stack = await start();
    const ready = await stack.ready;
    expect(ready.api_url).toBe(`http://127.0.0.1:${stack.port}`);
    const sockets = spawnSync('ss', ['-ltnH'], { encoding: 'utf8' }).stdout;
    for (const port of [stack.env.PORT, stack.env.S3_PORT]) expect(sockets).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}\\s`));

    const second = spawnStack({ ...(await stackEnv()), LOCAL_DIR: stack.localDir });
    started.push(second);
    expect(((await second.exited) as [number])[0]).toBe(1);
    expect(second.output()).toContain(`the local stack already runs on ${stack.localDir}`);
    const reset = () => spawnSync('npm', ['run', '--silent', 'reset'], { env: stack.env, encoding: 'utf8' });
    const refused = reset();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('the local stack is running');

    await expectEveryProcessToStop(stack, 'SIGTERM');
    // A stack killed outright leaves its pid file: a pid no longer alive does not block.
    writeFileSync(join(stack.localDir, 'stack.pid'), '2147483646\n');
    const done = reset();
    expect(done.status, done.stderr).toBe(0);
    expect(existsSync(join(stack.localDir, 'stack.pid'))).toBe(false);
  });

  it('stops every process it started on SIGHUP, which npm does not forward', async () => {
    const stack = await start();
    await stack.ready;
    await expectEveryProcessToStop(stack, 'SIGHUP');
  });

  it('runs the owner backend example for the demo store on 127.0.0.1:OWNER_PORT, which the storefront page calls, and stops it with the rest on SIGINT', async () => {
    const stack = await start({ LOCAL_SEED: '1' });
    const ready = await stack.ready;
    const ownerUrl = `http://127.0.0.1:${stack.env.OWNER_PORT}`;
    expect(ready.owner_backend_url).toBe(ownerUrl);
    expect(spawnSync('ss', ['-ltnH'], { encoding: 'utf8' }).stdout).toMatch(new RegExp(`127\\.0\\.0\\.1:${stack.env.OWNER_PORT}\\s`));
    const demo = JSON.parse(readFileSync(join(stack.localDir, 'demo.json'), 'utf8')) as { store_url: string; store_domain: string };
    // The storefront page is told where the owner backend is, and the owner backend lets that page (and only it) call.
    expect(await storefrontPage(stack.port, demo.store_domain)).toContain(`<meta name="owner-backend-url" content="${ownerUrl}">`);
    const preflight = await fetch(`${ownerUrl}/identify`, { method: 'OPTIONS' });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(demo.store_url);
    // It holds the demo store's identify key: a bogus handoff is refused by the API itself, not for want of a credential.
    const identify = await fetch(`${ownerUrl}/identify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ handoff: 'not-a-handoff' }) });
    expect(identify.status).not.toBe(401);
    expect(identify.status).toBeGreaterThanOrEqual(400);
    expect(identify.status).toBeLessThan(500);

    await expectEveryProcessToStop(stack, 'SIGINT');
    const reopened = await listenOn(Number(stack.env.OWNER_PORT), '127.0.0.1');
    reopened.close();
  });

  it('follows the port it runs on now: demo.json, the banner, the owner backend and the demo webhook after a restart on another PORT', { timeout: 240_000 }, async () => {
    const first = await start({ LOCAL_SEED: '1', LOCAL_IN_MEMORY: '0' });
    await first.ready;
    first.child.kill('SIGTERM');
    await first.exited;
    const stack = await start({ LOCAL_SEED: '1', LOCAL_IN_MEMORY: '0', LOCAL_DIR: first.localDir });
    await stack.ready;
    expect(stack.port).not.toBe(first.port);
    const api = `http://127.0.0.1:${stack.port}`;
    const demo = JSON.parse(readFileSync(join(stack.localDir, 'demo.json'), 'utf8')) as { api_url: string; store_url: string; store_id: number; api_token: string };
    expect({ api_url: demo.api_url, store_url: demo.store_url }).toEqual({ api_url: `${api}/v1`, store_url: `http://demo.localhost:${stack.port}` });
    // Same store, kept across the restart.
    expect((await fetch(`${api}/v1/app/store`, { headers: { authorization: `Bearer ${demo.api_token}` } })).status).toBe(200);
    await waitUntil(() => stack.output().includes('demo store:'), 5_000);
    expect(stack.output()).toContain(`demo store: http://demo.localhost:${stack.port}/`);
    expect(stack.output()).not.toContain(`:${first.port}`);
    // The owner backend lets the store's page at this port call, and reaches the API at this port (a bogus handoff: the API's 4xx, not a failed call).
    const ownerUrl = `http://127.0.0.1:${stack.env.OWNER_PORT}`;
    expect((await fetch(`${ownerUrl}/identify`, { method: 'OPTIONS' })).headers.get('access-control-allow-origin')).toBe(demo.store_url);
    const identify = await fetch(`${ownerUrl}/identify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ handoff: 'not-a-handoff' }) });
    expect(identify.status).toBeGreaterThanOrEqual(400);
    expect(identify.status).toBeLessThan(500);
    // The demo webhook delivers to this stack's inbox.
    const webhooks = (await (await fetch(`${api}/v1/app/webhook`, { headers: { authorization: `Bearer ${demo.api_token}` } })).json()) as { data: { url: string }[] };
    expect(webhooks.data.map((webhook) => webhook.url)).toEqual([`${api}/local/webhook-inbox`]);
    stack.child.kill('SIGTERM');
    await stack.exited;
    rmSync(stack.localDir, { recursive: true, force: true });
  });

  for (const [variable, service] of [
    ['PORT', 'the API'],
    ['DYNAMODB_PORT', 'DynamoDB Local'],
    ['S3_PORT', 'the S3 emulator'],
    ['OWNER_PORT', 'the owner backend example'],
  ] as const) {
    it(`refuses a taken ${variable} in one line naming the variable, and starts nothing`, async () => {
      // The owner backend runs with the demo store only.
      const env = await stackEnv(variable === 'OWNER_PORT' ? { LOCAL_SEED: '1' } : {});
      // A DynamoDB Local left by another run listens on every interface.
      const holder = await listenOn(Number(env[variable]), variable === 'DYNAMODB_PORT' ? '0.0.0.0' : '127.0.0.1');
      try {
        const stack = spawnStack(env);
        started.push(stack);
        const [code] = (await stack.exited) as [number];
        expect(code).toBe(1);
        const lines = stack
          .output()
          .trim()
          .split('\n')
          .filter((line) => !line.startsWith('npm warn'));
        expect(lines).toEqual([
          `npm start: port ${env[variable]} for ${service} is already in use on ${variable === 'DYNAMODB_PORT' ? '0.0.0.0' : '127.0.0.1'}: set ${variable} to a free port`,
        ]);
        expect(existsSync(join(env.LOCAL_DIR!, 'stack.pid'))).toBe(false);
      } finally {
        holder.close();
      }
    });
  }
});
