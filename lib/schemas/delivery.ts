import * as v from 'valibot';
import { queuedCommandOrder } from '#lib/schemas/command.ts';
import { timestamp } from '#lib/schemas/common.ts';
import { COMMAND_STATUSES } from '#lib/schemas/command.ts';
import { buyerOrderResource } from '#lib/schemas/checkout.ts';
import { CLIENT_FIELD_MAX } from '#lib/schemas/order.ts';

/** What a game server sends and receives (extensions section 9). */
export const CLAIM_LIMIT_MAX = 100;
export const LEASE_SECONDS_MIN = 10;
export const LEASE_SECONDS_MAX = 600;
/** Players a server reports online in one claim: a big server's whole player list. */
export const ONLINE_MAX = 5000;
export const ACK_RESPONSE_MAX = 2000;

const whole = (name: string, min: number, max: number) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.integer(`${name} must be a whole number`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

export const claimBody = v.strictObject({
  online: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string('online holds client_identifier strings'), v.maxLength(CLIENT_FIELD_MAX, `a client_identifier is at most ${CLIENT_FIELD_MAX} characters`)),
        'online must be an array of client_identifier',
      ),
      v.maxLength(ONLINE_MAX, `online holds at most ${ONLINE_MAX} players`),
    ),
    () => [],
  ),
  limit: v.optional(whole('limit', 1, CLAIM_LIMIT_MAX), 50),
  lease_seconds: v.optional(whole('lease_seconds', LEASE_SECONDS_MIN, LEASE_SECONDS_MAX), 60),
});

export const claimedCommand = v.object({
  id: v.number(),
  store_id: v.number(),
  command: v.string(),
  offline_execute: v.boolean(),
  execute_at: timestamp,
  order: queuedCommandOrder,
  order_id: v.number(),
  /** 1 on the first claim; each claim after a lease lapsed or a failure adds 1. */
  attempt: v.number(),
});

export const claimResponse = v.object({
  lease_id: v.nullable(v.string()),
  expires_at: v.nullable(timestamp),
  commands: v.array(claimedCommand),
});

const ackResult = v.strictObject({
  id: v.pipe(v.number('id must be a command id'), v.safeInteger('id must be an integer'), v.minValue(1, 'id must be at least 1')),
  status: v.picklist(['DONE', 'FAILED'], 'status must be DONE or FAILED'),
  response: v.optional(v.pipe(v.string('response must be a string'), v.maxLength(ACK_RESPONSE_MAX, `response must be at most ${ACK_RESPONSE_MAX} characters`))),
});

export const ackBody = v.strictObject({
  lease_id: v.pipe(v.string('lease_id must be a string'), v.minLength(1, 'lease_id is required'), v.maxLength(100, 'lease_id is not a lease id')),
  results: v.pipe(
    v.array(ackResult, 'results must be an array of {id, status, response?}'),
    v.minLength(1, 'results must hold at least one result'),
    v.maxLength(CLAIM_LIMIT_MAX, `results holds at most ${CLAIM_LIMIT_MAX} results`),
    v.check((results) => new Set(results.map((result) => result.id)).size === results.length, 'results names a command more than once'),
  ),
});

export const ackResponse = v.object({
  accepted: v.array(v.number()),
  rejected: v.array(
    v.object({
      id: v.number(),
      reason: v.pipe(
        v.picklist(['NOT_FOUND', 'NOT_IN_LEASE', 'LEASE_LOST']),
        v.description('NOT_FOUND: no such command; NOT_IN_LEASE: this lease did not hand it out; LEASE_LOST: claimed again since (the lease lapsed) or taken back by the operator'),
      ),
    }),
  ),
});

/** One of the buyer's orders (GET /v1/webstore/order/{internal_id}) and how its delivery is going (never the command text). */
export const buyerOrderWithDeliveries = v.object({
  ...buyerOrderResource.entries,
  deliveries: v.array(
    v.object({
      package_id: v.number(),
      package_name: v.string(),
      server_name: v.pipe(
        v.nullable(v.string()),
        v.description(
          'The server the command is bound to from the start (servers: [ids]); for a command of any server the server that claimed it last, null until one does (and for a deleted server)',
        ),
      ),
      status: v.picklist(COMMAND_STATUSES),
      updated_at: timestamp,
    }),
  ),
});

export type ClaimBody = v.InferOutput<typeof claimBody>;
export type ClaimResponse = v.InferOutput<typeof claimResponse>;
export type AckBody = v.InferOutput<typeof ackBody>;
export type AckResponse = v.InferOutput<typeof ackResponse>;
