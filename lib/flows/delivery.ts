import { currentTimeMs } from '#lib/clock.ts';
import { randomBytes } from 'node:crypto';
import { claimQueue, commandKey, saveChange, queuedCommandResponse, commandFromItem, getCommandRecord } from '#lib/db/command.ts';
import { getMany } from '#lib/db/entity.ts';
import { leaseKey, putLease, liveLease, type LeaseRecord } from '#lib/db/lease.ts';
import { touchServer } from '#lib/db/server.ts';
import { StaleRead } from '#lib/db/transact.ts';
import { ackOutcome, leased, mayHandOut, type AckOutcome, type Lease } from '#lib/domain/delivery.ts';
import { forbidden, notFound } from '#lib/errors.ts';
import { changeCommand } from '#lib/flows/command.ts';
import type { CommandRecord } from '#lib/schemas/command.ts';
import type { AckBody, AckResponse, ClaimBody, ClaimResponse } from '#lib/schemas/delivery.ts';

/*
 * A game server's side of delivery (extensions section 9): claim, run, ack. Calls exclude the
 * credential lookup.
 *
 * | use case | calls                                                                                             |
 * |----------|---------------------------------------------------------------------------------------------------|
 * | claim    | UpdateItem server (last_seen_at) + 2 Queries (its partition and ANY's) + one conditional PutItem  |
 * |          | per command handed out + Put lease: 3 when nothing is due, 4 + n for n commands. With `online`:   |
 * |          | + 2 roster Queries + 1 Query per online player the rosters name (lib/db/command.ts `claimQueue`) |
 * | ack      | BatchGet (lease + commands) + per accepted result one PutItem, or when it finishes a command      |
 * |          | others wait on: chain GetItem + [BatchGet released] + TransactWrite: 1 + n (up to 1 + 3n)          |
 *
 * Exactly once: a claim takes a command with a Put conditioned on the revision it read from the
 * queue, so of any number of racing claims one wins and the others skip it; the command's queue
 * sort key becomes the lease's expiry, so nobody sees it again until that lease lapses. An ack is a
 * Put conditioned on the revision read, by the lease that holds the command now.
 */

/** A claim examines at most this many due commands (offline-only ones it may not hand out included). */
const EXAMINED_MAX = 500;

const newLeaseId = () => randomBytes(16).toString('base64url');
const iso = (ms: number) => new Date(ms).toISOString();

/** The commands it won, in the order tried; a command another claim took first is left out. */
async function leaseAll(candidates: readonly CommandRecord[], lease: Lease, now: number): Promise<CommandRecord[]> {
  const won = await Promise.all(
    candidates.map((record) =>
      saveChange(record, leased(record, lease, now)).catch(async (error: unknown) => {
        if (!(error instanceof StaleRead)) throw error;
        // Usually a racing claim won it. But when this write landed and its answer was lost, the SDK's
        // retry finds the command already changed, by this very lease: it is ours, and handed out with
        // the rest (else it would wait, leased to nobody who knows it, until the lease lapses).
        const stored = await getCommandRecord(record.store_id, record.id);
        return stored?.lease_id === lease.id ? stored : undefined;
      }),
    ),
  );
  return won.filter((record): record is CommandRecord => record !== undefined);
}

export async function claimCommands(storeId: number, serverId: number, input: ClaimBody): Promise<ClaimResponse> {
  const now = currentTimeMs();
  const lease: Lease = { id: newLeaseId(), server_id: serverId, expires_at: iso(now + input.lease_seconds * 1000) };
  const online = new Set(input.online);
  // Read the queue while the server is checked; nothing is written before it is known to exist.
  const seen = touchServer(storeId, serverId, iso(now));
  seen.catch(() => undefined);
  const handed: CommandRecord[] = [];
  let batch: CommandRecord[] = [];
  let examined = 0;
  const take = async () => {
    await seen;
    handed.push(...(await leaseAll(batch, lease, now)));
    batch = [];
  };
  const queue = await claimQueue(storeId, serverId, online, iso(now), input.limit + 10);
  for await (const record of queue.commands) {
    examined += 1;
    if (mayHandOut(record, online, now)) batch.push(record);
    // Racing claims may win some of the batch: take more until the limit, or the examined bound.
    if (handed.length + batch.length >= input.limit) await take();
    if (handed.length >= input.limit || examined >= EXAMINED_MAX) break;
  }
  await take();
  const settled = queue.settle();
  if (handed.length === 0) {
    await settled;
    return { lease_id: null, expires_at: null, commands: [] };
  }
  const record: LeaseRecord = { ...lease, command_ids: handed.map((command) => command.id) };
  await Promise.all([putLease(storeId, record), settled]);
  return {
    lease_id: lease.id,
    expires_at: lease.expires_at,
    commands: handed.map((command) => ({ ...queuedCommandResponse(command), order_id: command.order_id, attempt: command.attempt })),
  };
}

const LEASE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** One result of an ack: decided on the command as read, written, and decided again if it changed meanwhile. */
const ackOne = (storeId: number, lease: LeaseRecord, result: AckBody['results'][number], first: CommandRecord | undefined) =>
  changeCommand(
    storeId,
    result.id,
    (read, now): { next: CommandRecord | null; answer: AckOutcome } => {
      const outcome = ackOutcome(read, lease, result, now);
      return { next: outcome.accepted ? outcome.next : null, answer: outcome };
    },
    { record: first },
  );

export async function ackCommands(storeId: number, serverId: number, body: AckBody): Promise<AckResponse> {
  if (!LEASE_ID.test(body.lease_id)) throw notFound('Lease');
  const now = currentTimeMs();
  const [leaseItem, ...items] = await getMany([leaseKey(storeId, body.lease_id), ...body.results.map((result) => commandKey(storeId, result.id))]);
  const lease = liveLease(leaseItem, Math.floor(now / 1000));
  if (!lease) throw notFound('Lease');
  if (lease.server_id !== serverId) throw forbidden('This lease belongs to another server', 'FORBIDDEN');
  const outcomes = await Promise.all(body.results.map((result, index) => ackOne(storeId, lease, result, items[index] && commandFromItem(items[index]))));
  return {
    accepted: body.results.filter((_, index) => outcomes[index]!.accepted).map((result) => result.id),
    rejected: body.results.flatMap((result, index) => {
      const outcome = outcomes[index]!;
      return outcome.accepted ? [] : [{ id: result.id, reason: outcome.reason }];
    }),
  };
}
