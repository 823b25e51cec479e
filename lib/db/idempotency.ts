import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DamagedItem, fieldsOf, type StoredItem } from '#lib/db/entity.ts';
import type { RawItem } from '#lib/db/errors.ts';
import { requestEffects, type HeldClaim } from '#lib/db/request-effects.ts';
import { IDEMPOTENCY_PK_PREFIX } from '#lib/db/table.ts';
import { remove, update, writeIf, writeReturning, type GuardedWrite } from '#lib/db/transact.ts';
import { HttpError } from '#lib/errors.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Idempotency records of POST requests (extensions section 12).
 *
 * | access pattern                  | key                                                        | calls |
 * |---------------------------------|------------------------------------------------------------|-------|
 * | claim a key, or read its record | UpdateItem `IDEMPOTENCY#<digest> / #IDEMPOTENCY`, conditioned on no live record, a dead claim of the same body, or our own claim; ALL_OLD gives what an earlier holder left, or on failure the record | 1 |
 * | keep the answer (status < 500)  | UpdateItem conditioned on the claim's owner                | 1     |
 * | record the order placed         | one Update inside the order's own TransactWrite (`orderPlacedWrite`) | 0 |
 * | record what a POST created      | one Update inside the creation's own TransactWrite (`createOnce`) | 0 |
 * | settle a 5xx                    | DeleteItem conditioned on the owner and no recorded order, or UpdateItem marking it settled | 1 |
 *
 * `<digest>` is a SHA-256 of the caller, method, path and key, so each key is a partition of its
 * own (no hot partition, whatever a store sends) under a prefix IAM can grant on its own
 * (`dynamodb:LeadingKeys`), and the key itself is never stored. A record is live until
 * `expires_epoch` (24 hours; TTL deletes it later, so the claim's condition checks the time
 * itself); a RUNNING record whose `running_until` has passed belongs to a request that died (or
 * ended without an answer to keep) and may be claimed again by the same body.
 *
 * A request is never run twice once its effect may have landed (issue 28):
 * - `owner` is a random claim id. The SDK retries a claim whose answer was lost; the retry finds
 *   our own claim and succeeds (`#owner = :owner`), instead of reporting it as someone else's.
 * - An order's transaction carries `orderPlacedWrite`: `order_id` lands with the order or not at
 *   all, and only while the claim is ours (a request that outlived its claim cannot place it).
 *   The retry that takes the key over reads it back and answers that order; without `order_id`
 *   it knows no order was placed and may place it.
 * - Every other POST that creates something does the same with `created_id` (`createOnce`): the
 *   id of what it created lands with it, and the retry answers that thing read again.
 * - A 5xx releases the key only when the request wrote nothing (lib/db/request-effects.ts) and no
 *   order or creation is recorded; otherwise the record is marked settled (and `maybe_wrote` when it may have
 *   written) and opened to the retry at once. A holder that never settled (it died, or DynamoDB
 *   failed it then) may have written too. Where the effect is not recorded with the key, such a
 *   retry is answered 409 `IDEMPOTENCY_ANSWER_LOST` rather than run again (lib/http/idempotency.ts).
 * The marks carry the retention of the record that made them (`*_until`): a record claimed again
 * after it expired ignores the marks of its earlier life.
 */
const SK = '#IDEMPOTENCY';
export const idempotencyPk = (digest: string) => `${IDEMPOTENCY_PK_PREFIX}${digest}`;

export interface IdempotencyRecord {
  store_id: number;
  status: 'RUNNING' | 'DONE';
  fingerprint: string;
  owner?: string;
  running_until?: number;
  /** The kept answer, sealed (lib/http/idempotency.ts): only a holder of the key can open it. A string on records kept before answers were bytes. */
  answer?: Uint8Array | string;
  expires_epoch: number;
  /** Set with the order, in its own transaction (`orderPlacedWrite`). */
  order_id?: number;
  order_until?: number;
  /** Set with what another POST created, in its own transaction (`createOnce`). */
  created_id?: number | string;
  created_until?: number;
  /** Set when a holder ended without an answer (`settleUnanswered`), and whether it may have written. */
  settled_until?: number;
  maybe_wrote_until?: number;
}

const IDEMPOTENCY = ENTITY.IDEMPOTENCY;
const RECORD_STATUSES = ['RUNNING', 'DONE'] as const satisfies readonly IdempotencyRecord['status'][];

