import { createServer as createHttpServer } from 'node:http';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DeliveryAgent, type AgentOptions } from '../../agent/agent.ts';
import { ApiUnavailable, StoreApi } from '../../agent/api.ts';
import { GameConsole } from '../../agent/game.ts';
import { createPackage, orderBody, placeOrder, type Store } from '../support/builders.ts';
import { newStore } from '../support/client.ts';
import { approvedOrder, createServer, PAST_ISO, rewind } from '../support/delivery.ts';
import { FakeRconServer } from '../support/fake-rcon.ts';
import { FlakyApi } from '../support/flaky-api.ts';

/**
 * The delivery agent (agent/, extensions section 14) against the local stack and a fake game
 * server speaking Source RCON: what a store owner sees in the store after the agent ran.
 */
const PASSWORD = 'rcon-secret';
const apiBase = () => `${inject('apiUrl')}/v1`;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function game(): Promise<FakeRconServer> {
  const server = await new FakeRconServer({ password: PASSWORD }).start(0);
  cleanups.push(() => server.stop());
  return server;
}

/** An agent running its loop in this process, fast: a 100 ms interval and backoff from 50 ms. */
function startAgent(key: string, fake: FakeRconServer, { api, ...options }: Partial<Omit<AgentOptions, 'api'>> & { api?: string } = {}) {
  const lines: string[] = [];
  const warnings: string[] = [];
  const agent = new DeliveryAgent({
    game: new GameConsole({ host: '127.0.0.1', port: fake.port, password: PASSWORD }),
    onlineCommand: 'list',
    onlineParser: { kind: 'minecraft' },
    intervalMs: 100,
    backoffMs: { first: 50, max: 400 },
    log: (line) => lines.push(line),
    warn: (line) => warnings.push(line),
    ...options,
    api: new StoreApi(api ?? apiBase(), key, 'test'),
  });
  const exit = agent.run();
  const stop = async () => {
    agent.stop();
    return exit;
  };
  cleanups.push(stop);
  return { agent, lines, warnings, stop };
}

const commandsOf = async (store: Store, orderId: number) => {
  const res = await store.get(`/v1/app/order/${orderId}/command`);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: number; command: string; status: string; tries: number; response: string | null; execute_at: string }[];
};

