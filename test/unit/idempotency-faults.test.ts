import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * The idempotency layer against a real DynamoDB client (the SDK's own retry loop, 3 attempts, as
 * lib/db/client.ts configures it) whose HTTP handler stands in for DynamoDB and injects the faults
 * of issue 28: an attempt that lands but whose answer is lost (the connection reset after
 * DynamoDB applied it), a 500, a throttle. The handler applies the claim's condition as DynamoDB
 * does; test/integration/idempotency-faults.test.ts runs the same against DynamoDB Local.
 */
process.env.TABLE_NAME ??= 'unit-test-table';

type Item = Record<string, unknown>;
const dynamo = vi.hoisted(() => ({
  items: new Map<string, Record<string, unknown>>(),
  attempts: [] as string[],
  /** Per attempt number (1-based, over the whole test): what happens to it. */
  faults: new Map<number, 'lose-answer' | 'fail' | 'throttle'>(),
}));

const reply = (statusCode: number, body: unknown) => ({
  response: { statusCode, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(JSON.stringify(body))]) },
});
const refusal = (type: string, extra: object = {}) => reply(400, { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: type, ...extra });

/**
 * The claim's UpdateItem, applied as DynamoDB would: each branch of its condition that the sent
 * expression holds, then SET, ALL_OLD either way.
 */
function updateItem(input: { Key: Record<string, { S: string }>; ExpressionAttributeValues: Record<string, unknown>; ConditionExpression: string }) {
  const id = `${input.Key.pk!.S}|${input.Key.sk!.S}`;
  const values = unmarshall(input.ExpressionAttributeValues as never) as Record<string, string | number>;
  const branches = input.ConditionExpression.split(' OR ');
  const old = dynamo.items.get(id);
  const running = old?.status === 'RUNNING';
  const allowed =
    !old ||
    (branches.includes('expires_epoch < :now') && (old.expires_epoch as number) < (values[':now'] as number)) ||
    (branches.includes('(#status = :running AND running_until < :now AND fingerprint = :fingerprint)') &&
      running &&
      (old.running_until as number) < (values[':now'] as number) &&
      old.fingerprint === values[':fingerprint']) ||
    (branches.includes('(#status = :running AND #owner = :owner)') && running && old.owner === values[':owner']);
  if (!allowed) return refusal('ConditionalCheckFailedException', { Item: marshall(old) });
  dynamo.items.set(id, {
    ...old,
    pk: input.Key.pk!.S,
    sk: input.Key.sk!.S,
    status: 'RUNNING',
    fingerprint: values[':fingerprint'],
    owner: values[':owner'],
    running_until: values[':runningUntil'],
    expires_epoch: values[':expires'],
    store_id: values[':store'],
  });
  return reply(200, old ? { Attributes: marshall(old) } : {});
}

function putItem(input: { Item: Record<string, unknown>; ConditionExpression?: string }) {
  const item = unmarshall(input.Item as never) as Item;
  const id = `${item.pk}|${item.sk}`;
  if (input.ConditionExpression === 'attribute_not_exists(pk)' && dynamo.items.has(id)) return refusal('ConditionalCheckFailedException');
  dynamo.items.set(id, item);
  return reply(200, {});
}

const fakeDynamoDb = {
  async handle(request: { headers: Record<string, string>; body: string }) {
    const operation = request.headers['x-amz-target']!.split('.')[1]!;
    dynamo.attempts.push(operation);
    const fault = dynamo.faults.get(dynamo.attempts.length);
    if (fault === 'fail') return reply(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'internal' });
    if (fault === 'throttle') return refusal('ProvisionedThroughputExceededException');
    const input = JSON.parse(request.body);
    const answer = operation === 'UpdateItem' ? updateItem(input) : operation === 'PutItem' ? putItem(input) : reply(200, {});
    if (fault === 'lose-answer') throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    return answer;
  },
};

vi.mock('#lib/db/client.ts', async () => {
  const { trackRequestWrites } = await import('#lib/db/request-effects.ts');
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
      maxAttempts: 3,
      retryMode: 'standard',
      requestHandler: fakeDynamoDb as never,
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  trackRequestWrites(db);
  return { db, TABLE: 'unit-test-table' };
});

