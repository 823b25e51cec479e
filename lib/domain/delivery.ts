import { conflict } from '#lib/errors.ts';
import type { ChainEntry, CommandRecord, CommandStatus, PlannedCommand } from '#lib/schemas/command.ts';
import type { Delivery } from '#lib/schemas/order.ts';

/**
 * The delivery rules: which commands an approval creates and in what order they may run, what a
 * claim hands out, what an ack, a report or a retry does to a command. No I/O: lib/flows/delivery.ts
 * and lib/flows/command.ts read the commands, call these, and write what they answer, each write
 * conditioned on the revision read. `now` is always a parameter (epoch milliseconds).
 *
 * Ordering. Within one batch (the commands one approval creates, in hand-out order) an earlier
 * command E holds a later command L back when they may run on the same server: E or L is for any
 * server, or both name the same one. L is handed out only once every such E is final (DONE, DEAD,
 * CANCELED). The batch's chain item records each command's state; only RELEASED commands are on
 * the claim queue, so a claim never reads a command that has to wait.
 */
export const FINAL_STATUSES: readonly CommandStatus[] = ['DONE', 'DEAD', 'CANCELED'];
export const isFinal = (status: CommandStatus) => FINAL_STATUSES.includes(status);

/** The 5th failure is the last: the command is DEAD and stays off the queue. */
export const TRIES_MAX = 5;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 3_600_000;

/** 30 s x 2^(tries-1), at most 1 hour: after the 1st failure 30 s, the 2nd 60 s, the 4th 240 s. */
export const backoffMs = (tries: number) => Math.min(BACKOFF_BASE_MS * 2 ** (tries - 1), BACKOFF_MAX_MS);

const iso = (ms: number) => new Date(ms).toISOString();

/** Whether `earlier` holds `later` back (the servers the templates named; null is any). */
const holdsBack = (earlier: number | null, later: number | null) => earlier === null || later === null || earlier === later;

/**
 * The commands of one batch, in hand-out order: each `stage` delivery once per server it lists
 * (or once for any server), each knowing whether it waits and whether anything waits on it.
 */
export function planCommands(deliveries: readonly Delivery[], stage: PlannedCommand['stage']): PlannedCommand[] {
  return planBatch(deliveries.filter((delivery) => (delivery.stage ?? 'APPROVED') === stage));
}

/** A batch of deliveries in the order given (their own stages kept), as one chain. */
export function planBatch(deliveries: readonly Delivery[]): PlannedCommand[] {
  const targets = deliveries.flatMap((delivery) => (delivery.servers ?? [null]).map((server_id) => ({ delivery, server_id })));
  return targets.map(({ delivery, server_id }, index) => ({
    delivery,
    server_id,
    stage: delivery.stage ?? 'APPROVED',
    waiting: targets.slice(0, index).some((earlier) => holdsBack(earlier.server_id, server_id)),
    releases: targets.slice(index + 1).some((later) => holdsBack(server_id, later.server_id)),
  }));
}

/** A batch needs a chain item only when some command in it waits. */
export function newChain(ids: readonly number[], plan: readonly PlannedCommand[]): ChainEntry[] | null {
  if (!plan.some((command) => command.waiting)) return null;
  return plan.map((command, index) => ({ id: ids[index]!, server: command.server_id, state: command.waiting ? 'WAITING' : 'RELEASED' }));
}

/** The chain as a resend starts it again: every command back to where the approval put it. */
export function restartChain(entries: readonly ChainEntry[]): ChainEntry[] {
  return entries.map((entry, index) => ({
    ...entry,
    state: entries.slice(0, index).some((earlier) => holdsBack(earlier.server, entry.server)) ? 'WAITING' : 'RELEASED',
  }));
}

/**
 * Marks `finished` FINAL and answers the chain after it, with the waiting commands whose every
 * earlier holder is now final (to put on the queue in the same transaction).
 */
