import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { boundRequestTime, RequestDeadlineExceeded, requestEffects, SETTLE_RESERVE_MS, trackRequestWrites, withRequestEffects } from '#lib/db/request-effects.ts';

process.env.TABLE_NAME ??= 'unit-test-table';
const { toHttpError } = await import('#lib/http/handler.ts');

/**
 * A request's DynamoDB time ends at its deadline (issue 28: the SDK's retry budget is per call,
 * and a request makes several): a real client with the SDK's retry loop (3 attempts, as
 * lib/db/client.ts) whose HTTP handler stands in for DynamoDB, answering, hanging or throttling.
 */
type Behaviour = 'answer' | 'hang' | 'throttle';
let behaviours: Behaviour[] = [];
let attempts = 0;

const reply = (statusCode: number, body: unknown) => ({
  response: { statusCode, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(JSON.stringify(body))]) },
});
const fakeDynamoDb = {
  handle: () => {
    const behaviour = behaviours[attempts] ?? 'answer';
    attempts += 1;
    if (behaviour === 'hang') return new Promise(() => {});
    if (behaviour === 'throttle') return Promise.resolve(reply(400, { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'throttled' }));
    return Promise.resolve(reply(200, {}));
  },
};

const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
    maxAttempts: 3,
    retryMode: 'standard',
    requestHandler: fakeDynamoDb as never,
  }),
);
trackRequestWrites(db);
boundRequestTime(db);

const put = () => db.send(new PutCommand({ TableName: 't', Item: { pk: 'STORE#1', sk: 'TAG#1' } }));
const get = () => db.send(new GetCommand({ TableName: 't', Key: { pk: 'STORE#1', sk: 'TAG#1' } }));
const claim = { pk: 'IDEMPOTENCY#k', owner: 'me', expiresEpoch: 2_000_000_000 };

// The client's first call loads and resolves what it needs (a tenth of a second or more on a loaded
// machine): paid here, so that a test's deadline a few hundred ms ahead falls after its first attempt.
beforeAll(async () => {
  await get();
});
beforeEach(() => {
  behaviours = [];
  attempts = 0;
});
afterEach(() => vi.restoreAllMocks());

describe('a request ends its DynamoDB time at its deadline', () => {
  it('an attempt still running at the deadline is cut: the call fails, is not retried, and counts as a write that may have landed', async () => {
    behaviours = ['hang'];
    const outcome = await withRequestEffects(async () => {
      const error = await put().catch((failure: unknown) => failure);
      return { error, maybeWrote: requestEffects()!.maybeWrote };
    }, Date.now() + 500);
    expect(outcome.error).toBeInstanceOf(RequestDeadlineExceeded);
    expect(outcome.maybeWrote).toBe(true);
    expect(attempts).toBe(1);
  });

  it('past the deadline no attempt is sent, and nothing was written', async () => {
    const outcome = await withRequestEffects(async () => {
      const error = await put().catch((failure: unknown) => failure);
      return { error, maybeWrote: requestEffects()!.maybeWrote };
    }, Date.now() - 1);
    expect(outcome.error).toBeInstanceOf(RequestDeadlineExceeded);
    expect(outcome.maybeWrote).toBe(false);
    expect(attempts).toBe(0);
  });

  it("the SDK's wait after a throttle (up to 1 s) ending past the deadline: the retry is not sent", async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    behaviours = ['throttle', 'answer'];
    const error = await withRequestEffects(() => get().catch((failure: unknown) => failure), Date.now() + 500);
    expect(error).toBeInstanceOf(RequestDeadlineExceeded);
    expect(attempts).toBe(1);
  });

  it('a request holding a key ends its work the settle reserve early, and keeps that time for the key', async () => {
    const outcome = await withRequestEffects(
      async () => {
        const effects = requestEffects()!;
        effects.claim = claim;
        const work = await get().catch((failure: unknown) => failure);
        const sentForWork = attempts;
        effects.settling = true;
        await put();
        return { work, sentForWork };
      },
      Date.now() + SETTLE_RESERVE_MS - 1_000,
    );
    expect(outcome.work).toBeInstanceOf(RequestDeadlineExceeded);
    expect(outcome.sentForWork).toBe(0);
    expect(attempts).toBe(1);
  });

  it('without a deadline (no runtime time given) calls run as the SDK alone decides', async () => {
    await withRequestEffects(() => put());
    await put();
    expect(attempts).toBe(2);
  });

  it('is answered 503 in the envelope, like any DynamoDB outage', () => {
    const answer = toHttpError(new RequestDeadlineExceeded(true));
    expect(answer?.status).toBe(503);
    expect(answer?.details[0]?.code).toBe('UNAVAILABLE');
  });
});
