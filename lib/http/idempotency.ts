import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { currentTimeMs } from '#lib/clock.ts';
import { claimIdempotencyKey, idempotencyPk, keepAnswer, settleUnanswered, type Claim } from '#lib/db/idempotency.ts';
import { requestEffects } from '#lib/db/request-effects.ts';
import {
  bodyFingerprint,
  decideRepeat,
  IDEMPOTENCY_RETENTION_SECONDS,
  IDEMPOTENCY_RUNNING_SECONDS,
  guestEmailOf,
  idempotencyKeyProblem,
  idempotencyScope,
  keepsAnswer,
  type IdempotencyCaller,
} from '#lib/domain/idempotency.ts';
import { HttpError, unavailable } from '#lib/errors.ts';
import type { ApiKeyAuth, BuyerAuth, OperatorAuth, OptionalBuyerAuth, PublicAuth, StoreHostAuth } from '#lib/http/auth.ts';
import { withCorsHeaders } from '#lib/http/cors.ts';
import { jsonResponse } from '#lib/http/reply.ts';
import { takesIdempotencyKey, type RouteSpec } from '#lib/http/route.ts';

/**
 * `Idempotency-Key` on the POSTs of /v1/app and /v1/webstore (extensions section 12; not the
 * credential-issuing /v1/webstore/auth/*), as two middlewares of the handler stack (lib/http/handler.ts):
 * - `claim` runs after the credential (the key is scoped to the caller: the store, the buyer, or a
 *   guest's store and client_email) and before the body is parsed, so a first answer that was a
 *   400 or 422 is kept and replayed too. One conditional UpdateItem claims the key under a random
 *   claim id or, when it is held, returns the record: a replay (early response,
 *   `Idempotent-Replayed: true`), 409 while the first request runs, 422 `IDEMPOTENCY_KEY_REUSED`
 *   for another body. Taking over from a holder that may have written and lost its answer is a
 *   409 `IDEMPOTENCY_ANSWER_LOST`, unless the route runs again safely (`rerunsAfterLostAnswer`).
 * - `record` sits outside the error envelope, so it sees the final answer, errors included: it
 *   keeps an answer below 500 (one UpdateItem) or settles a 5xx (one DeleteItem when the request
 *   wrote nothing, else one UpdateItem), and turns its own failure into a 503 with Retry-After.
 *
 * The kept answer may hold a secret (a webhook's signing secret, a buyer's access token), and the
 * table keeps credentials only as hashes: it is sealed with AES-256-GCM under a key derived from
 * the scope and the Idempotency-Key, and the record is found by another digest of them. Reading
 * the table opens no answer; presenting the key as the same caller does.
 */
interface ClaimState extends Claim {
  runningUntil: number;
  sealKey: Buffer;
}
const claims = new WeakMap<APIGatewayProxyEventV2, ClaimState>();

const digest = (purpose: string, scope: string) => createHash('sha256').update(`${purpose}:${scope}`, 'utf8').digest();

/**
 * Sealed as bytes (a DynamoDB binary): the answer's status and headers as JSON, a newline, then
 * its body as it was sent. A body kept inside the JSON would be escaped again (a `\"` of the
 * body becomes `\\\"`) and base64 would add a third: an answer the size of its body is what lets
 * any response the schemas allow (lib/schemas, `maxBytes`) be kept in a 400 KB item.
 */
