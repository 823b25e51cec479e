import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';

/**
 * The request log line (lib/http/request-log.ts) as the stack's functions write it: one JSON line
 * per request, with its outcome and its EMF metrics, and nothing the caller sent.
 */
process.env.TABLE_NAME ??= 'unit-test-table';
process.env.METRICS_NAMESPACE = 'StoreApi/unit';
process.env.FUNCTION_GROUP = 'auth';
const { defineHandler } = await import('#lib/http/handler.ts');
const { requestLogLine } = await import('#lib/http/request-log.ts');
const { countDynamoDbCall } = await import('#lib/db/call-count.ts');
const v = await import('valibot');

const SECRET_TOKEN = 'sat_0123456789abcdefSECRET';
const BODY_CODE = '482913';
const QUERY_CODE = '775031';
const BODY_EMAIL = 'buyer-private@example.com';

const route = {
  method: 'POST',
  path: '/v1/x/{id}',
  api: 'api',
  credential: 'public',
  access: 'read',
  summary: 's',
  tag: 't',
  // The query is one the route takes (an unknown one is refused before the handler runs).
  query: v.object({ code: v.optional(v.string()) }),
  body: v.object({ email: v.string(), code: v.string() }),
} as const;

const event = {
  version: '2.0',
  routeKey: 'POST /v1/x/{id}',
  rawPath: '/v1/x/1',
  rawQueryString: `code=${QUERY_CODE}`,
  queryStringParameters: { code: QUERY_CODE },
  headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET_TOKEN}`, cookie: `store_session=${SECRET_TOKEN}` },
  pathParameters: { id: '1' },
  body: JSON.stringify({ email: BODY_EMAIL, code: BODY_CODE }),
  requestContext: { requestId: 'req-log-1', http: { method: 'POST', path: '/v1/x/1' } },
  isBase64Encoded: false,
} as unknown as APIGatewayProxyEventV2;
const context = { awsRequestId: 'aws-1' } as Context;

let written: string[];
let stdout: MockInstance;
beforeEach(() => {
  written = [];
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => vi.restoreAllMocks());

const invoke = async (handler: (e: APIGatewayProxyEventV2, c: Context) => Promise<unknown>) => {
  const response = (await handler(structuredClone(event), context)) as APIGatewayProxyStructuredResultV2;
  stdout.mockRestore();
  expect(written).toHaveLength(1);
  expect(written[0]!.endsWith('\n')).toBe(true);
  expect(written[0]!.trim()).not.toContain('\n');
  return { response, line: written[0]!, entry: JSON.parse(written[0]!) };
};

describe('the request log line', () => {
  it('says who answered what, how fast and with how many DynamoDB calls, in one JSON line', async () => {
    const { response, entry } = await invoke(defineHandler(route, async () => ({ ok: true })));
    expect(response.statusCode).toBe(200);
    expect(entry).toMatchObject({
      level: 'INFO',
      request_id: 'req-log-1',
      route: 'POST /v1/x/{id}',
      status: 200,
      status_class: '2xx',
      function_group: 'auth',
      dynamodb_calls: 0,
      requests: 1,
    });
    expect(entry.latency_ms).toBeGreaterThanOrEqual(0);
    // A public route names no store.
    expect(entry).not.toHaveProperty('store_id');
  });

  it('never carries the Authorization header, the cookie, the body or the query string', async () => {
    const { line } = await invoke(defineHandler(route, async () => ({ ok: true })));
    for (const sent of [SECRET_TOKEN, BODY_CODE, QUERY_CODE, BODY_EMAIL, 'code=']) expect(line).not.toContain(sent);
  });

  it('is EMF: the metrics and their dimensions are top-level members CloudWatch can read', async () => {
    const { entry } = await invoke(defineHandler(route, async () => ({ ok: true })));
    const directives = entry._aws.CloudWatchMetrics as { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
    expect(entry._aws.Timestamp).toBeTypeOf('number');
    for (const directive of directives) {
      expect(directive.Namespace).toBe('StoreApi/unit');
      for (const dimension of directive.Dimensions.flat()) expect(entry[dimension], dimension).toBeTypeOf('string');
      for (const metric of directive.Metrics) expect(entry[metric.Name], metric.Name).toBeTypeOf('number');
    }
    expect(directives.flatMap((directive) => directive.Dimensions)).toContainEqual(['route', 'status_class']);
  });

  it('counts the DynamoDB calls of this request only', async () => {
    const handler = defineHandler(route, async () => {
      // What the middleware on the one DynamoDB client (lib/db/client.ts) does for each command.
      countDynamoDbCall();
      countDynamoDbCall();
      return { ok: true };
    });
    expect((await invoke(handler)).entry.dynamodb_calls).toBe(2);
  });

  it('names the store once the credential has named it', () => {
    const outcome = { requestId: 'r', route: 'GET /v1/app/tag', storeId: 42, status: 404, latencyMs: 3, dynamodbCalls: 1 };
    expect(JSON.parse(requestLogLine(outcome, { namespace: 'n', functionGroup: 'catalog' }, 0))).toMatchObject({ store_id: 42, status_class: '4xx' });
  });

  it('logs a failure with its status class', async () => {
    const { response, entry } = await invoke(
      defineHandler(route, async () => {
        throw new Error('boom');
      }),
    );
    expect(response.statusCode).toBe(500);
    expect(entry).toMatchObject({ status: 500, status_class: '5xx', request_id: 'req-log-1' });
  });
});
