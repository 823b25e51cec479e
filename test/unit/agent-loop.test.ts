import { describe, expect, it } from 'vitest';
import { DeliveryAgent, type Game } from '../../agent/agent.ts';
import type { AckResult, Claim, ClaimedCommand } from '../../agent/api.ts';

/**
 * The agent's cycle (agent/agent.ts) with the store and the game played by this test, and the
 * clock a parameter: what it runs, what it acks, and what it leaves to the lease.
 */
const command = (id: number): ClaimedCommand => ({ id, order_id: id, attempt: 1, command: `say ${id}`, offline_execute: true, order: { client_identifier: 'Steve' } });

function harness(commands: ClaimedCommand[], secondsPerCommand: number) {
  let clock = Date.parse('2026-11-26T10:00:00.000Z');
  const ran: string[] = [];
  const acks: { lease_id: string; results: AckResult[] }[] = [];
  const claims: { online: string[]; limit: number; lease_seconds: number }[] = [];
  const warnings: string[] = [];
  const game: Game = {
    run: async (text) => {
      if (text === 'list') return { text: 'There are 1 of a max of 20 players online: Steve', complete: true };
      ran.push(text);
      clock += secondsPerCommand * 1000;
      return { text: `ran ${text}`, complete: true };
    },
    close: () => {},
  };
  const api = {
    claim: async (body: { online: string[]; limit: number; lease_seconds: number }): Promise<Claim> => {
      claims.push(body);
      return { lease_id: 'lease-1', expires_at: new Date(clock + body.lease_seconds * 1000).toISOString(), commands };
    },
    ack: async (lease_id: string, results: AckResult[]) => {
      acks.push({ lease_id, results });
      return { accepted: results.map((result) => result.id), rejected: [] };
    },
  };
  const agent = new DeliveryAgent({
    api,
    game,
    onlineCommand: 'list',
    onlineParser: { kind: 'minecraft' },
    intervalMs: 10_000,
    now: () => clock,
    log: () => {},
    warn: (line) => warnings.push(line),
  });
  return { agent, ran, acks, claims, warnings };
}

describe('one cycle of the delivery agent', () => {
  it('claims with the players the game lists, runs every command in order and acks each with its answer', async () => {
    const { agent, ran, acks, claims } = harness([command(1), command(2), command(3)], 1);
    expect(await agent.cycle()).toBe(3);
    expect(claims).toEqual([{ online: ['Steve'], limit: 20, lease_seconds: 150 }]);
    expect(ran).toEqual(['say 1', 'say 2', 'say 3']);
    expect(acks.flatMap((ack) => ack.results)).toEqual([1, 2, 3].map((id) => ({ id, status: 'DONE', response: `ran say ${id}` })));
    expect(acks.every((ack) => ack.lease_id === 'lease-1')).toBe(true);
  });

  it('starts no command with less than 10 s of the lease left, and leaves the rest to the lease unacked', async () => {
    // 150 s lease: after two commands of 71 s, 8 s are left.
    const { agent, ran, acks, warnings } = harness([command(1), command(2), command(3)], 71);
    expect(await agent.cycle()).toBe(3);
    expect(ran).toEqual(['say 1', 'say 2']);
    expect(acks.flatMap((ack) => ack.results.map((result) => result.id))).toEqual([1, 2]);
    expect(warnings).toEqual(['the lease ends soon: 1 command(s) left for a later claim']);
  });

  it('runs the third command when exactly 10 s are left', async () => {
    const { agent, ran } = harness([command(1), command(2), command(3)], 70);
    await agent.cycle();
    expect(ran).toEqual(['say 1', 'say 2', 'say 3']);
  });
});