const { claimIdempotencyKey } = await import('#lib/db/idempotency.ts');
const { requestEffects, withRequestEffects } = await import('#lib/db/request-effects.ts');
const { db } = await import('#lib/db/client.ts');

beforeEach(() => {
  dynamo.items.clear();
  dynamo.attempts = [];
  dynamo.faults.clear();
});

const claimOf = (owner: string) => ({ pk: 'IDEMPOTENCY#k', owner, expiresEpoch: 2_000_000_000 });
const claim = (owner: string, now = 1_900_000_000) => claimIdempotencyKey(claimOf(owner), { store_id: 1, fingerprint: 'f' }, now, now + 30);

describe('the claim, when its answer is lost', () => {
  it('lands, its answer is lost, the SDK sends it again: the retry finds its own claim id and the request goes on as the owner', async () => {
    dynamo.faults.set(1, 'lose-answer');
    const result = await claim('me');
    expect(dynamo.attempts).toEqual(['UpdateItem', 'UpdateItem']);
    expect(result).toEqual({ claimed: true, earlier: { maybeWrote: false } });
    expect(dynamo.items.get('IDEMPOTENCY#k|#IDEMPOTENCY')).toMatchObject({ owner: 'me', status: 'RUNNING' });
  });

  it("another request's live claim is still someone else's: the record is answered (409 upstream), nothing changed", async () => {
    await claim('first');
    dynamo.faults.set(2, 'lose-answer');
    const result = await claim('second');
    expect(result).toMatchObject({ claimed: false, record: { owner: 'first', status: 'RUNNING' } });
  });

  it('taking over a claim that died without settling: its fate is unknown, so it may have written', async () => {
    await claim('died', 1_900_000_000);
    const result = await claim('retry', 1_900_000_100);
    expect(result).toEqual({ claimed: true, earlier: { orderId: undefined, maybeWrote: true } });
  });
});

describe("the request's writes, attempt by attempt", () => {
  const putTag = () =>
    db.send(new PutCommand({ TableName: 'unit-test-table', Item: { pk: 'STORE#1', sk: 'TAG#1', name: 'Sale' }, ConditionExpression: 'attribute_not_exists(pk)' }));

  it('a write that landed with its answer lost, then refused on the retry (its own item exists): may have written', async () => {
    dynamo.faults.set(1, 'lose-answer');
    const effects = await withRequestEffects(async () => {
      await expect(putTag()).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      return requestEffects();
    });
    expect(dynamo.attempts).toEqual(['PutItem', 'PutItem']);
    expect(effects?.maybeWrote).toBe(true);
  });

  it('a write throttled on every attempt: wrote nothing, the key can be released', async () => {
    for (const attempt of [1, 2, 3]) dynamo.faults.set(attempt, 'throttle');
    const effects = await withRequestEffects(async () => {
      await expect(putTag()).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
      return requestEffects();
    });
    expect(dynamo.attempts).toHaveLength(3);
    expect(effects?.maybeWrote).toBe(false);
  });

  it('a 500 on every attempt: DynamoDB may have applied it, so it may have written', async () => {
    for (const attempt of [1, 2, 3]) dynamo.faults.set(attempt, 'fail');
    const effects = await withRequestEffects(async () => {
      await expect(putTag()).rejects.toMatchObject({ name: 'InternalServerError' });
      return requestEffects();
    });
    expect(effects?.maybeWrote).toBe(true);
  });

  it("the key's own record and a transaction that carries it are not counted: the record says whether they landed", async () => {
    const effects = await withRequestEffects(async () => {
      await claim('me');
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: 'unit-test-table', Item: { pk: 'STORE#1', sk: 'ORDER#1' } } },
            {
              Update: {
                TableName: 'unit-test-table',
                Key: { pk: 'IDEMPOTENCY#k', sk: '#IDEMPOTENCY' },
                UpdateExpression: 'SET order_id = :o',
                ExpressionAttributeValues: { ':o': 1 },
              },
            },
          ],
        }),
      );
      return requestEffects();
    });
    expect(effects?.maybeWrote).toBe(false);
    const plain = await withRequestEffects(async () => {
      await putTag();
      return requestEffects();
    });
    expect(plain?.maybeWrote).toBe(true);
  });
});
