import type { DynamoDBStreamEvent } from 'aws-lambda';
import { routeStreamRecords, type StreamRecord } from '#lib/flows/webhook-router.ts';

/**
 * The consumer of the table's stream (lib/routes/consumers.ts): a batch of changes becomes webhook events and
 * delivery tasks. An error fails the batch, which Lambda retries (halving it to isolate a bad
 * record) before handing it to the dead-letter queue; the router's writes are idempotent.
 */
export const handler = async (event: DynamoDBStreamEvent): Promise<void> => routeStreamRecords(event.Records as StreamRecord[]);
