import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { queuePk } from '#lib/db/command.ts';
import { rosterKey, rosterOf } from '#lib/db/offline-roster.ts';
import { createPackage, orderBody, placeOrder } from '../support/builders.ts';
import { buyerLogin } from '../support/buyer.ts';
import { call, dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { ack, approvedOrder, claim, createServer, drain, PAST_ISO, rewind } from '../support/delivery.ts';

describe('game servers and their keys', () => {
  it('creates, lists, renames and deletes servers; a key claims until its server is deleted', async () => {
    const store = await newStore();
    const created = await store.post('/v1/app/server', { name: 'Survival' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: 1, store_id: store.storeId, name: 'Survival', last_seen_at: null, created_at: expect.any(String), updated_at: created.body.created_at });
    expect((await store.get('/v1/app/server')).body).toMatchObject({ meta: { total: 1 }, data: [{ id: 1, name: 'Survival' }] });
    expect((await store.patch('/v1/app/server/1', { name: 'Survival EU' })).body.name).toBe('Survival EU');
    const key = await store.post('/v1/app/server/1/key');
    expect(key.body).toEqual({ key: expect.stringMatching(/^sak_/) });
    const second = (await store.post('/v1/app/server/1/key')).body.key;
    const claimed = await claim(key.body.key);
    expect(claimed.body).toEqual({ lease_id: null, expires_at: null, commands: [] });
    // credential + its first "last used" mark (a new key; then once an hour at most) + server last_seen_at + the two queue partitions
    expect(dynamoDbCalls(claimed)).toBe(5);
    expect((await store.get('/v1/app/server/1')).body.last_seen_at).toEqual(expect.any(String));

    expect((await store.delete('/v1/app/server/1')).status).toBe(204);
    expect((await store.get('/v1/app/server/1')).status).toBe(404);
    expect((await claim(key.body.key)).status).toBe(401);
    expect((await claim(second)).status).toBe(401);
    expect((await store.delete('/v1/app/server/1')).status).toBe(404);
    expect((await store.post('/v1/app/server/1/key')).status).toBe(404);
  });

  it('refuses a template naming a server of another store (422) and a delete of a server a package names (409 naming it)', async () => {
    const store = await newStore();
    const other = await newStore();
    const foreign = await createServer(other);
    const res = await store.post('/v1/app/package', { name: 'VIP', price: 1, commands: [{ command: 'a', servers: [foreign.id] }] });
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ field: 'commands.0.servers.0', message: `Server ${foreign.id} does not exist in this store` });
    expect((await store.get('/v1/app/package')).body.meta.total).toBe(0);

    const mine = await createServer(store);
    const pkg = await createPackage(store, {
      commands: [
        { command: 'a', servers: [mine.id] },
        { command: 'b', servers: [mine.id] },
      ],
    });
    const refused = await store.delete(`/v1/app/server/${mine.id}`);
    expect(refused.status).toBe(409);
    expect(firstError(refused).message).toContain(`package(s) ${pkg.id}`);
    expect((await store.patch(`/v1/app/package/${pkg.id}`, { commands: [{ command: 'a' }] })).status).toBe(200);
    expect((await store.delete(`/v1/app/server/${mine.id}`)).status).toBe(204);
  });

  it('refuses bad input with 4xx and changes nothing', async () => {
    const store = await newStore();
    expect((await store.post('/v1/app/server', { name: '' })).status).toBe(422);
    expect((await store.post('/v1/app/server', { name: 'x', extra: 1 })).status).toBe(422);
    expect((await store.post('/v1/app/package', { name: 'P', price: 1, commands: [{ command: 'a', servers: [] }] })).status).toBe(422);
    expect((await store.post('/v1/app/package', { name: 'P', price: 1, commands: [{ command: 'a', stage: 'LATER' }] })).status).toBe(422);
    const server = await createServer(store);
    expect((await claim(server.key, { limit: 0 })).status).toBe(422);
    expect((await claim(server.key, { lease_seconds: 601 })).status).toBe(422);
    expect((await claim(store.identifyKey)).status).toBe(403);
    expect((await claim(store.token)).status).toBe(403);
    expect((await store.get('/v1/app/server')).body.meta.total).toBe(1);
  });
});

