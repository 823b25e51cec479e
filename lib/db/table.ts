import { ENTITY } from '#lib/schemas/entity.ts';
/**
 * The single table. One definition shared by the CDK data stack and the local stack, so the two
 * can never disagree about key names, indexes or the TTL attribute.
 *
 * Every item has `pk`/`sk` and `store_id` (except the global store sequence and the
 * domain/credential lookup items, which carry the store_id they point to).
 * GSI1 and GSI2 are overloaded: each entity module documents what it writes there. GSI3 holds
 * only orders, by buyer, and their internal_id sentinels, by client_identifier (lib/db/order.ts).
 */
export const tableKeys = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes the item some time after (days on AWS), so reads check expiry too. */
  ttlAttribute: 'expires_epoch',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  ],
} as const;

export type IndexName = (typeof tableKeys.indexes)[number]['name'];

/**
 * The DynamoDB actions a function may use, by its route's `access`: exactly what lib/db sends
 * (no Scan, no BatchWriteItem). IAM checks a TransactWriteItems item by item, as PutItem,
 * UpdateItem, DeleteItem or ConditionCheckItem. The CDK stacks grant these; the local stack
 * refuses anything else, as IAM would on AWS. `put` is the reads and PutItem alone: a consumer
 * that only files new items of its own (the webhook router's events and tasks, each a Put if
 * absent) and never updates, deletes or transacts.
 */
const TABLE_READ_ACTIONS = ['GetItem', 'BatchGetItem', 'Query'] as const;
export const tableActions = {
  none: [],
  read: TABLE_READ_ACTIONS,
  put: [...TABLE_READ_ACTIONS, 'PutItem'],
  write: [...TABLE_READ_ACTIONS, 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
} as const satisfies Record<string, readonly string[]>;

export type TableAccess = keyof typeof tableActions;

/**
 * The idempotency records of POST requests (lib/db/idempotency.ts) live in partitions of their own,
 * `IDEMPOTENCY#...`, so that a POST route whose `access` is `read` (a quote, a presigned upload)
 * may be granted exactly these writes on exactly these partitions (IAM `dynamodb:LeadingKeys`),
 * never a write to the store's data.
 */
export const IDEMPOTENCY_PK_PREFIX = `${ENTITY.IDEMPOTENCY}#`;
export const idempotencyTableActions = ['PutItem', 'UpdateItem', 'DeleteItem'] as const;

/**
 * The counters of page-mode lists (lib/db/list-count.ts) live in partitions of their own,
 * `COUNT#<store>`, so that a list route (access `read`) may be granted the one write it can make,
 * the first count of a list whose items are older than its counter, on exactly these partitions.
 */
export const LIST_COUNT_PK_PREFIX = 'COUNT#';
/** The update of the count, and (a sharded list) the ConditionCheck of each shard in the same transaction. */
export const listCountTableActions = ['UpdateItem', 'ConditionCheckItem'] as const;

/**
 * The one write a request may make on its credential whatever its route's access: its "last used"
 * mark (lib/db/credential.ts `noteCredentialUse`), an UpdateItem on the `CRED#` partitions that
 * sets this attribute and no other (IAM `dynamodb:Attributes`).
 */
export const CREDENTIAL_PK_PREFIX = 'CRED#';
export const CREDENTIAL_USE_ATTRIBUTE = 'last_used_at';
export const credentialUseTableActions = ['UpdateItem'] as const;

/**
 * The stream webhooks are derived from (lib/flows/webhook-router.ts): both images, so that a rule
 * sees what changed (a status moving) and `data` is the resource as the change left it.
 */
export const tableStream = { viewType: 'NEW_AND_OLD_IMAGES' } as const;

/** CreateTable input for DynamoDB Local (the CDK stack builds the same shape with its own construct). */
export function createTableInput(tableName: string) {
  const attributes = [tableKeys.partitionKey, tableKeys.sortKey, ...tableKeys.indexes.flatMap((i) => [i.partitionKey, i.sortKey])];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    StreamSpecification: { StreamEnabled: true, StreamViewType: tableStream.viewType },
    AttributeDefinitions: attributes.map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: tableKeys.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: tableKeys.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: tableKeys.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