describe('the delivery agent', () => {
  it("runs an approved order's commands in order on the game and acks each DONE with the game's answer", async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('give', 'Gave 1 [Diamond] to Steve');
    fake.answer('lp user', 'Steve now inherits permissions from vip');
    const { order } = await approvedOrder(store, [
      { command: 'give {client_identifier} diamond 1' },
      { command: 'lp user {client_identifier} parent add vip' },
      { command: 'say thanks {client_identifier} for order {order_id}' },
    ]);
    const { lines, stop } = startAgent(server.key, fake);

    await expect.poll(async () => (await commandsOf(store, order.id)).map((command) => command.status), { timeout: 20_000 }).toEqual(['DONE', 'DONE', 'DONE']);
    expect(fake.deliveries.map((entry) => entry.command)).toEqual(['give Steve diamond 1', 'lp user Steve parent add vip', `say thanks Steve for order ${order.id}`]);
    expect((await commandsOf(store, order.id)).map((command) => command.response)).toEqual([
      'Gave 1 [Diamond] to Steve',
      'Steve now inherits permissions from vip',
      `ran: say thanks Steve for order ${order.id}`,
    ]);
    const ids = (await commandsOf(store, order.id)).map((command) => command.id);
    expect(lines.filter((line) => line.startsWith('order '))).toEqual([
      `order ${order.id} command ${ids[0]}: DONE (attempt 1) give Steve diamond 1 -> Gave 1 [Diamond] to Steve`,
      `order ${order.id} command ${ids[1]}: DONE (attempt 1) lp user Steve parent add vip -> Steve now inherits permissions from vip`,
      `order ${order.id} command ${ids[2]}: DONE (attempt 1) say thanks Steve for order ${order.id} -> ran: say thanks Steve for order ${order.id}`,
    ]);
    expect(await stop()).toBe(0);
  });

  it("cuts a game's answer of several RCON packets to the ack's 2,000 characters, and the next answer is the next command's own", async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('help', `${'h'.repeat(4096)}${'i'.repeat(6000)}`);
    const { order } = await approvedOrder(store, [{ command: 'help' }, { command: 'say after' }]);
    startAgent(server.key, fake);

    await expect.poll(async () => (await commandsOf(store, order.id)).map((command) => command.status), { timeout: 20_000 }).toEqual(['DONE', 'DONE']);
    const [help, after] = await commandsOf(store, order.id);
    expect(help!.response).toBe('h'.repeat(2000));
    expect(after!.response).toBe('ran: say after');
  });

  it("holds an offline_execute:false command until the game's list shows its player, then delivers it", async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.players = ['Alex'];
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} elytra', offline_execute: false }]);
    startAgent(server.key, fake);

    // Several cycles asked the game, claimed with ["Alex"], and got nothing for Steve.
    await expect.poll(() => fake.executed.filter((entry) => entry.command === 'list').length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    expect(fake.deliveries).toEqual([]);
    expect((await commandsOf(store, order.id))[0]).toMatchObject({ status: 'PENDING', tries: 0 });

    fake.players = ['Alex', 'Steve'];
    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(fake.deliveries.map((entry) => entry.command)).toEqual(['give Steve elytra']);
  });

  it('acks FAILED with the reason when the game drops the connection, and the store backs the command off as section 9 says', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answerNext('drop');
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { lines } = startAgent(server.key, fake);

    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.tries, { timeout: 20_000 }).toBe(1);
    const failed = (await commandsOf(store, order.id))[0]!;
    expect(failed.status).toBe('PENDING');
    expect(failed.response).toBe(`RCON connection to 127.0.0.1:${fake.port} dropped`);
    // Backoff of the first failure: 30 s after the ack.
    const wait = Date.parse(failed.execute_at) - Date.now();
    expect(wait).toBeGreaterThan(20_000);
    expect(wait).toBeLessThanOrEqual(30_000);
    expect(lines).toContain(`order ${order.id} command ${failed.id}: FAILED (attempt 1) give Steve diamond 1: RCON connection to 127.0.0.1:${fake.port} dropped`);
    expect(fake.deliveries).toEqual([]);

    // Once the backoff is over, the agent runs it again on a fresh connection.
    await rewind(store.storeId, failed.id, () => ({ execute_at: PAST_ISO }));
    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(fake.deliveries.map((entry) => entry.command)).toEqual(['give Steve diamond 1']);
  });

  it('when the game dies mid-cycle: FAILED with the reason, then no claim spends a try until the game is back', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const port = fake.port;
    fake.answerNext('down');
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { warnings } = startAgent(server.key, fake);

    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.tries, { timeout: 20_000 }).toBe(1);
    const failed = (await commandsOf(store, order.id))[0]!;
    expect(failed).toMatchObject({ status: 'PENDING', response: `RCON connection to 127.0.0.1:${port} dropped` });
    expect(Date.parse(failed.execute_at) - Date.now()).toBeGreaterThan(20_000);

    // Its backoff over while the game is still down: the agent does not claim it to fail it again.
    await rewind(store.storeId, failed.id, () => ({ execute_at: PAST_ISO }));
    const before = warnings.length;
    await expect.poll(() => warnings.length - before, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(warnings.slice(before).every((line) => line.startsWith(`asking who is online: game server refused the RCON connection (127.0.0.1:${port})`))).toBe(true);
    expect((await commandsOf(store, order.id))[0]).toMatchObject({ status: 'PENDING', tries: 1 });

    await fake.start(port);
    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(fake.deliveries.map((entry) => entry.command)).toEqual(['give Steve diamond 1']);
  });

  it('acks FAILED when the game does not answer within 5 s', { timeout: 40_000 }, async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answerNext('silence');
    const { order } = await approvedOrder(store, [{ command: 'save-all' }]);
    startAgent(server.key, fake);

    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.tries, { timeout: 20_000 }).toBe(1);
    expect((await commandsOf(store, order.id))[0]!.response).toBe('game server did not answer within 5 s (the command may have run)');
  });

  it('with the game server down claims nothing (no tries spent) and reconnects with growing waits; delivers once it is back', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const port = fake.port;
    await fake.stop();
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { warnings, lines } = startAgent(server.key, fake);

    await expect.poll(() => warnings.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    expect(warnings[0]).toMatch(
      new RegExp(`^asking who is online: game server refused the RCON connection \\(127.0.0.1:${port}\\): is it running with RCON enabled\\?; trying again in 0\\.\\d+ s$`),
    );
    const waits = warnings.slice(0, 4).map((line) => Number(/trying again in ([\d.]+) s/.exec(line)![1]));
    // 50, 100, 200, 400 ms, each +-20 %.
    expect(waits[3]!).toBeGreaterThan(waits[0]!);
    expect((await commandsOf(store, order.id))[0]).toMatchObject({ status: 'PENDING', tries: 0 });

    await fake.start(port);
    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(lines).toContain('the game server answers again');
  });

  it('keeps a result the API could not take and acks it when the API is back: the command ran once and reads DONE', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('give', 'Gave 1 [Diamond] to Steve');
    const proxy = new FlakyApi(inject('apiUrl'));
    const api = await proxy.start();
    cleanups.push(() => proxy.stop());
    proxy.fail('/delivery/ack', 2);
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    // The third ack attempt finds the API gone altogether, until it comes back below.
    let cutAfterTwo = true;
    const { warnings } = startAgent(server.key, fake, {
      api,
      warn: (line) => {
        warnings.push(line);
        if (cutAfterTwo && warnings.filter((warning) => warning.startsWith('acking')).length === 2) {
          cutAfterTwo = false;
          proxy.down = true;
          setTimeout(() => (proxy.down = false), 1000);
        }
      },
    });

    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect((await commandsOf(store, order.id))[0]!.response).toBe('Gave 1 [Diamond] to Steve');
    expect(fake.deliveries).toHaveLength(1);
    const acks = proxy.requests.filter((request) => request.path.endsWith('/delivery/ack')).map((request) => request.status);
    expect(acks.slice(0, 3)).toEqual([503, 503, 'cut']);
    expect(acks[acks.length - 1]).toBe(200);
    expect(warnings[0]).toMatch(/^acking: POST \/delivery\/ack: 503 Service unavailable; trying again in [\d.]+ s$/);
  });

  it('sends an ack whose answer was lost again with the same Idempotency-Key: the store answers it from the key and the command is acked once', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    fake.answer('give', 'Gave 1 [Diamond] to Steve');
    const proxy = new FlakyApi(inject('apiUrl'));
    const api = await proxy.start();
    cleanups.push(() => proxy.stop());
    // The store takes the first ack and its answer never reaches the agent.
    proxy.loseAnswer('/delivery/ack', 1);
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { warnings, stop } = startAgent(server.key, fake, { api });

    await expect.poll(() => proxy.requests.filter((request) => request.path.endsWith('/delivery/ack')).length, { timeout: 20_000 }).toBe(2);
    const acks = proxy.requests.filter((request) => request.path.endsWith('/delivery/ack'));
    expect(acks.map(({ status, replayed }) => [status, replayed])).toEqual([
      ['cut', false],
      [200, true],
    ]);
    expect(acks[0]!.idempotencyKey).toMatch(/^ack-[\w-]{43}$/);
    expect(acks[1]!.idempotencyKey).toBe(acks[0]!.idempotencyKey);
    expect(warnings[0]).toMatch(/^acking: POST \/delivery\/ack: no answer from /);
    const [command] = await commandsOf(store, order.id);
    expect(command).toMatchObject({ status: 'DONE', tries: 0, response: 'Gave 1 [Diamond] to Steve' });
    expect(fake.deliveries).toHaveLength(1);
    expect(await stop()).toBe(0);
  });

  it('sends a claim without a key: a claim whose answer was lost leaves its commands leased to nobody, handed out again (attempt 2) once the lease lapses, run once', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const proxy = new FlakyApi(inject('apiUrl'));
    const api = await proxy.start();
    cleanups.push(() => proxy.stop());
    proxy.loseAnswer('/delivery/claim', 1);
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { lines, stop } = startAgent(server.key, fake, { api });

    await expect.poll(() => proxy.requests.filter((request) => request.path.endsWith('/delivery/claim')).length, { timeout: 20_000 }).toBeGreaterThan(2);
    // The lost claim's lease holds the command: the claims after it hand out nothing, and nothing ran.
    expect(fake.deliveries).toHaveLength(0);
    const [leased] = await commandsOf(store, order.id);
    expect(leased!.status).toBe('PENDING');
    // The lease lapses, as its 150 s passing would.
    await rewind(store.storeId, leased!.id, () => ({ lease_until: PAST_ISO }));

    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(fake.deliveries.map((entry) => entry.command)).toEqual(['give Steve diamond 1']);
    expect(lines.filter((line) => line.startsWith('order '))).toEqual([
      `order ${order.id} command ${leased!.id}: DONE (attempt 2) give Steve diamond 1 -> ran: give Steve diamond 1`,
    ]);
    const claims = proxy.requests.filter((request) => request.path.endsWith('/delivery/claim'));
    expect(claims[0]!.status).toBe('cut');
    expect(claims.every((request) => request.idempotencyKey === undefined)).toBe(true);
    expect(await stop()).toBe(0);
  });

  it('claims again with backoff while the API is down, then delivers', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const fake = await game();
    const proxy = new FlakyApi(inject('apiUrl'));
    const api = await proxy.start();
    cleanups.push(() => proxy.stop());
    proxy.down = true;
    const { order } = await approvedOrder(store, [{ command: 'give {client_identifier} diamond 1' }]);
    const { warnings } = startAgent(server.key, fake, { api });

    await expect.poll(() => warnings.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(warnings[0]).toMatch(/^claiming: POST \/delivery\/claim: no answer from http:\/\/127\.0\.0\.1:\d+\/v1 \(\w+\); trying again in [\d.]+ s$/);
    proxy.down = false;
    await expect.poll(async () => (await commandsOf(store, order.id))[0]!.status, { timeout: 20_000 }).toBe('DONE');
    expect(fake.deliveries).toHaveLength(1);
  });

  it('counts an API that takes the request and never answers as down', async () => {
    const silent = createHttpServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', () => done()));
    cleanups.push(() => new Promise((done) => silent.close(done)));
    silent.on('connection', (socket) => cleanups.push(async () => socket.destroy()));
    const base = `http://127.0.0.1:${(silent.address() as { port: number }).port}/v1`;
    const started = Date.now();
    const error = await new StoreApi(base, 'sak_key', 'test', 300).claim({ online: [], limit: 1, lease_seconds: 60 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiUnavailable);
    expect((error as Error).message).toBe(`POST /delivery/claim: no answer from ${base} (ETIMEDOUT)`);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('two agents on one game server never run a command twice', { timeout: 120_000 }, async () => {
    const store = await newStore();
    const server = await createServer(store);
    const secondKey = (await store.post(`/v1/app/server/${server.id}/key`)).body.key as string;
    const fake = await game();
    const pkg = await createPackage(store, { commands: [{ command: 'first {order_id}' }, { command: 'second {order_id}' }] });
    const orders: number[] = [];
    for (let i = 0; i < 12; i++) {
      const order = await placeOrder(store, orderBody(pkg.id));
      expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
      orders.push(order.id);
    }
    // Small claims so that both agents get work side by side.
    startAgent(server.key, fake, { limit: 3, intervalMs: 50 });
    startAgent(secondKey, fake, { limit: 3, intervalMs: 50 });

    await expect.poll(() => fake.deliveries.length, { timeout: 60_000 }).toBe(24);
    const run = fake.deliveries.map((entry) => entry.command);
    expect(new Set(run).size).toBe(24);
    for (const orderId of orders) expect(run.indexOf(`first ${orderId}`)).toBeLessThan(run.indexOf(`second ${orderId}`));
    await expect
      .poll(async () => (await store.get('/v1/app/command?page_size=100')).body.data.map((command: { status: string }) => command.status), { timeout: 20_000 })
      .toEqual(Array(24).fill('DONE'));
    // Let both agents cycle a little longer: nothing runs again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.deliveries).toHaveLength(24);
  });
});