describe('claim and ack', () => {
  it("queues one command per listed server (or one for any); a claim takes its own and any-server ones, and an any-server command is the claimer's while its lease lives", async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const { order } = await approvedOrder(store, [
      { command: 'both {client_identifier}', servers: [a.id, b.id] },
      { command: 'refund', stage: 'REFUNDED' },
    ]);
    const second = await approvedOrder(store, [{ command: 'anywhere' }]);
    const listed = (await store.get(`/v1/app/order/${order.id}/command`)).body;
    expect(listed.map((c: any) => [c.command, c.server_id, c.stage, c.status])).toEqual([
      ['both Steve', a.id, 'APPROVED', 'PENDING'],
      ['both Steve', b.id, 'APPROVED', 'PENDING'],
    ]);

    const claimA = await claim(a.key);
    expect(claimA.body.commands.map((c: any) => [c.command, c.attempt, c.order_id])).toEqual([
      ['both Steve', 1, order.id],
      ['anywhere', 1, second.order.id],
    ]);
    expect(Object.keys(claimA.body.commands[0])).toEqual(['id', 'store_id', 'command', 'offline_execute', 'execute_at', 'order', 'order_id', 'attempt']);
    // credential + server + 2 Queries + 2 leases + lease item
    expect(dynamoDbCalls(claimA)).toBe(7);
    expect((await store.get(`/v1/app/command/${claimA.body.commands[1].id}`)).body.server_id).toBe(a.id);
    expect((await claim(b.key)).body.commands.map((c: any) => c.command)).toEqual(['both Steve']);
    expect((await claim(a.key)).body.commands).toEqual([]);
  });

  it("hands out a command whose lease write landed but lost its answer (the SDK's retry finds it changed by this very lease)", async () => {
    const store = await newStore();
    const server = await createServer(store);
    await approvedOrder(store, [{ command: 'one' }]);
    await approvedOrder(store, [{ command: 'two' }]);
    // The first command's lease write reaches DynamoDB, its answer is lost; the SDK sends it again and its condition fails.
    const lost = await call('POST', '/v1/delivery/claim', { token: server.key, json: {}, headers: { 'x-local-dynamodb-fault': 'lose-answer:PutItem:1' } });
    expect(lost.status, lost.text).toBe(200);
    // Both commands, the one whose answer was lost included: none waits, leased to nobody who knows it, for its lease to lapse.
    expect(lost.body.commands.map((command: { command: string }) => command.command).sort()).toEqual(['one', 'two']);
    const acked = await ack(
      server.key,
      lost.body.lease_id,
      lost.body.commands.map((command: { id: number }) => ({ id: command.id, status: 'DONE' as const })),
    );
    expect(acked.body.rejected).toEqual([]);
    expect(await claim(server.key).then((next) => next.body.commands)).toEqual([]);
  });

  it('hands the commands of an order out in order: a later one waits until the earlier ones are DONE, DEAD or CANCELED', async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    await approvedOrder(store, [
      { command: 'a1', servers: [a.id] },
      { command: 'b1', servers: [b.id] },
      { command: 'a2', servers: [a.id] },
      { command: 'any' },
      { command: 'b2', servers: [b.id] },
    ]);
    const first = await claim(a.key);
    expect(first.body.commands.map((c: any) => c.command)).toEqual(['a1']);
    expect((await drain(b.key)).length).toBe(1);
    const acked = await ack(a.key, first.body.lease_id, [{ id: first.body.commands[0].id, status: 'DONE' }]);
    expect(acked.body).toEqual({ accepted: [first.body.commands[0].id], rejected: [] });
    // credential + BatchGet (lease, command) + chain GetItem + BatchGet released + TransactWrite
    expect(dynamoDbCalls(acked)).toBe(5);
    // a2 was released; 'any' still waits for a2
    expect((await claim(b.key)).body.commands).toEqual([]);
    const a2 = await claim(a.key);
    expect(a2.body.commands.map((c: any) => c.command)).toEqual(['a2']);
    // The operator cancels a2: 'any' is released, and b2 after it.
    expect((await store.patch(`/v1/app/command/${a2.body.commands[0].id}`, { status: 'CANCELED' })).status).toBe(200);
    expect((await ack(a.key, a2.body.lease_id, [{ id: a2.body.commands[0].id, status: 'DONE' }])).body.rejected).toEqual([{ id: a2.body.commands[0].id, reason: 'LEASE_LOST' }]);
    expect((await drain(b.key)).length).toBe(1);
    expect((await claim(b.key)).body.commands.map((c: any) => c.command)).toEqual(['b2']);
  });

  it('hands out an offline_execute:false command only while its player is online', async () => {
    const store = await newStore();
    const server = await createServer(store);
    await approvedOrder(store, [{ command: 'online only', offline_execute: false }]);
    expect((await claim(server.key, { online: ['Alex'] })).body.commands).toEqual([]);
    expect((await claim(server.key, { online: ['Alex', 'Steve'] })).body.commands.map((c: any) => c.command)).toEqual(['online only']);
  });

  it("keeps a player's offline-only commands on the queue's roster whichever way they join it, and forgets a player only once the queue holds none of theirs", async () => {
    const store = await newStore();
    const server = await createServer(store);
    const anyQueue = queuePk(store.storeId, null);
    const ageEntry = (player: string) =>
      db.send(
        new UpdateCommand({ TableName: TABLE, Key: rosterKey(anyQueue, player), UpdateExpression: 'SET touched_at = :old', ExpressionAttributeValues: { ':old': PAST_ISO } }),
      );
    const players = async () => (await rosterOf(anyQueue, 10))!.map((entry) => entry.player);
    // The second waits for the first (any server): it joins the queue when the first is DONE.
    await approvedOrder(store, [
      { command: 'first', offline_execute: false },
      { command: 'second', offline_execute: false },
    ]);
    expect(await players()).toEqual(['Steve']);
    expect(await drain(server.key, { online: ['Steve'] })).toHaveLength(1);
    await ageEntry('Steve');
    const [second] = await drain(server.key, { online: ['Steve'] });
    expect(second).toBeDefined();
    expect(await players()).toEqual(['Steve']);
    // Nothing of Steve's is queued any more: an old entry is forgotten by the next claim that reports him online.
    await ageEntry('Steve');
    expect(await drain(server.key, { online: ['Steve'] })).toEqual([]);
    expect(await players()).toEqual([]);
    // A retry puts the command back: its player is on the roster again, and it is handed out.
    expect((await store.patch(`/v1/app/command/${second}`, { status: 'FAILED' })).status).toBe(200);
    expect((await store.post(`/v1/app/command/${second}/retry`)).status).toBe(200);
    expect(await players()).toEqual(['Steve']);
    expect(await drain(server.key, { online: ['Steve'] })).toEqual([second]);
    // A fresh entry whose commands the index may not show yet is kept.
    expect(await drain(server.key, { online: ['Steve'] })).toEqual([]);
    expect(await players()).toEqual(['Steve']);
  });

  it('backs a FAILED command off (30 s x 2^(tries-1)) and makes it DEAD at the 5th failure; acks are idempotent', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const { order } = await approvedOrder(store, [{ command: 'flaky' }, { command: 'after' }]);
    const lease = (await claim(server.key)).body;
    const id = lease.commands[0].id;
    const failedAt = Date.now();
    const failed = await ack(server.key, lease.lease_id, [{ id, status: 'FAILED', response: 'player offline' }]);
    expect(failed.body).toEqual({ accepted: [id], rejected: [] });
    const backedOff = (await store.get(`/v1/app/command/${id}`)).body;
    expect(backedOff).toMatchObject({ status: 'PENDING', tries: 1, response: 'player offline', attempt: 1 });
    expect(Date.parse(backedOff.execute_at) - failedAt).toBeGreaterThanOrEqual(29_000);
    expect(Date.parse(backedOff.execute_at) - failedAt).toBeLessThanOrEqual(31_000);
    expect((await claim(server.key)).body.commands).toEqual([]);
    // A repeat changes nothing and is accepted again.
    expect((await ack(server.key, lease.lease_id, [{ id, status: 'DONE' }])).body).toEqual({ accepted: [id], rejected: [] });
    expect((await store.get(`/v1/app/command/${id}`)).body).toEqual(backedOff);

    // Four failures later (time passed: the backoff is over), the fifth makes it DEAD and releases the next.
    await rewind(store.storeId, id, () => ({ tries: 4, execute_at: PAST_ISO }));
    const again = (await claim(server.key)).body;
    expect(again.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
    await ack(server.key, again.lease_id, [{ id, status: 'FAILED', response: 'no' }]);
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'DEAD', tries: 5 });
    expect((await claim(server.key)).body.commands.map((c: any) => c.command)).toEqual(['after']);
    expect((await store.get(`/v1/app/order/${order.id}/command`)).body.map((c: any) => c.status)).toEqual(['DEAD', 'PENDING']);
  });

  it('keeps the answer of an ack under its Idempotency-Key (replayed, the command acked once; another body is 422); a claim ignores a key', async () => {
    const store = await newStore();
    const server = await createServer(store);
    await approvedOrder(store, [{ command: 'flaky' }, { command: 'after' }]);
    const lease = (await claim(server.key)).body;
    const id = lease.commands[0].id;
    const keyed = (results: unknown[]) =>
      call('POST', '/v1/delivery/ack', { token: server.key, headers: { 'idempotency-key': 'ack-1' }, json: { lease_id: lease.lease_id, results } });
    const first = await keyed([{ id, status: 'FAILED', response: 'player offline' }]);
    expect(first.body).toEqual({ accepted: [id], rejected: [] });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const backedOff = (await store.get(`/v1/app/command/${id}`)).body;
    expect(backedOff).toMatchObject({ status: 'PENDING', tries: 1 });
    const replay = await keyed([{ id, status: 'FAILED', response: 'player offline' }]);
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([200, 'true', first.body]);
    expect((await store.get(`/v1/app/command/${id}`)).body).toEqual(backedOff);
    const reused = await keyed([{ id, status: 'DONE' }]);
    expect([reused.status, firstError(reused).code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await store.get(`/v1/app/command/${id}`)).body).toEqual(backedOff);

    // A claim keeps no answer: the same key again is a new claim (nothing due: the command backs off).
    await rewind(store.storeId, id, () => ({ execute_at: PAST_ISO }));
    const keyedClaim = () => call('POST', '/v1/delivery/claim', { token: server.key, headers: { 'idempotency-key': 'claim-1' }, json: {} });
    const claimed = await keyedClaim();
    expect(claimed.body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
    const again = await keyedClaim();
    expect([again.status, again.headers['idempotent-replayed'], again.body.commands]).toEqual([200, undefined, []]);
  });

  it('refuses a response over 2,000 characters for the whole request (422), changing nothing', async () => {
    const store = await newStore();
    const server = await createServer(store);
    await approvedOrder(store, [{ command: 'x' }, { command: 'y', servers: null }], {});
    const lease = (await claim(server.key)).body;
    const id = lease.commands[0].id;
    const res = await ack(server.key, lease.lease_id, [{ id, status: 'DONE', response: 'x'.repeat(2001) }]);
    expect(res.status).toBe(422);
    expect(firstError(res).field).toBe('results.0.response');
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'PENDING', tries: 0 });
    expect(
      (
        await ack(server.key, lease.lease_id, [
          { id, status: 'DONE' },
          { id, status: 'DONE' },
        ])
      ).status,
    ).toBe(422);
  });

  it("keeps another store's and another server's keys away from a server's commands (404/403, nothing changed)", async () => {
    const store = await newStore();
    const mine = await createServer(store, 'Mine');
    const sibling = await createServer(store, 'Sibling');
    const other = await newStore();
    const stranger = await createServer(other, 'Stranger');
    await approvedOrder(store, [{ command: 'mine only', servers: [mine.id] }]);
    expect((await claim(sibling.key)).body.commands).toEqual([]);
    expect((await claim(stranger.key)).body.commands).toEqual([]);
    const lease = (await claim(mine.key)).body;
    const id = lease.commands[0].id;
    expect((await ack(sibling.key, lease.lease_id, [{ id, status: 'DONE' }])).status).toBe(403);
    expect((await ack(stranger.key, lease.lease_id, [{ id, status: 'DONE' }])).status).toBe(404);
    expect((await ack(mine.key, 'not-a-lease', [{ id, status: 'DONE' }])).status).toBe(404);
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'PENDING', attempt: 1 });
    expect(
      (
        await ack(mine.key, lease.lease_id, [
          { id, status: 'DONE' },
          { id: 999, status: 'DONE' },
        ])
      ).body,
    ).toEqual({
      accepted: [id],
      rejected: [{ id: 999, reason: 'NOT_FOUND' }],
    });
  });
});

