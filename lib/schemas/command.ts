import * as v from 'valibot';
import { timestamp } from '#lib/schemas/common.ts';

export const COMMAND_STATUSES = ['PENDING', 'DONE', 'FAILED', 'CANCELED'] as const;
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
  created_at: timestamp,
  updated_at: timestamp,
});

export const commandReportBody = v.strictObject({
  status: v.picklist(COMMAND_STATUSES, 'status must be DONE, FAILED, PENDING or CANCELED'),
  response: v.optional(
    v.pipe(v.string('response must be a string'), v.maxLength(COMMAND_RESPONSE_MAX, `response must be at most ${COMMAND_RESPONSE_MAX} characters`)),
  ),
});

export type QueuedCommandOrder = v.InferOutput<typeof queuedCommandOrder>;
export type QueuedCommand = v.InferOutput<typeof queuedCommandResource>;
export type Command = v.InferOutput<typeof commandResource>;
export type CommandReport = v.InferOutput<typeof commandReportBody>;
