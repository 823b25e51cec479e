import * as v from 'valibot';
import { queryInt, timestamp } from '#lib/schemas/common.ts';
import { CURSOR_MAX, PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, type Delivery } from '#lib/schemas/order.ts';
import { COMMAND_STAGES, type CommandStage } from '#lib/schemas/package.ts';

/** DONE, DEAD and CANCELED are final: they let the later commands of the order go (lib/domain/delivery.ts). */
export const COMMAND_STATUSES = ['PENDING', 'DONE', 'FAILED', 'DEAD', 'CANCELED'] as const;
/** What a game server reports back (console output, an error): enough to diagnose, bounded for the item. */
export const COMMAND_RESPONSE_MAX = 4000;

export const queuedCommandOrder = v.object({
  client_identifier: v.string(),
  client_email: v.string(),
  client_name: v.string(),
  client_social: v.nullable(v.string()),
  internal_id: v.string(),
  variables: v.array(v.object({ name: v.string(), value: v.string() })),
});

/** The spec's Queued command, exactly. */
export const queuedCommandResource = v.object({
  id: v.number(),
  store_id: v.number(),
  command: v.string(),
  offline_execute: v.boolean(),
  execute_at: timestamp,
  order: queuedCommandOrder,
});

export const queuedCommandList = v.array(queuedCommandResource);

/** A command with its delivery state, as the report endpoint answers it. */
export const commandResource = v.object({
  id: v.number(),
  store_id: v.number(),
  order_id: v.number(),
  package_id: v.number(),
  command: v.string(),
  offline_execute: v.boolean(),
  execute_at: timestamp,
  status: v.picklist(COMMAND_STATUSES),
  tries: v.number(),
  response: v.nullable(v.string()),
  server_id: v.pipe(
    v.nullable(v.number()),
    v.description(
      'The server that runs it: the one its template listed, or for a command of any server the last to claim it (null until one does; the claimer holds it only while its lease lives)',
    ),
  ),
  stage: v.picklist(COMMAND_STAGES),
  /** How many times a claim has handed it out. */
  attempt: v.number(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const commandReportBody = v.strictObject({
  status: v.picklist(COMMAND_STATUSES, 'status must be PENDING, DONE, FAILED, DEAD or CANCELED'),
  response: v.optional(v.pipe(v.string('response must be a string'), v.maxLength(COMMAND_RESPONSE_MAX, `response must be at most ${COMMAND_RESPONSE_MAX} characters`))),
});

export type QueuedCommandOrder = v.InferOutput<typeof queuedCommandOrder>;
export type QueuedCommand = v.InferOutput<typeof queuedCommandResource>;
export type Command = v.InferOutput<typeof commandResource>;
export type CommandReport = v.InferOutput<typeof commandReportBody>;

/** `GET /v1/app/command`: cursor mode only (newest first), with its filters. */
export const commandListQuery = v.object({
  page_cursor: v.optional(v.string()),
  page_size: v.optional(queryInt('page_size', PAGE_SIZE_MAX), String(PAGE_SIZE_DEFAULT)),
  status: v.optional(v.picklist(COMMAND_STATUSES, `status must be one of ${COMMAND_STATUSES.join(', ')}`)),
  server: v.optional(queryInt('server')),
  order: v.optional(queryInt('order')),
});

export const commandCursorPage = v.object({
  data: v.array(commandResource),
  next_cursor: v.pipe(
    v.nullable(v.pipe(v.string(), v.maxLength(CURSOR_MAX))),
    v.description(
      'Send as page_cursor for the next page; null on the last page. With status or server filters a page examines at most 1000 commands, so it may be short, even empty, and still carry a cursor.',
    ),
  ),
});

export type CommandStatus = (typeof COMMAND_STATUSES)[number];
export type CommandListQuery = v.InferOutput<typeof commandListQuery>;
export type CommandFilters = Pick<CommandListQuery, 'status' | 'server' | 'order'>;
export type CommandCursorPage = v.InferOutput<typeof commandCursorPage>;

/**
 * A command as stored (lib/db/command.ts) and as the delivery rules (lib/domain/delivery.ts) read
 * and change it: the resource plus the delivery state.
 */
export interface CommandRecord extends Command {
  order: QueuedCommandOrder;
  /** The template named no server: any server may claim it, again once the last claimer's lease lapsed (server_id is the last claimer's). */
  any_server: boolean;
  /** Id of the chain item that orders this command's batch (null: nothing waits on anything in it). */
  chain: number | null;
  /** A later command of the batch waits for this one: finishing it must look at the chain. */
  releases: boolean;
  /** An earlier command of the batch is not final yet: PENDING but not on the claim queue. */
  waiting: boolean;
  lease_id: string | null;
  lease_until: string | null;
  /** The holder of `lease_id` has acknowledged it: a repeated ack changes nothing. */
  acked: boolean;
  /** Bumped by every write; each write is conditioned on the revision it read. */
  rev: number;
}

/** One command an approval creates: a delivery for one server (or any), and where it starts in its order's chain. */
export interface PlannedCommand {
  delivery: Delivery;
  server_id: number | null;
  stage: CommandStage;
  waiting: boolean;
  releases: boolean;
}

/** A command's place in its batch, as the chain item keeps it: waiting, released (on the queue or done with it) or final. */
export interface ChainEntry {
  id: number;
  /** The server the template named (null: any); decides what waits for what. */
  server: number | null;
  state: 'WAITING' | 'RELEASED' | 'FINAL';
}

export interface Chain {
  id: number;
  entries: ChainEntry[];
  rev: number;
}