describe('a command of any server is bound to its claimer only while the lease lives (section 9)', () => {
  it("once the lease lapses unacknowledged, another server of the store claims it (attempt + 1) and server_id is the last claimer's; the old lease's ack is refused", async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const other = await createServer(await newStore(), 'Stranger');
    await approvedOrder(store, [{ command: 'anywhere' }, { command: 'only A', servers: [a.id] }]);
    const first = (await claim(a.key)).body;
    expect(first.commands.map((c: any) => [c.command, c.attempt])).toEqual([['anywhere', 1]]);
    const id = first.commands[0].id;
    // While A's lease lives, B gets nothing.
    expect((await claim(b.key)).body.commands).toEqual([]);
    // A died: its lease lapses unacknowledged.
    await rewind(store.storeId, id, () => ({ lease_until: PAST_ISO }));
    expect((await claim(other.key)).body.commands).toEqual([]);
    const second = await claim(b.key);
    expect(second.body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
    // credential + server + 2 Queries + the conditional Put + the lease item: what any claim of one command costs
    expect(dynamoDbCalls(second)).toBe(6);
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'PENDING', server_id: b.id, attempt: 2 });
    expect((await ack(a.key, first.lease_id, [{ id, status: 'DONE' }])).body).toEqual({ accepted: [], rejected: [{ id, reason: 'LEASE_LOST' }] });
    expect((await ack(b.key, second.body.lease_id, [{ id, status: 'DONE' }])).body).toEqual({ accepted: [id], rejected: [] });
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'DONE', server_id: b.id, attempt: 2 });
    // A command bound to A stays A's, lease or not.
    expect((await claim(b.key)).body.commands).toEqual([]);
    expect((await claim(a.key)).body.commands.map((c: any) => c.command)).toEqual(['only A']);
  });

  it('a FAILED ack ends the lease: after the backoff any server of the store may claim the command', async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    await approvedOrder(store, [{ command: 'flaky anywhere' }]);
    const first = (await claim(a.key)).body;
    const id = first.commands[0].id;
    await ack(a.key, first.lease_id, [{ id, status: 'FAILED', response: 'no' }]);
    await rewind(store.storeId, id, () => ({ execute_at: PAST_ISO }));
    expect((await claim(b.key)).body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
    expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ server_id: b.id, tries: 1, attempt: 2 });
  });

  it('deleting a server cancels the commands bound to it and gives the any-server commands it holds back to the queue', async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const { order } = await approvedOrder(store, [{ command: 'bound to A', servers: [a.id] }]);
    const anywhere = await approvedOrder(store, [{ command: 'leased anywhere' }]);
    const backingOff = await approvedOrder(store, [{ command: 'failed anywhere' }]);
    const lease = (await claim(a.key)).body;
    expect(lease.commands.map((c: any) => c.command)).toEqual(['bound to A', 'leased anywhere', 'failed anywhere']);
    const [bound, leasedId, failedId] = lease.commands.map((c: any) => c.id);
    await ack(a.key, lease.lease_id, [{ id: failedId, status: 'FAILED', response: 'no' }]);
    // The package's template names A: change it first, as the 409 asks.
    const pkgId = (await store.get(`/v1/app/order/${order.id}/command`)).body[0].package_id;
    await store.patch(`/v1/app/package/${pkgId}`, { commands: [{ command: 'bound to A' }] });
    expect((await store.delete(`/v1/app/server/${a.id}`)).status).toBe(204);

    expect((await store.get(`/v1/app/command/${bound}`)).body).toMatchObject({ status: 'CANCELED', server_id: a.id });
    expect((await store.get(`/v1/app/command/${leasedId}`)).body).toMatchObject({ status: 'PENDING', server_id: null, attempt: 1, order_id: anywhere.order.id });
    expect((await store.get(`/v1/app/command/${failedId}`)).body).toMatchObject({ status: 'PENDING', server_id: null, tries: 1, order_id: backingOff.order.id });
    // B takes the leased one at once (no lease holds it any more), the failed one after its backoff.
    expect((await claim(b.key)).body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[leasedId, 2]]);
    await rewind(store.storeId, failedId, () => ({ execute_at: PAST_ISO }));
    expect((await claim(b.key)).body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[failedId, 2]]);
  });
});

