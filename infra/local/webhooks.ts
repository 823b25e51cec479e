import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { importBackgroundHandler, routeAccess } from '#infra/local/route-access.ts';
import { consumeLocally } from '#lib/queue/local.ts';
import type { DeliveryMessage } from '#lib/queue/queue.ts';
import { consumerEntries, isStreamSource, type ConsumerSpec, type QueueName } from '#lib/routes/consumers.ts';

/**
 * The consumers of lib/routes/consumers.ts on the local stack (today: webhook delivery), through
 * the handlers that run on AWS: this poller reads DynamoDB Local's stream of the table (as
 * Lambda's event source mapping does on AWS) and hands each stream consumer the records its
 * entity filter passes, as a stream event; the in-process queue (lib/queue/local.ts) hands each
 * message to its queue's consumer as an SQS event. Every handler runs held to its entry's table
 * access, as IAM holds its Lambda. Started by infra/local/stack.ts, so `npm start` and the test
 * run deliver webhooks.
 *
 * Shards are read from LATEST when the poller starts (a restart does not replay old changes) and
 * from TRIM_HORIZON when they appear later (DynamoDB rolls shards over; nothing is skipped).
 */
const POLL_MS = 50;
const DESCRIBE_EVERY_MS = 2_000;

export interface ConsumerPoller {
  stop(): Promise<void>;
}

/** What the AWS filter criteria (infra/stacks/webhook-stack.ts `streamEntityFilter`) pass: a new image whose string `entity` is listed. */
export function passesEntityFilter(record: _Record, entities: readonly string[]): boolean {
  const entity = record.dynamodb?.NewImage?.entity?.S;
  return entity !== undefined && entities.includes(entity);
}

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<void>;
type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

const asGrant = (spec: ConsumerSpec) => ({ access: spec.access });

/** One message as SQS hands it to a Lambda (a batch of one: the local queue times each message alone). */
function sqsEventOf(queue: QueueName, message: DeliveryMessage, region: string): SQSEvent {
  const now = String(Date.now());
  return {
    Records: [
      {
        messageId: randomUUID(),
        receiptHandle: 'local',
        body: JSON.stringify(message),
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'local', ApproximateFirstReceiveTimestamp: now },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${region}:000000000000:${queue}`,
        awsRegion: region,
      },
    ],
  };
}

/** A stream consumer on the local stack: the records its entity filter passes, as one stream event to its handler, under its entry's table access. */
export async function streamConsumer(name: string, spec: ConsumerSpec, streamArn: string, region: string): Promise<(records: _Record[]) => Promise<void>> {
  if (!isStreamSource(spec.source)) throw new Error(`${name} does not read the table's stream`);
  const { entities } = spec.source;
  const handler = await importBackgroundHandler<StreamHandler>(name);
  return async (records) => {
    const passed = records.filter((record) => passesEntityFilter(record, entities));
    if (passed.length === 0) return;
    const event = { Records: passed.map((record) => ({ ...record, eventSource: 'aws:dynamodb', eventSourceARN: streamArn, awsRegion: region })) };
    await routeAccess.run(asGrant(spec), () => handler(event as unknown as DynamoDBStreamEvent));
  };
}

/** A queue consumer on the local stack: one message, as an SQS event to its handler, under its entry's table access; a message it reports failed throws. */
export async function queueConsumer(name: string, spec: ConsumerSpec, region: string): Promise<(message: DeliveryMessage) => Promise<void>> {
  if (isStreamSource(spec.source)) throw new Error(`${name} does not read a queue`);
  const { queue } = spec.source;
  const handler = await importBackgroundHandler<QueueHandler>(name);
  return async (message) => {
    const { batchItemFailures } = await routeAccess.run(asGrant(spec), () => handler(sqsEventOf(queue, message, region)));
    // On AWS the message would be received again, then land in the dead-letter queue; here the handler's own log line is the trace.
    if (batchItemFailures.length > 0) throw new Error(`${name} reported its message as failed`);
  };
}

export async function startConsumers(options: { endpoint: string; tableName: string; region: string }): Promise<ConsumerPoller> {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const dynamodb = new DynamoDBClient({ endpoint: options.endpoint, region: options.region, credentials });
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: options.region, credentials });
  const table = await dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
  dynamodb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${options.tableName} has no stream: webhooks cannot be delivered`);

  const streamConsumers = await Promise.all(
    consumerEntries()
      .filter(([, spec]) => isStreamSource(spec.source))
      .map(([name, spec]) => streamConsumer(name, spec, streamArn, options.region)),
  );
  const queueReaders = consumerEntries().filter(([, spec]) => !isStreamSource(spec.source));
  // lib/queue/local.ts holds one consumer: a second queue needs its own local transport, not a silent replacement.
  if (queueReaders.length > 1) throw new Error(`the local queue carries one queue; consumers ${queueReaders.map(([name]) => name).join(', ')} read queues`);
  // The router's grant would otherwise follow a message through its timer: the queue's consumer runs under its own.
  for (const [name, spec] of queueReaders) consumeLocally(await queueConsumer(name, spec, options.region));
  const deliver = async (records: _Record[]) => {
    for (const consume of streamConsumers) await consume(records);
  };

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
          // Moved on only once consumed: a batch that failed is read again, like a failed Lambda batch.
          if (page.Records?.length) await deliver(page.Records);
          iterators.set(shard, page.NextShardIterator);
        }
      } catch (error) {
        console.error(JSON.stringify({ level: 'error', message: 'local stream consumer failed', error: (error as Error).message }));
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