export function idempotencyFromItem(item: StoredItem): IdempotencyRecord {
  const field = fieldsOf(item, IDEMPOTENCY);
  const answer = item.answer;
  if (!(answer === undefined || typeof answer === 'string' || answer instanceof Uint8Array)) {
    throw new DamagedItem(`${IDEMPOTENCY} item ${String(item.pk)}: answer is neither bytes nor a string`);
  }
  return {
    store_id: field.number('store_id'),
    status: field.oneOf('status', RECORD_STATUSES),
    fingerprint: field.string('fingerprint'),
    owner: field.optionalString('owner'),
    running_until: field.optionalNumber('running_until'),
    answer,
    expires_epoch: field.number('expires_epoch'),
    order_id: field.optionalNumber('order_id'),
    order_until: field.optionalNumber('order_until'),
    created_id: createdIdOf(item),
    created_until: field.optionalNumber('created_until'),
    settled_until: field.optionalNumber('settled_until'),
    maybe_wrote_until: field.optionalNumber('maybe_wrote_until'),
  };
}

/** A created thing's id: a number, or a string for ids that are not (a chat message's). */
function createdIdOf(item: StoredItem): number | string | undefined {
  const id = item.created_id;
  if (id === undefined || typeof id === 'number' || typeof id === 'string') return id;
  throw new DamagedItem(`${IDEMPOTENCY} item ${String(item.pk)}: created_id is neither a number nor a string`);
}

export type Claim = HeldClaim;

const recordKey = (claim: Claim) => ({ pk: claim.pk, sk: SK });

/**
 * The failure of a claim: the live record that holds the key, as DynamoDB sent it back with the
 * failed condition (in AttributeValue form: the document client does not translate it).
 */
class KeyHeld extends Error {
  constructor(readonly held: RawItem | undefined) {
    super('idempotency key held');
  }
}

const isAttributeMap = (item: unknown): item is Record<string, AttributeValue> =>
  typeof item === 'object' && item !== null && Object.values(item).every((value) => typeof value === 'object' && value !== null);

/** What an earlier holder of the key left, when this request took it over. */
export interface EarlierAttempt {
  /** The order it placed (recorded in the order's own transaction). */
  orderId?: number;
  /** What another POST created (recorded in the creation's own transaction). */
  createdId?: number | string;
  /** It may have written: it said so when it settled, or it never settled (it died, or DynamoDB failed it then). */
  maybeWrote: boolean;
}