function seal(key: Buffer, answer: APIGatewayProxyStructuredResultV2): Uint8Array {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const { body = '', ...head } = answer;
  const sealed = Buffer.concat([cipher.update(`${JSON.stringify(head)}\n${body}`, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** Opens a kept answer; a string is one kept before answers were bytes (base64 of the whole answer as JSON). */
function open(key: Buffer, kept: Uint8Array | string): APIGatewayProxyStructuredResultV2 {
  const raw = typeof kept === 'string' ? Buffer.from(kept, 'base64') : Buffer.from(kept);
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  if (typeof kept === 'string') return JSON.parse(text);
  const newline = text.indexOf('\n');
  return { ...JSON.parse(text.slice(0, newline)), body: text.slice(newline + 1) };
}

type AnyAuth = OperatorAuth | ApiKeyAuth | BuyerAuth | StoreHostAuth | OptionalBuyerAuth | PublicAuth;

/** The caller a key belongs to, from the credential the stack checked before (lib/http/auth.ts). */
function callerOf(event: APIGatewayProxyEventV2): IdempotencyCaller {
  const auth = (event as { auth?: AnyAuth }).auth;
  switch (auth?.kind) {
    case 'operator':
    case 'apiKey':
      return { kind: 'store', storeId: auth.storeId };
    case 'buyer':
    case 'session':
      return { kind: 'buyer', storeId: auth.storeId, customerId: auth.customerId };
    case 'buyerOptional':
      if (auth.customerId !== null) return { kind: 'buyer', storeId: auth.storeId, customerId: auth.customerId };
      return { kind: 'guest', storeId: auth.storeId, email: guestEmailOf(event.body) };
    case 'buyerStore':
    case 'storeHost':
      return { kind: 'guest', storeId: auth.storeId, email: guestEmailOf(event.body) };
    default:
      return { kind: 'public' };
  }
}

async function claimOrAnswer(route: RouteSpec, event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2 | undefined> {
  const key = event.headers?.['idempotency-key'];
  if (key === undefined) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem) throw new HttpError(400, { message: problem, code: 'INVALID_IDEMPOTENCY_KEY', field: 'Idempotency-Key' });
  const caller = callerOf(event);
  const storeId = caller.kind === 'public' ? 0 : caller.storeId;
  const scope = idempotencyScope(caller, { method: route.method, routePath: route.path, pathParameters: event.pathParameters ?? {}, key });
  const now = Math.floor(currentTimeMs() / 1000);
  const claim: ClaimState = {
    pk: idempotencyPk(digest('record', scope).toString('base64url')),
    // Random per request: the SDK's retry of a claim that landed recognises it as ours.
    owner: randomUUID(),
    expiresEpoch: now + IDEMPOTENCY_RETENTION_SECONDS,
    runningUntil: now + IDEMPOTENCY_RUNNING_SECONDS,
    sealKey: digest('answer', scope),
  };
  const fingerprint = bodyFingerprint(event.body);
  const result = await claimIdempotencyKey(claim, { store_id: storeId, fingerprint }, now, claim.runningUntil).catch(async (error: unknown) => {
    // Every attempt failed, and any of them may have landed (its answer lost): the last one's
    // error (a throttle, say) tells nothing of the first. Let our claim go (a delete conditioned
    // on our claim id: a no-op when none landed), so that the retry the 503 invites is not
    // refused as running; if that fails too, say how long the claim may hold the key.
    markSettling();
    const released = await settleUnanswered(claim, now, false).then(
      () => true,
      () => false,
    );
    if (released) throw error;
    throw new HttpError(503, unavailable().details, { 'retry-after': String(IDEMPOTENCY_RUNNING_SECONDS + 1) });
  });
  if (result.claimed) {
    claims.set(event, claim);
    const effects = requestEffects();
    if (effects) Object.assign(effects, { claim, earlierOrderId: result.earlier.orderId, earlierCreatedId: result.earlier.createdId });
    // An earlier holder may have written and lost its answer: unless the route runs again safely
    // (what it created is found, or known never created; a transition already made is answered as is), running it again could do it twice.
    const recorded = result.earlier.orderId !== undefined || result.earlier.createdId !== undefined;
    if (result.earlier.maybeWrote && !recorded && !route.rerunsAfterLostAnswer) {
      throw new HttpError(409, {
        message:
          'A request with this Idempotency-Key was carried out, at least in part, but its answer was lost in a fault; it is not run again. Read the resource to see its result',
        code: 'IDEMPOTENCY_ANSWER_LOST',
      });
    }
    return undefined;
  }
  switch (decideRepeat(result.record, fingerprint)) {
    case 'reused':
      throw new HttpError(422, { message: 'This Idempotency-Key was used with another request body', code: 'IDEMPOTENCY_KEY_REUSED', field: 'Idempotency-Key' });
    case 'running':
      throw new HttpError(409, { message: 'A request with this Idempotency-Key is still running; retry shortly', code: 'IDEMPOTENCY_KEY_IN_USE' }, { 'retry-after': '1' });
    case 'replay': {
      const answer = open(claim.sealKey, result.record.answer!);
      answer.headers = { ...answer.headers, 'idempotent-replayed': 'true' };
      // An early response skips the after hooks, CORS's among them.
      withCorsHeaders(event, answer);
      return answer;
    }
  }
}

/**
 * Keeps the answer, or settles a 5xx (lib/db/idempotency.ts `settleUnanswered`). When DynamoDB
 * fails here, after the handler ran, the failure stays inside: the answer becomes 503 with
 * Retry-After and the envelope, and the record is settled as one without an answer (or, when
 * that fails too, left RUNNING with the order it may have recorded, until its window ends).
 */
async function settle(request: { event: APIGatewayProxyEventV2; response: APIGatewayProxyResultV2 | null | undefined }): Promise<void> {
  const { event } = request;
  const claim = claims.get(event);
  if (!claim) return;
  claims.delete(event);
  const answer = typeof request.response === 'object' && request.response !== null ? request.response : undefined;
  const now = Math.floor(currentTimeMs() / 1000);
  // Without a record of the request's writes, assume it may have written.
  const maybeWrote = requestEffects()?.maybeWrote ?? true;
  markSettling();
  const kept = answer !== undefined && keepsAnswer(answer.statusCode ?? 200);
  let failure: unknown;
  try {
    if (kept) await keepAnswer(claim, seal(claim.sealKey, answer));
    else await settleUnanswered(claim, now, maybeWrote);
    return;
  } catch (error) {
    failure = error;
  }
  // The answer could not be kept: settle as a request without one, so that the retry the 503
  // invites can take the key over at once (and find the order); if DynamoDB fails that too, the
  // key is held until the running window ends, and Retry-After says so.
  let settled = false;
  if (kept)
    settled = await settleUnanswered(claim, now, maybeWrote).then(
      () => true,
      () => false,
    );
  const requestId = event.requestContext?.requestId ?? 'unknown';
  const error = failure instanceof Error ? { name: failure.name, message: failure.message } : { name: 'unknown', message: String(failure) };
  console.error(JSON.stringify({ level: 'error', request_id: requestId, message: 'Idempotency-Key not kept', answered: answer?.statusCode ?? null, settled, error }));
  const retryAfter = settled ? 1 : Math.max(1, claim.runningUntil - now + 1);
  request.response = jsonResponse(503, { errors: unavailable().details, request_id: requestId }, { 'x-request-id': requestId, 'retry-after': String(retryAfter) });
}

/** The request's work is over: its writes on the key may use the time kept for them (lib/db/request-effects.ts `SETTLE_RESERVE_MS`). */
function markSettling(): void {
  const effects = requestEffects();
  if (effects) effects.settling = true;
}

type Middleware = MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2>;

/** The two middlewares for a route that takes the header; undefined for the others. */
export function idempotency(route: RouteSpec): { claim: Middleware; record: Middleware } | undefined {
  if (!takesIdempotencyKey(route)) return undefined;
  return {
    claim: { before: async (request) => claimOrAnswer(route, request.event) },
    record: { after: settle, onError: settle },
  };
}