export function finishInChain(entries: readonly ChainEntry[], finished: readonly number[]): { entries: ChainEntry[]; released: number[] } {
  const next = entries.map((entry) => (finished.includes(entry.id) ? { ...entry, state: 'FINAL' as const } : { ...entry }));
  const released: number[] = [];
  next.forEach((entry, index) => {
    if (entry.state !== 'WAITING') return;
    const held = next.slice(0, index).some((earlier) => earlier.state !== 'FINAL' && holdsBack(earlier.server, entry.server));
    if (!held) {
      entry.state = 'RELEASED';
      released.push(entry.id);
    }
  });
  return { entries: next, released };
}

/**
 * A released command leaves the wait; it joins the queue if still PENDING (an operator may have
 * reported it FAILED while it waited: it then waits for a retry instead).
 */
export const released = (command: CommandRecord, now: number): CommandRecord => ({ ...command, waiting: false, updated_at: iso(now) });

/** When a claim may hand the command out: its execute_at, or the end of the lease that holds it. */
export const claimableAt = (command: Pick<CommandRecord, 'execute_at' | 'lease_until'>) =>
  command.lease_until !== null && command.lease_until > command.execute_at ? command.lease_until : command.execute_at;

/** On the claim queue: PENDING, released, and due at `now` (no live lease). */
export function isClaimable(command: CommandRecord, now: number): boolean {
  return command.status === 'PENDING' && !command.waiting && claimableAt(command) <= iso(now);
}

/** Whether a claim may take this queued command: claimable, and one with `offline_execute: false` only while its player is online. */
export function mayHandOut(command: CommandRecord, online: ReadonlySet<string>, now: number): boolean {
  return isClaimable(command, now) && (command.offline_execute || online.has(command.order.client_identifier));
}

export interface Lease {
  id: string;
  server_id: number;
  expires_at: string;
}

/**
 * The command held by `lease`. An any-server command is bound to the claiming server only while the
 * lease lives: its `server_id` is the last claimer's, and once the lease lapses unacknowledged any
 * server of the store may claim it again (`attempt` + 1), so a server that died strands nothing.
 */
export const leased = (command: CommandRecord, lease: Lease, now: number): CommandRecord => ({
  ...command,
  server_id: lease.server_id,
  lease_id: lease.id,
  lease_until: lease.expires_at,
  acked: false,
  attempt: command.attempt + 1,
  updated_at: iso(now),
});

/** A lease as the ack reads it: what it handed out. */
export interface HandedOut {
  id: string;
  command_ids: readonly number[];
}

export interface AckResult {
  status: 'DONE' | 'FAILED';
  response?: string;
}

export type AckOutcome =
  | { accepted: false; reason: 'NOT_FOUND' | 'NOT_IN_LEASE' | 'LEASE_LOST' }
  /** `next` null: accepted without a change (a repeated ack, or the operator finished the command meanwhile). */
  | { accepted: true; next: CommandRecord | null };

/**
 * What an ack by `leaseId` does to a command. The holder of the lease (even an expired one that no
 * other claim replaced) decides; anyone else is refused. A repeat changes nothing. DONE is final;
 * FAILED backs off (30 s x 2^(tries-1), at most 1 h), and the 5th failure is DEAD.
 */
export function ackOutcome(command: CommandRecord | undefined, lease: HandedOut, result: AckResult, now: number): AckOutcome {
  if (!command) return { accepted: false, reason: 'NOT_FOUND' };
  if (!lease.command_ids.includes(command.id)) return { accepted: false, reason: 'NOT_IN_LEASE' };
  // Claimed again since (or taken back by the operator): the command is no longer this lease's.
  if (command.lease_id !== lease.id) return { accepted: false, reason: 'LEASE_LOST' };
  if (command.acked) return { accepted: true, next: null };
  const response = result.response ?? command.response;
  // The ack ends the lease (a FAILED command is due at its backoff, not at the lease's end); lease_id stays for repeats.
  const base = { ...command, acked: true, lease_until: iso(now), updated_at: iso(now) };
  // Canceled (or reported) by the operator while the server ran it: recorded, nothing more.
  if (command.status !== 'PENDING') return { accepted: true, next: base };
  if (result.status === 'DONE') return { accepted: true, next: { ...base, status: 'DONE', response } };
  const tries = command.tries + 1;
  if (tries >= TRIES_MAX) return { accepted: true, next: { ...base, status: 'DEAD', tries, response } };
  return { accepted: true, next: { ...base, tries, response, execute_at: iso(now + backoffMs(tries)) } };
}