/** Claims the key for this request (a new key, a dead claim of the same body, or our own claim retried), or answers the live record that holds it. */
export async function claimIdempotencyKey(
  claim: Claim,
  record: { store_id: number; fingerprint: string },
  nowEpoch: number,
  runningUntil: number,
): Promise<{ claimed: true; earlier: EarlierAttempt } | { claimed: false; record: IdempotencyRecord }> {
  let old: IdempotencyRecord | undefined;
  try {
    const previous = await writeReturning(
      {
        item: update({
          Key: recordKey(claim),
          UpdateExpression:
            'SET entity = :entity, store_id = :store, #status = :running, fingerprint = :fingerprint, #owner = :owner, running_until = :runningUntil, expires_epoch = :expires REMOVE answer, settled_until',
          ConditionExpression:
            'attribute_not_exists(pk) OR expires_epoch < :now OR (#status = :running AND running_until < :now AND fingerprint = :fingerprint) OR (#status = :running AND #owner = :owner)',
          ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':entity': IDEMPOTENCY,
            ':store': record.store_id,
            ':running': 'RUNNING',
            ':fingerprint': record.fingerprint,
            ':owner': claim.owner,
            ':runningUntil': runningUntil,
            ':expires': claim.expiresEpoch,
            ':now': nowEpoch,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        onConditionFailed: (held) => new KeyHeld(held),
      },
      'ALL_OLD',
    );
    old = previous ? idempotencyFromItem(previous) : undefined;
  } catch (error) {
    if (!(error instanceof KeyHeld)) throw error;
    if (!isAttributeMap(error.held)) throw new Error(`idempotency claim of ${claim.pk} refused without its record`);
    return { claimed: false, record: idempotencyFromItem(unmarshall(error.held)) };
  }
  // A new key, an expired record (its marks belong to its earlier life), or our own claim that the SDK sent again.
  if (!old || old.expires_epoch < nowEpoch || old.owner === claim.owner) return { claimed: true, earlier: { maybeWrote: false } };
  const live = (until: number | undefined) => (until ?? 0) >= nowEpoch;
  return {
    claimed: true,
    earlier: {
      orderId: live(old.order_until) ? old.order_id : undefined,
      createdId: live(old.created_until) ? old.created_id : undefined,
      maybeWrote: live(old.maybe_wrote_until) || !live(old.settled_until),
    },
  };
}

/** Keeps the first answer for the rest of the retention; a claim taken over meanwhile is left alone. */
export async function keepAnswer(claim: Claim, answer: Uint8Array): Promise<void> {
  await writeIf(
    update({
      Key: recordKey(claim),
      UpdateExpression: 'SET #status = :done, answer = :answer REMOVE running_until',
      ConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
      ExpressionAttributeValues: { ':done': 'DONE', ':answer': answer, ':owner': claim.owner },
    }),
  );
}

/**
 * Settles a request that has no answer to keep (a 5xx). When it wrote nothing and no order is
 * recorded, the key is forgotten: the retry runs as new. Otherwise the record says it settled,
 * and whether it may have written, and its running window is closed, so that the retry takes it
 * over at once and finds the order or the mark. A claim taken over meanwhile is left alone.
 */
export async function settleUnanswered(claim: Claim, nowEpoch: number, maybeWrote: boolean): Promise<void> {
  // A failed delete: an order or a creation recorded by this claim (kept for the retry, below), or someone else's claim (left alone).
  const forgotten =
    !maybeWrote &&
    (await writeIf(
      remove({
        Key: recordKey(claim),
        ConditionExpression: '#owner = :owner AND attribute_not_exists(order_id) AND attribute_not_exists(created_id)',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': claim.owner },
      }),
    ));
  if (forgotten) return;
  await writeIf(
    update({
      Key: recordKey(claim),
      UpdateExpression: `SET running_until = :closed, settled_until = :expires${maybeWrote ? ', maybe_wrote_until = :expires' : ''}`,
      ConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': claim.owner, ':closed': nowEpoch - 1, ':expires': claim.expiresEpoch },
    }),
  );
}

/** The write an order's transaction carries to record, with the order, which order this key placed. */
export const orderPlacedWrite = (claim: Claim, orderId: number): GuardedWrite => recordedOnKeyWrite(claim, 'order', orderId);

/** The write that records on the key, in the effect's own transaction, what the effect was: it lands with it or not at all. */
function recordedOnKeyWrite(claim: Claim, effect: 'order' | 'created', id: number | string): GuardedWrite {
  return {
    item: update({
      Key: recordKey(claim),
      UpdateExpression: `SET ${effect}_id = :id, ${effect}_until = :expires`,
      ConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':id': id, ':expires': claim.expiresEpoch, ':owner': claim.owner },
    }),
    // The claim was taken over (this request outlived its running window): its effect must not land too.
    onConditionFailed: () =>
      new HttpError(409, { message: 'A request with this Idempotency-Key is still running; retry shortly', code: 'IDEMPOTENCY_KEY_IN_USE' }, { 'retry-after': '1' }),
  };
}

/**
 * Creates one thing once per Idempotency-Key (issue 28, like an order: `orderPlacedWrite`). When
 * an earlier attempt of this request's key created it and lost its answer, the thing is read
 * again (`readEarlier`) and answered, and nothing runs twice; otherwise `create` runs, and adds
 * `recordOnKey(id)` to the creation's own transaction (no write without a key, and no extra call:
 * it joins a transaction the creation sends anyway). Call it before any check the creation itself
 * changes (a balance it debits, a limit it fills): the retry answers what was created.
 */
export async function createOnce<T, Id extends number | string>(readEarlier: (id: Id) => Promise<T>, create: (recordOnKey: (id: Id) => GuardedWrite[]) => Promise<T>): Promise<T> {
  const effects = requestEffects();
  // The record is scoped to the route and its path: an id recorded there is of the kind this route creates.
  if (effects?.earlierCreatedId !== undefined) return readEarlier(effects.earlierCreatedId as Id);
  const claim = effects?.claim;
  return create((id) => (claim ? [recordedOnKeyWrite(claim, 'created', id)] : []));
}
