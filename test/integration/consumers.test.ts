import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { queueConsumer, streamConsumer } from '#infra/local/webhooks.ts';
import { db, TABLE } from '#lib/db/client.ts';
import { orderKey } from '#lib/db/order.ts';
import { consumeLocally } from '#lib/queue/local.ts';
import type { DeliveryMessage } from '#lib/queue/queue.ts';
import { consumers } from '#lib/routes/consumers.ts';
import { createOrder } from '../support/builders.ts';
import { newStore } from '../support/client.ts';

/**
 * The local stack runs the real functions/webhook-router.ts and functions/webhook-sender.ts
 * (infra/local/webhooks.ts) held to their entries' table access, as IAM holds their Lambdas:
 * here, in this process, the same wiring the stack uses, once under each entry's grant and once
 * under a grant narrowed to `read`, which must be refused at the first write.
 */
const REGION = 'us-east-1';
const STREAM_ARN = 'arn:aws:dynamodb:local:000000000000:table/test/stream/consumers';
const queued: DeliveryMessage[] = [];
consumeLocally(async (message) => void queued.push(message));
afterAll(() => consumeLocally(undefined));

/** The stream record of an order's creation, as DynamoDB Local's stream carries it. */
async function orderCreatedRecord(storeId: number, orderId: number, eventId: string): Promise<_Record> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE, Key: orderKey(storeId, orderId) }));
  return { eventID: eventId, eventName: 'INSERT', dynamodb: { NewImage: marshall(Item!, { removeUndefinedValues: true }) as never } };
}

const until = async <T>(probe: () => T | undefined): Promise<T> => {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 10));
  }
  throw new Error('nothing was queued');
};

describe('stream and queue consumers on the local stack', () => {
  it("run the real router and sender under their entries' table access, and are refused a write a narrower grant lacks", async () => {
    const store = await newStore();
    const hook = await store.post('/v1/app/webhook', { url: 'http://127.0.0.1:9/consumers-test', events: ['order.created'] });
    expect(hook.status, hook.text).toBe(200);
    const order = await createOrder(store);
    const record = await orderCreatedRecord(store.storeId, order.id, `consumers-test-${store.storeId}`);

    const readOnlyRouter = await streamConsumer('webhook-router', { ...consumers['webhook-router'], access: 'read' }, STREAM_ARN, REGION);
    await expect(readOnlyRouter([record])).rejects.toThrow(/Not authorized to perform dynamodb:PutItem \(route access: read\)/);

    const router = await streamConsumer('webhook-router', consumers['webhook-router'], STREAM_ARN, REGION);
    await router([record]);
    const message = await until(() => queued.find((candidate) => candidate.store_id === store.storeId && candidate.webhook_id === hook.body.id));
    expect(message.attempt).toBe(1);

    const readOnlySender = await queueConsumer('webhook-sender', { ...consumers['webhook-sender'], access: 'read' }, REGION);
    await expect(readOnlySender(message)).rejects.toThrow(/reported its message as failed/);

    const sender = await queueConsumer('webhook-sender', consumers['webhook-sender'], REGION);
    await sender(message);
    const deliveries = await store.get(`/v1/app/webhook/${hook.body.id}/delivery`);
    expect(deliveries.status, deliveries.text).toBe(200);
    // Nothing listens on port 9: the attempt is logged as a connection error.
    expect(deliveries.body.data.filter((attempt: { event_id: string }) => attempt.event_id === message.event_id)).toEqual([
      expect.objectContaining({ event_id: message.event_id, type: 'order.created', status_code: null }),
    ]);
  });
});