/**
 * An operator's report (PATCH /v1/app/command/{id}). PENDING puts the command back (it waits
 * again only if it never left the wait); DONE, DEAD and CANCELED are final; FAILED takes it off
 * the queue and counts a try unless it was already FAILED, so a report sent twice counts once.
 * Any report ends the lease: the holder's later ack is refused.
 */
export function reported(command: CommandRecord, report: { status: CommandStatus; response?: string }, now: number): CommandRecord {
  const countsTry = report.status === 'FAILED' && command.status !== 'FAILED';
  return {
    ...command,
    status: report.status,
    response: report.response ?? command.response,
    tries: command.tries + (countsTry ? 1 : 0),
    lease_id: null,
    lease_until: null,
    acked: false,
    updated_at: iso(now),
  };
}

/** POST /v1/app/command/{id}/retry: a FAILED, DEAD or CANCELED command back on the queue with tries 0. */
export function retried(command: CommandRecord, now: number): CommandRecord {
  if (command.status === 'PENDING' || command.status === 'DONE') {
    throw conflict(`Command ${command.id} is ${command.status}; only a FAILED, DEAD or CANCELED command can be retried`);
  }
  return { ...command, status: 'PENDING', tries: 0, execute_at: iso(now), lease_id: null, lease_until: null, acked: false, updated_at: iso(now) };
}

/** Resend: PENDING again at its own execute_at, waiting where the restarted chain says so. */
export const resent = (command: CommandRecord, waiting: boolean, now: number): CommandRecord => ({
  ...command,
  status: 'PENDING',
  waiting,
  lease_id: null,
  lease_until: null,
  acked: false,
  updated_at: iso(now),
});

/** A refund or chargeback cancels the order's commands that are not DONE (section 10). */
export const canceled = (command: CommandRecord, now: number): CommandRecord => ({ ...command, status: 'CANCELED', updated_at: iso(now) });

/**
 * Deleting a server: the PENDING commands bound to it are canceled; the any-server commands it
 * claimed last (under a lease, or backing off after its FAILED ack) go back to the queue for the
 * store's other servers at once, its lease ended (its keys are revoked: it can ack nothing) and no
 * server named until one claims them. Null when the command is no longer the server's to give up.
 */
export function afterServerDeleted(command: CommandRecord | undefined, serverId: number, now: number): CommandRecord | null {
  if (command?.status !== 'PENDING' || command.server_id !== serverId) return null;
  if (!command.any_server) return canceled(command, now);
  return { ...command, server_id: null, lease_id: null, lease_until: null, acked: false, updated_at: iso(now) };
}

/** A change finishes the command (it becomes final now) and others may wait on it: the chain must hear of it. */
export const finishesInChain = (before: CommandRecord, after: CommandRecord) => before.chain !== null && before.releases && !isFinal(before.status) && isFinal(after.status);

export interface BuyerDelivery {
  package_id: number;
  package_name: string;
  server_name: string | null;
  status: CommandStatus;
  updated_at: string;
}

/**
 * What a buyer sees of an order's delivery: its APPROVED-stage commands, in hand-out order, by
 * package and server name; never the command text (it may hold other players' or staff data).
 */
export function buyerDeliveries(commands: readonly CommandRecord[], packageNames: ReadonlyMap<number, string>, serverNames: ReadonlyMap<number, string>): BuyerDelivery[] {
  return commands
    .filter((command) => command.stage === 'APPROVED')
    .sort((a, b) => a.id - b.id)
    .map((command) => ({
      package_id: command.package_id,
      package_name: packageNames.get(command.package_id) ?? '',
      // A bound command names its server from the start; an any-server one its last claimer (none before the first claim).
      // A deleted server reads as null.
      server_name: command.server_id === null ? null : (serverNames.get(command.server_id) ?? null),
      status: command.status,
      updated_at: command.updated_at,
    }));
}
