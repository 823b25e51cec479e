import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { countDynamoDbCall } from '#lib/db/call-count.ts';
import { boundRequestTime, trackRequestWrites } from '#lib/db/request-effects.ts';
import { config } from '#lib/config.ts';

/** Read at module init so a function without TABLE_NAME fails at cold start. */
export const TABLE = config.tableName;

const localCredentials = config.dynamodbEndpoint
  ? { credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' } }
  : {};

/**
 * One client per process, created at init and reused by every invocation.
 *
 * Retries, chosen for a function that has 10 s (infra/constructs/endpoint-function.ts) and makes
 * 2 to 6 calls: 3 attempts per call, in the SDK's standard mode as this pinned release sets it
 * for DynamoDB (test/unit/dynamodb-retry-budget.test.ts reads it back): full-jitter exponential
 * backoff from 25 ms after a 500 or a dropped connection (the two waits at most 25 + 50 ms) and
 * from 1 s after a throttle (at most 1 + 2 s: a throttled table needs the pause, a faulty
 * connection does not), drawing on a retry quota per process (500 tokens; 14 a retry after an
 * error, 5 after a throttle; given back on success), so a DynamoDB in trouble is not hammered.
 * 1 s to open a connection and `dynamodbRequestTimeoutMs` (1.5 s on AWS) for each answer. One
 * call that hangs every time costs at most 3 x (1 + 1.5) s + 0.075 s = 7.6 s; throttled twice,
 * then hanging, 1 + 2 + 2.5 = 5.5 s. That budget is per call; a request's calls together are
 * bounded by its deadline (`boundRequestTime`: Lambda's remaining time), so it still answers 503
 * with Retry-After within its 10 s instead of being cut off by Lambda's timeout (an answer
 * without the envelope). A retried TransactWriteItems carries the same ClientRequestToken (the
 * SDK fills it once per call), so DynamoDB applies it once; a write whose answer never came back
 * is noted by `trackRequestWrites` so the Idempotency-Key layer never treats it as unwritten.
 */
export const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamodbEndpoint,
    ...localCredentials,
    maxAttempts: 3,
    retryMode: 'standard',
    requestHandler: { connectionTimeout: 1_000, requestTimeout: config.dynamodbRequestTimeoutMs },
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);
trackRequestWrites(db);
boundRequestTime(db);
// The initialize step runs once per command, before retries: one call counted per command sent.
db.middlewareStack.add(
  (next) => async (args) => {
    countDynamoDbCall();
    return next(args);
  },
  { step: 'initialize', name: 'requestDynamoDbCallCount' },
);
