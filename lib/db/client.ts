import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { countDynamoDbCall } from '#lib/db/call-count.ts';
import { trackRequestWrites } from '#lib/db/request-effects.ts';
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
 * 2 to 6 calls: 3 attempts per call (the SDK's standard mode: exponential backoff from 100 ms with
 * full jitter, so the two waits add at most about 0.3 s, and throttles draw on a retry quota),
 * 1 s to open a connection and `dynamodbRequestTimeoutMs` (1.5 s on AWS) for each answer. One
 * call that hangs every time costs at most 3 x (1 + 1.5) s + 0.3 s = 7.8 s, 3 x 1.5 s + 0.3 s =
 * 4.8 s once connected: the request still answers 503 with Retry-After within its 10 s instead of
 * being cut off by Lambda's timeout (an answer without the envelope). A retried TransactWriteItems carries the
 * same ClientRequestToken (the SDK fills it once per call), so DynamoDB applies it once; a write
 * whose answer never came back is noted by `trackRequestWrites` so the Idempotency-Key layer
 * never treats it as unwritten.
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
// The initialize step runs once per command, before retries: one call counted per command sent.
db.middlewareStack.add(
  (next) => async (args) => {
    countDynamoDbCall();
    return next(args);
  },
  { step: 'initialize', name: 'requestDynamoDbCallCount' },
);
