import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryAgent } from '../../agent/agent.ts';
import { ackKey, ApiRefused, ApiUnavailable, StoreApi, type AckResult, type ClaimedCommand } from '../../agent/api.ts';

/**
 * The agent's Idempotency-Key on acks (agent/api.ts `ackKey`, issue 28): one key per ack, the same
 * on every retry of it, and none on claims. The HTTP calls go to a server of this test that
 * answers what the test says, as the store would.
 */
const done = (id: number, response = `ran say ${id}`): AckResult => ({ id, status: 'DONE', response });

describe('the key of an ack', () => {
  it('is the same for the same lease and results, and another for another lease, command, outcome or response', () => {
    const key = ackKey('lease-1', [done(1), done(2)]);
    expect(key).toMatch(/^ack-[\w-]{43}$/);
    expect(ackKey('lease-1', [done(1), done(2)])).toBe(key);
    expect(ackKey('lease-2', [done(1), done(2)])).not.toBe(key);
    expect(ackKey('lease-1', [done(1)])).not.toBe(key);
    expect(ackKey('lease-1', [done(1), done(3)])).not.toBe(key);
    expect(ackKey('lease-1', [done(1), { id: 2, status: 'FAILED', response: 'ran say 2' }])).not.toBe(key);
    expect(ackKey('lease-1', [done(1), done(2, 'another answer')])).not.toBe(key);
  });
});

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** An API that answers every POST with `status` and `body`, and keeps the headers it got. */
async function api(status: number, body: unknown) {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  servers.push(server);
  return { store: new StoreApi(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, 'key', 'test'), seen };
}

describe('the store API as the agent calls it', () => {
  it('sends the key of its ack on an ack, and no key on a claim', async () => {
    const { store, seen } = await api(200, { lease_id: null, expires_at: null, commands: [], accepted: [1], rejected: [] });
    await store.ack('lease-1', [done(1)]);
    await store.claim({ online: [], limit: 20, lease_seconds: 150 });
    expect(seen.map(({ path, headers }) => [path, headers['idempotency-key']])).toEqual([
      ['/v1/delivery/ack', ackKey('lease-1', [done(1)])],
      ['/v1/delivery/claim', undefined],
    ]);
  });

  it('takes a 409 to an ack (the same ack still running under its key) as a reason to retry, not as a refusal', async () => {
    const { store } = await api(409, { errors: [{ message: 'A request with this Idempotency-Key is still running; retry shortly', code: 'IDEMPOTENCY_KEY_IN_USE' }] });
    await expect(store.ack('lease-1', [done(1)])).rejects.toBeInstanceOf(ApiUnavailable);
    await expect(store.claim({ online: [], limit: 20, lease_seconds: 150 })).rejects.toBeInstanceOf(ApiRefused);
  });
});

describe('an ack that got no answer', () => {
  it('is sent again as it was, under the same key, not merged with the results kept since', async () => {
    const commands: ClaimedCommand[] = [1, 2].map((id) => ({ id, order_id: id, attempt: 1, command: `say ${id}`, offline_execute: true, order: { client_identifier: 'Steve' } }));
    const acks: { results: AckResult[]; key: string; answered: boolean }[] = [];
    const agent = new DeliveryAgent({
      api: {
        claim: async () => ({ lease_id: 'lease-1', expires_at: null, commands }),
        ack: async (leaseId, results) => {
          // The first ack's answer is lost; every later one is answered.
          const answered = acks.length > 0;
          acks.push({ results, key: ackKey(leaseId, results), answered });
          if (!answered) throw new ApiUnavailable('POST /delivery/ack: no answer');
          return { accepted: results.map((result) => result.id), rejected: [] };
        },
      },
      game: { run: async (text) => (text === 'list' ? { text: '', complete: true } : { text: `ran ${text}`, complete: true }), close: () => {} },
      onlineCommand: 'list',
      onlineParser: { kind: 'minecraft' },
      intervalMs: 10_000,
      backoffMs: { first: 20, max: 20 },
      log: () => {},
      warn: () => {},
    });

    expect(await agent.cycle()).toBe(2);
    expect(acks.map(({ results, answered }) => [results.map((result) => result.id), answered])).toEqual([
      [[1], false],
      [[1], true],
      [[2], true],
    ]);
    expect(acks[1]!.key).toBe(acks[0]!.key);
  });
});
