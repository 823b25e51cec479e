import { describe, expect, it } from 'vitest';
import { ackOutcome, afterServerDeleted, backoffMs, buyerDeliveries, finishInChain, newChain, planCommands, retried } from '#lib/domain/delivery.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';

const NOW = Date.parse('2026-11-21T15:00:00.000Z');
const delivery = (command: string, servers: number[] | null = null) => ({ package_id: 1, command, offline_execute: true, delay_seconds: 0, servers, stage: 'APPROVED' as const });
const record = (change: Partial<CommandRecord> = {}): CommandRecord => ({
  id: 1,
  store_id: 1,
  order_id: 1,
  package_id: 1,
  command: 'x',
  offline_execute: true,
  execute_at: '2026-11-21T14:00:00.000Z',
  status: 'PENDING',
  tries: 0,
  response: null,
  server_id: 3,
  stage: 'APPROVED',
  attempt: 1,
  created_at: '2026-11-21T14:00:00.000Z',
  updated_at: '2026-11-21T14:00:00.000Z',
  order: { client_identifier: 'Steve', client_email: 's@example.com', client_name: 'S', client_social: null, internal_id: 'i', variables: [] },
  any_server: false,
  chain: null,
  releases: false,
  waiting: false,
  lease_id: 'L',
  lease_until: '2026-11-21T15:01:00.000Z',
  acked: false,
  rev: 1,
  ...change,
});

describe('delivery rules', () => {
  it('backs off 30 s x 2^(tries-1), at most an hour', () => {
    expect([1, 2, 3, 4, 5, 8, 20].map(backoffMs)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 3_600_000, 3_600_000]);
  });

  it('plans one command per listed server, and who waits for whom', () => {
    const plan = planCommands([delivery('a', [1, 2]), delivery('b', [2]), { ...delivery('refund'), stage: 'REFUNDED' }, delivery('any')], 'APPROVED');
    expect(plan.map((p) => [p.delivery.command, p.server_id, p.waiting, p.releases])).toEqual([
      ['a', 1, false, true],
      ['a', 2, false, true],
      ['b', 2, true, true],
      ['any', null, true, false],
    ]);
    expect(newChain([1], planCommands([delivery('alone')], 'APPROVED'))).toBeNull();
  });

  it('releases a waiting command once every earlier command that holds it back is final', () => {
    const chain = newChain([1, 2, 3, 4], planCommands([delivery('a', [1]), delivery('b', [2]), delivery('a2', [1]), delivery('any')], 'APPROVED'))!;
    expect(chain.map((e) => e.state)).toEqual(['RELEASED', 'RELEASED', 'WAITING', 'WAITING']);
    const afterA = finishInChain(chain, [1]);
    expect(afterA.released).toEqual([3]);
    expect(finishInChain(afterA.entries, [2]).released).toEqual([]);
    expect(finishInChain(finishInChain(afterA.entries, [2]).entries, [3]).released).toEqual([4]);
  });

  it('decides acks: the lease holder decides once, anyone else is refused', () => {
    const lease = { id: 'L', command_ids: [1] };
    expect(ackOutcome(undefined, lease, { status: 'DONE' }, NOW)).toEqual({ accepted: false, reason: 'NOT_FOUND' });
    expect(ackOutcome(record({ id: 2 }), lease, { status: 'DONE' }, NOW)).toEqual({ accepted: false, reason: 'NOT_IN_LEASE' });
    expect(ackOutcome(record({ lease_id: 'M' }), lease, { status: 'DONE' }, NOW)).toEqual({ accepted: false, reason: 'LEASE_LOST' });
    expect(ackOutcome(record({ acked: true }), lease, { status: 'FAILED' }, NOW)).toEqual({ accepted: true, next: null });
    const failed = ackOutcome(record({ tries: 2 }), lease, { status: 'FAILED', response: 'no' }, NOW);
    expect(failed).toMatchObject({ accepted: true, next: { status: 'PENDING', tries: 3, response: 'no', execute_at: '2026-11-21T15:02:00.000Z', acked: true } });
    expect(ackOutcome(record({ tries: 4 }), lease, { status: 'FAILED' }, NOW)).toMatchObject({ next: { status: 'DEAD', tries: 5 } });
    // Canceled while the server ran it: the ack is recorded and changes nothing else.
    expect(ackOutcome(record({ status: 'CANCELED' }), lease, { status: 'DONE' }, NOW)).toMatchObject({ next: { status: 'CANCELED', acked: true } });
  });

  it('retries only FAILED, DEAD or CANCELED commands, ending their lease', () => {
    expect(retried(record({ status: 'DEAD', tries: 5 }), NOW)).toMatchObject({ status: 'PENDING', tries: 0, lease_id: null });
    expect(() => retried(record({ status: 'DONE' }), NOW)).toThrow('only a FAILED, DEAD or CANCELED');
    expect(() => retried(record(), NOW)).toThrow('PENDING');
  });

  it('shows a buyer APPROVED-stage deliveries by package and server name: a bound server from the start, an any-server command its last claimer', () => {
    const commands = [
      record({ id: 2, attempt: 0 }),
      record({ id: 1, any_server: true, server_id: 4 }),
      record({ id: 4, any_server: true, server_id: null, attempt: 0 }),
      record({ id: 5, server_id: 9 }),
      record({ id: 3, stage: 'REFUNDED' }),
    ];
    const line = (server_name: string | null) => ({ package_id: 1, package_name: 'VIP', server_name, status: 'PENDING', updated_at: '2026-11-21T14:00:00.000Z' });
    // Server 9 was deleted: no name.
    expect(
      buyerDeliveries(
        commands,
        new Map([[1, 'VIP']]),
        new Map([
          [3, 'Survival'],
          [4, 'Creative'],
        ]),
      ),
    ).toEqual([line('Creative'), line('Survival'), line(null), line(null)]);
  });

  it('settles the PENDING commands of a deleted server: bound ones canceled, any-server ones it claimed back on the queue', () => {
    expect(afterServerDeleted(record(), 3, NOW)).toMatchObject({ status: 'CANCELED', server_id: 3 });
    expect(afterServerDeleted(record({ any_server: true }), 3, NOW)).toMatchObject({ status: 'PENDING', server_id: null, lease_id: null, lease_until: null, attempt: 1 });
    // Claimed by another server since, finished, or gone: nothing to do.
    expect(afterServerDeleted(record({ any_server: true, server_id: 4 }), 3, NOW)).toBeNull();
    expect(afterServerDeleted(record({ status: 'DONE' }), 3, NOW)).toBeNull();
    expect(afterServerDeleted(undefined, 3, NOW)).toBeNull();
  });
});
