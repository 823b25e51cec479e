import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { db, TABLE } from '#lib/db/client.ts';
import { isConditionalFailure } from '#lib/db/errors.ts';
import { IDEMPOTENCY_PK_PREFIX } from '#lib/db/table.ts';
import { ENTITY } from '#lib/schemas/entity.ts';

/**
 * Idempotency records of POST requests (extensions section 12).
 *
 * | access pattern                  | key                                                        | calls |
 * |---------------------------------|------------------------------------------------------------|-------|
 * | claim a key, or read its record | PutItem `IDEMPOTENCY#<digest> / #IDEMPOTENCY`, conditioned on no live record; on failure ALL_OLD gives the record | 1 |
 * | keep the answer (status < 500)  | UpdateItem conditioned on the claim's owner                | 1     |
 * | release the claim (5xx)         | DeleteItem conditioned on the claim's owner                | 1     |
 *
 * `<digest>` is a SHA-256 of the store, method, path and key, so each key is a partition of its
 * own (no hot partition, whatever a store sends) under a prefix IAM can grant on its own
 * (`dynamodb:LeadingKeys`), and the key itself is never stored. A record is live until
 * `expires_epoch` (24 hours; TTL deletes it later, so the claim's condition checks the time
 * itself); a RUNNING record whose `running_until` has passed belongs to a request that died and
 * may be claimed again.
 */
const SK = '#IDEMPOTENCY';
export const idempotencyPk = (digest: string) => `${IDEMPOTENCY_PK_PREFIX}${digest}`;

export interface IdempotencyRecord {
  store_id: number;
  status: 'RUNNING' | 'DONE';
  fingerprint: string;
  /** The kept answer, sealed (lib/http/idempotency.ts): only a holder of the key can open it. A string on records kept before answers were bytes. */
  answer?: Uint8Array | string;
}

export interface Claim {
  pk: string;
  owner: string;
}

/** Claims the key for this request, or answers the live record that holds it. */
export async function claimIdempotencyKey(
  claim: Claim,
  record: { store_id: number; fingerprint: string },
  nowEpoch: number,
  runningUntil: number,
  expiresEpoch: number,
): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }> {
  try {
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: {
          pk: claim.pk, sk: SK, entity: ENTITY.IDEMPOTENCY, store_id: record.store_id, status: 'RUNNING', fingerprint: record.fingerprint,
          owner: claim.owner, running_until: runningUntil, expires_epoch: expiresEpoch,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_epoch < :now OR (#status = :running AND running_until < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':now': nowEpoch, ':running': 'RUNNING' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: true };
  } catch (error) {
    // The document client does not translate the item an error carries: it is in AttributeValue form.
    const old = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
    if (isConditionalFailure(error) && old) return { claimed: false, record: unmarshall(old) as IdempotencyRecord };
    throw error;
  }
}

/** Keeps the first answer for the rest of the retention; a claim taken over meanwhile is left alone. */
export async function keepAnswer(claim: Claim, answer: Uint8Array): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { pk: claim.pk, sk: SK },
        UpdateExpression: 'SET #status = :done, answer = :answer REMOVE running_until',
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
        ExpressionAttributeValues: { ':done': 'DONE', ':answer': answer, ':owner': claim.owner },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}

/** Forgets the claim (the answer was a 5xx): the next request with this key runs again. */
export async function releaseClaim(claim: Claim): Promise<void> {
  try {
    await db.send(
      new DeleteCommand({
        TableName: TABLE,
        Key: { pk: claim.pk, sk: SK },
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': claim.owner },
      }),
    );
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
  }
}
