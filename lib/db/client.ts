import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { countDynamoDbCall } from '#lib/db/call-count.ts';
import { config } from '#lib/config.ts';

/** Read at module init so a function without TABLE_NAME fails at cold start. */
export const TABLE = config.tableName;

const localCredentials = config.dynamodbEndpoint
  ? { credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' } }
  : {};

/** One client per process, created at init and reused by every invocation. */
export const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: config.region, endpoint: config.dynamodbEndpoint, ...localCredentials }),
  { marshallOptions: { removeUndefinedValues: true } },
);
// The initialize step runs once per command, before retries: one call counted per command sent.
db.middlewareStack.add(
  (next) => async (args) => {
    countDynamoDbCall();
    return next(args);
  },
  { step: 'initialize', name: 'requestDynamoDbCallCount' },
);
