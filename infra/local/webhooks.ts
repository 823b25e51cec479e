import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import { routeStreamRecords, type StreamRecord } from '#lib/flows/webhook-router.ts';
import { deliverWebhook } from '#lib/flows/webhook-sender.ts';
import { consumeLocally } from '#lib/queue/local.ts';

/**
 * Webhooks on the local stack, through the code that runs on AWS: this poller reads DynamoDB
 * Local's stream of the table (as Lambda's event source mapping does on AWS) and hands each batch
 * to the same router; the router's in-process queue runs the same sender. Started by
 * infra/local/stack.ts, so `npm start` and the test run deliver webhooks.
 *
 * Shards are read from LATEST when the poller starts (a restart does not replay old changes) and
 * from TRIM_HORIZON when they appear later (DynamoDB rolls shards over; nothing is skipped).
 */
const POLL_MS = 50;
const DESCRIBE_EVERY_MS = 2_000;

export interface WebhookPoller {
  stop(): Promise<void>;
}

export async function startWebhookDelivery(options: { endpoint: string; tableName: string; region: string }): Promise<WebhookPoller> {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const dynamodb = new DynamoDBClient({ endpoint: options.endpoint, region: options.region, credentials });
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: options.region, credentials });
  const table = await dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
  dynamodb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${options.tableName} has no stream: webhooks cannot be delivered`);
  consumeLocally(deliverWebhook);

  const iterators = new Map<string, string | undefined>();
  const known = new Set<string>();
  const describe = async (start: 'LATEST' | 'TRIM_HORIZON') => {
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of StreamDescription?.Shards ?? []) {
      const id = shard.ShardId!;
      if (known.has(id)) continue;
      known.add(id);
      // At start, closed shards hold only the past.
      if (start === 'LATEST' && shard.SequenceNumberRange?.EndingSequenceNumber) continue;
      const { ShardIterator } = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ShardIteratorType: start }));
      iterators.set(id, ShardIterator);
    }
  };
  await describe('LATEST');

  let running = true;
  let lastDescribe = Date.now();
  const loop = (async () => {
    while (running) {
      try {
        if (Date.now() - lastDescribe > DESCRIBE_EVERY_MS) {
          lastDescribe = Date.now();
          await describe('TRIM_HORIZON');
        }
        for (const [shard, iterator] of iterators) {
          if (!iterator) {
            iterators.delete(shard);
            continue;
          }
          const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
          // Moved on only once routed: a batch that failed is read again, like a failed Lambda batch.
          if (page.Records?.length) await routeStreamRecords(page.Records as (_Record & StreamRecord)[]);
          iterators.set(shard, page.NextShardIterator);
        }
      } catch (error) {
        console.error(JSON.stringify({ level: 'error', message: 'local webhook router failed', error: (error as Error).message }));
      }
      await new Promise((done) => setTimeout(done, POLL_MS));
    }
  })();

  return {
    async stop() {
      running = false;
      consumeLocally(undefined);
      await loop;
      streams.destroy();
    },
  };
}