describe('races', () => {
  it('several servers claiming an any-server command whose lease lapsed, at once: exactly one wins it', async () => {
    for (let round = 0; round < 5; round++) {
      const store = await newStore();
      const servers = await Promise.all(['A', 'B', 'C', 'D', 'E'].map((name) => createServer(store, name)));
      await approvedOrder(store, [{ command: 'contested' }]);
      const first = (await claim(servers[0]!.key)).body;
      const id = first.commands[0].id;
      await rewind(store.storeId, id, () => ({ lease_until: PAST_ISO }));
      // The first claimer died: the four others race, two claims each.
      const others = servers.slice(1);
      const claims = await Promise.all(others.flatMap((server) => [claim(server.key), claim(server.key)]));
      for (const res of claims) expect(res.status, res.text).toBe(200);
      const winners = claims.flatMap((res, index) => (res.body.commands.length > 0 ? [{ index, res }] : []));
      expect(winners).toHaveLength(1);
      const { index, res } = winners[0]!;
      expect(res.body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
      const winner = others[Math.floor(index / 2)]!;
      expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'PENDING', server_id: winner.id, attempt: 2 });
      expect((await ack(winner.key, res.body.lease_id, [{ id, status: 'DONE' }])).body.accepted).toEqual([id]);
    }
  });

  it('20 concurrent claims by 2 servers over 50 commands, 20 rounds: each command handed to exactly one lease', async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const pkgs = [
      await createPackage(store, { name: 'any', commands: [{ command: 'any' }] }),
      await createPackage(store, { name: 'A', commands: [{ command: 'a', servers: [a.id] }] }),
    ];
    for (let i = 0; i < 50; i++) {
      const order = await placeOrder(store, orderBody(pkgs[i % 5 === 0 ? 1 : 0]!.id));
      await store.post(`/v1/app/order/${order.id}/approve`);
    }
    const handed = new Map<number, string>();
    for (let round = 0; round < 20; round++) {
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(i % 2 ? b.key : a.key, { limit: 3 })));
      for (const res of claims) {
        expect(res.status, res.text).toBe(200);
        for (const command of res.body.commands) {
          expect(handed.has(command.id), `command ${command.id} handed out twice`).toBe(false);
          handed.set(command.id, res.body.lease_id);
        }
      }
    }
    expect([...handed.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // A's own commands never went to B.
    const listed = (await store.get('/v1/app/command?page_size=200')).body.data;
    for (const command of listed) expect(command.attempt).toBe(1);
    expect(listed.filter((c: any) => c.command === 'a').every((c: any) => c.server_id === a.id)).toBe(true);
  });

  it('concurrent claims over offline-only commands of several players: each handed to exactly one lease, and only while its player is reported online', async () => {
    const store = await newStore();
    const a = await createServer(store, 'A');
    const b = await createServer(store, 'B');
    const pkg = await createPackage(store, {
      commands: [
        { command: 'any', offline_execute: false },
        { command: 'a', servers: [a.id], offline_execute: false },
      ],
    });
    const playerOf = new Map<number, string>();
    for (let i = 0; i < 12; i++) {
      const player = `P${i % 3}`;
      const order = await placeOrder(store, orderBody(pkg.id, { client_identifier: player }));
      expect((await store.post(`/v1/app/order/${order.id}/approve`)).status).toBe(200);
      for (const command of (await store.get(`/v1/app/order/${order.id}/command`)).body) playerOf.set(command.id, player);
    }
    const handed = new Map<number, string>();
    for (let round = 0; round < 6; round++) {
      // P2 is never online: its commands stay queued.
      const keys = Array.from({ length: 10 }, (_, i) => (i % 2 ? b.key : a.key));
      const claims = await Promise.all(keys.map((key, i) => claim(key, { limit: 2, online: i % 3 ? ['P0', 'P1'] : ['P1', 'P0', 'Nobody'] })));
      for (const res of claims) {
        expect(res.status, res.text).toBe(200);
        for (const command of res.body.commands) {
          expect(handed.has(command.id), `command ${command.id} handed out twice`).toBe(false);
          expect(playerOf.get(command.id)).not.toBe('P2');
          handed.set(command.id, res.body.lease_id);
        }
      }
      // DONE releases each order's command for A (it waits on the any-server one).
      await Promise.all(
        claims.map((res, i) =>
          res.body.lease_id === null
            ? undefined
            : ack(
                keys[i]!,
                res.body.lease_id,
                res.body.commands.map((command: { id: number }) => ({ id: command.id, status: 'DONE' })),
              ),
        ),
      );
    }
    expect([...handed.keys()].sort((x, y) => x - y)).toEqual(
      [...playerOf]
        .filter(([, player]) => player !== 'P2')
        .map(([id]) => id)
        .sort((x, y) => x - y),
    );
  });

  it('an ack racing a lease expiry: either the ack lands or the new lease holds the command, never both', async () => {
    for (let round = 0; round < 5; round++) {
      const store = await newStore();
      const a = await createServer(store, 'A');
      const b = await createServer(store, 'B');
      await approvedOrder(store, [{ command: 'contested' }]);
      const first = (await claim(a.key)).body;
      const id = first.commands[0].id;
      await rewind(store.storeId, id, () => ({ lease_until: PAST_ISO }));
      const [acked, reclaimed] = await Promise.all([ack(a.key, first.lease_id, [{ id, status: 'DONE' }]), claim(b.key)]);
      const state = (await store.get(`/v1/app/command/${id}`)).body;
      if (acked.body.accepted.length === 1) {
        expect(reclaimed.body.commands).toEqual([]);
        expect(state).toMatchObject({ status: 'DONE', attempt: 1 });
      } else {
        expect(acked.body.rejected).toEqual([{ id, reason: 'LEASE_LOST' }]);
        expect(reclaimed.body.commands.map((c: any) => [c.id, c.attempt])).toEqual([[id, 2]]);
        expect(state).toMatchObject({ status: 'PENDING', server_id: b.id, attempt: 2 });
      }
    }
  });

  it('an ack whose lease expired while nobody claimed the command is accepted', async () => {
    const store = await newStore();
    const server = await createServer(store);
    await approvedOrder(store, [{ command: 'slow' }]);
    const lease = (await claim(server.key)).body;
    const id = lease.commands[0].id;
    await rewind(store.storeId, id, () => ({ lease_until: PAST_ISO }));
    expect((await ack(server.key, lease.lease_id, [{ id, status: 'DONE' }])).body.accepted).toEqual([id]);
    expect((await claim(server.key)).body.commands).toEqual([]);
  });

  it('a retry racing an ack: the command runs once more after the retry, whichever lands first', async () => {
    for (let round = 0; round < 5; round++) {
      const store = await newStore();
      const server = await createServer(store);
      await approvedOrder(store, [{ command: 'again' }]);
      const lease = (await claim(server.key)).body;
      const id = lease.commands[0].id;
      await store.patch(`/v1/app/command/${id}`, { status: 'CANCELED' });
      const [retried, acked] = await Promise.all([store.post(`/v1/app/command/${id}/retry`), ack(server.key, lease.lease_id, [{ id, status: 'DONE' }])]);
      expect(retried.status).toBe(200);
      expect(acked.status).toBe(200);
      expect((await store.get(`/v1/app/command/${id}`)).body).toMatchObject({ status: 'PENDING', tries: 0 });
      expect(await drain(server.key)).toEqual([id]);
      expect((await store.get(`/v1/app/command/${id}`)).body.status).toBe('DONE');
    }
  });
});

