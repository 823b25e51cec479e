import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { db, TABLE } from '#lib/db/client.ts';
import { defineHandler } from '#lib/http/handler.ts';

/**
 * A DynamoDB size refusal that still reaches the handler stack (the schemas' byte bounds should
 * prevent it) is the request's size, answered 413 TOO_LARGE in the envelope, never a 500: each
 * refusal is real, sent to the DynamoDB Local of the run, and nothing of the refused write is stored.
 */
const route = { method: 'POST', path: '/v1/app/oversized', api: 'api', credential: 'public', access: 'write', summary: 's', tag: 't' } as const;
const event = () =>
  ({
    version: '2.0',
    routeKey: 'POST /v1/app/oversized',
    rawPath: '/v1/app/oversized',
    rawQueryString: '',
    isBase64Encoded: false,
    headers: {},
    requestContext: { requestId: `size-${Math.random()}`, http: { method: 'POST', path: '/v1/app/oversized' } },
  }) as unknown as APIGatewayProxyEventV2;

let run = 0;
const pk = () => `SIZE_REFUSAL#${process.pid}#${++run}`;
const big = (bytes: number) => 'x'.repeat(bytes);

async function answerOf(write: () => Promise<unknown>) {
  const handler = defineHandler(route, async () => {
    await write();
    return { written: true };
  });
  return (await handler(event(), {} as Context)) as APIGatewayProxyStructuredResultV2;
}

function expectTooLarge(response: APIGatewayProxyStructuredResultV2) {
  expect(response.statusCode).toBe(413);
  const body = JSON.parse(response.body as string);
  expect(body).toEqual({ errors: [{ message: expect.stringContaining('400 KB'), code: 'TOO_LARGE' }] });
  expect(response.body).not.toMatch(/ValidationException|Transaction|exceeded|at .*:\d+/);
}

const stored = async (key: { pk: string; sk: string }) => (await db.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item;

describe('DynamoDB size refusals answer 413 in the envelope', () => {
  beforeEach(() => {
    // The refusal is logged (a bound the schemas missed); keep the test output clean.
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  it('an item over 400 KB (PutItem)', async () => {
    const key = { pk: pk(), sk: 'ITEM' };
    expectTooLarge(await answerOf(() => db.send(new PutCommand({ TableName: TABLE, Item: { ...key, text: big(410 * 1024) } }))));
    expect(await stored(key)).toBeUndefined();
  });

  it('an update that would grow an item over 400 KB (UpdateItem)', async () => {
    const key = { pk: pk(), sk: 'ITEM' };
    await db.send(new PutCommand({ TableName: TABLE, Item: { ...key, text: big(300 * 1024) } }));
    const response = await answerOf(() =>
      db.send(new UpdateCommand({ TableName: TABLE, Key: key, UpdateExpression: 'SET more = :more', ExpressionAttributeValues: { ':more': big(200 * 1024) } })),
    );
    expectTooLarge(response);
    expect((await stored(key))?.more).toBeUndefined();
  });

  it('a transaction over 4 MB', async () => {
    const partition = pk();
    const items = Array.from({ length: 12 }, (_, index) => ({ Put: { TableName: TABLE, Item: { pk: partition, sk: `ITEM#${index}`, text: big(380 * 1024) } } }));
    expectTooLarge(await answerOf(() => db.send(new TransactWriteCommand({ TransactItems: items }))));
    expect(await stored({ pk: partition, sk: 'ITEM#0' })).toBeUndefined();
  });

  it('one item over 400 KB inside a transaction', async () => {
    const partition = pk();
    const items = [
      { Put: { TableName: TABLE, Item: { pk: partition, sk: 'SMALL', text: 'x' } } },
      { Put: { TableName: TABLE, Item: { pk: partition, sk: 'BIG', text: big(410 * 1024) } } },
    ];
    expectTooLarge(await answerOf(() => db.send(new TransactWriteCommand({ TransactItems: items }))));
    expect(await stored({ pk: partition, sk: 'SMALL' })).toBeUndefined();
  });

  it('a key longer than DynamoDB allows (partition key over 2048 bytes, sort key over 1024, an index key)', async () => {
    expectTooLarge(await answerOf(() => db.send(new PutCommand({ TableName: TABLE, Item: { pk: big(3000), sk: 'ITEM' } }))));
    expectTooLarge(await answerOf(() => db.send(new PutCommand({ TableName: TABLE, Item: { pk: pk(), sk: big(2000) } }))));
    expectTooLarge(await answerOf(() => db.send(new PutCommand({ TableName: TABLE, Item: { pk: pk(), sk: 'ITEM', gsi1pk: 'x', gsi1sk: big(2000) } }))));
    expectTooLarge(await answerOf(() => db.send(new GetCommand({ TableName: TABLE, Key: { pk: big(3000), sk: 'ITEM' } }))));
  });
});