describe('operator views and retry', () => {
  it('lists commands newest first with filters and a bound cursor; retries only FAILED, DEAD or CANCELED', async () => {
    const store = await newStore();
    const server = await createServer(store);
    const first = await approvedOrder(store, [{ command: 'one', servers: [server.id] }, { command: 'two' }]);
    await approvedOrder(store, [{ command: 'three' }]);
    const page1 = await store.get('/v1/app/command?page_size=2');
    expect(page1.body.data.map((c: any) => c.id)).toEqual([3, 2]);
    const page2 = await store.get(`/v1/app/command?page_size=2&page_cursor=${page1.body.next_cursor}`);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: 1, server_id: server.id })], next_cursor: null });
    expect((await store.get(`/v1/app/command?order=${first.order.id}`)).body.data.map((c: any) => c.id)).toEqual([2, 1]);
    expect((await store.get(`/v1/app/command?server=${server.id}`)).body.data.map((c: any) => c.id)).toEqual([1]);
    expect((await store.get('/v1/app/command?order=999')).body).toEqual({ data: [], next_cursor: null });
    const tampered = await store.get(`/v1/app/command?page_size=2&status=PENDING&page_cursor=${page1.body.next_cursor}`);
    expect(tampered.status).toBe(400);
    expect(firstError(tampered).code).toBe('INVALID_CURSOR');
    const other = await newStore();
    expect((await other.get(`/v1/app/command?page_size=2&page_cursor=${page1.body.next_cursor}`)).status).toBe(400);
    expect((await other.get('/v1/app/command/1')).status).toBe(404);

    expect((await store.post('/v1/app/command/1/retry')).status).toBe(409);
    await store.patch('/v1/app/command/1', { status: 'DEAD' });
    const retried = await store.post('/v1/app/command/1/retry');
    expect(retried.body).toMatchObject({ status: 'PENDING', tries: 0 });
    expect((await store.get('/v1/app/command?status=DEAD')).body.data).toEqual([]);
    await store.patch('/v1/app/command/1', { status: 'DONE' });
    expect((await store.post('/v1/app/command/1/retry')).status).toBe(409);
    expect((await store.post('/v1/app/command/99/retry')).status).toBe(404);
  });
});

describe('GET /v1/webstore/order/{internal_id}', () => {
  it('names the server of a bound command from the start, and of an any-server command its last claimer (null before)', async () => {
    const store = await newStore();
    const a = await createServer(store, 'Survival');
    const b = await createServer(store, 'Creative');
    const buyer = await buyerLogin(store.domain, 'steve@example.com');
    const { pkg, order } = await approvedOrder(store, [{ command: 'rank', servers: [a.id, b.id] }, { command: 'anywhere' }]);
    const line = (server_name: string | null, status = 'PENDING') => ({ package_id: pkg.id, package_name: pkg.name, server_name, status, updated_at: expect.any(String) });
    expect((await buyer.get(`/v1/webstore/order/${order.internal_id}`)).body.deliveries).toEqual([line('Survival'), line('Creative'), line(null)]);
    // Both bound commands must be final before the any-server one is handed out (section 9's order).
    await drain(a.key);
    await drain(b.key);
    const anywhere = (await claim(a.key)).body;
    expect((await buyer.get(`/v1/webstore/order/${order.internal_id}`)).body.deliveries).toEqual([line('Survival', 'DONE'), line('Creative', 'DONE'), line('Survival')]);
    await rewind(store.storeId, anywhere.commands[0].id, () => ({ lease_until: PAST_ISO }));
    await drain(b.key);
    expect((await buyer.get(`/v1/webstore/order/${order.internal_id}`)).body.deliveries).toEqual([line('Survival', 'DONE'), line('Creative', 'DONE'), line('Creative', 'DONE')]);
  });

  it("shows the buyer's own order with its deliveries (server name once claimed, never the command text); another buyer's is a 404", async () => {
    const store = await newStore();
    const server = await createServer(store, 'Survival');
    const buyer = await buyerLogin(store.domain, 'steve@example.com');
    const { pkg, order } = await approvedOrder(store, [{ command: 'secret {client_identifier}' }, { command: 'later', stage: 'REFUNDED' }]);
    const before = await buyer.get(`/v1/webstore/order/${order.internal_id}`);
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({ id: order.id, status: 'APPROVED', deliveries: [{ package_id: pkg.id, package_name: pkg.name, server_name: null, status: 'PENDING' }] });
    expect(before.text).not.toContain('secret');
    await drain(server.key);
    expect((await buyer.get(`/v1/webstore/order/${order.internal_id}`)).body.deliveries).toEqual([
      { package_id: pkg.id, package_name: pkg.name, server_name: 'Survival', status: 'DONE', updated_at: expect.any(String) },
    ]);
    const stranger = await buyerLogin(store.domain, 'alex@example.com');
    expect((await stranger.get(`/v1/webstore/order/${order.internal_id}`)).status).toBe(404);
    expect((await buyer.get('/v1/webstore/order/nope')).status).toBe(404);
  });
});
