import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * The handler stack on its own, with public routes (no table access): the error envelope,
 * the 500 that hides internals, the 503 for an unavailable dependency.
 */
process.env.TABLE_NAME ??= 'unit-test-table';
const { defineHandler } = await import('#lib/http/handler.ts');
const { HttpError } = await import('#lib/errors.ts');
const { requestEffects } = await import('#lib/db/request-effects.ts');
const v = await import('valibot');

const event = (overrides: Partial<APIGatewayProxyEventV2> = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'POST /v1/x',
    rawPath: '/v1/x',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: { requestId: 'req-123', http: { method: 'POST', path: '/v1/x' } },
    isBase64Encoded: false,
    ...overrides,
  }) as APIGatewayProxyEventV2;

const context = { awsRequestId: 'aws-1' } as Context;
const route = { method: 'POST', path: '/v1/x', api: 'api', credential: 'public', access: 'read', summary: 's', tag: 't' } as const;
const invoke = async (handler: (e: APIGatewayProxyEventV2, c: Context) => Promise<unknown>, e = event()) => (await handler(e, context)) as APIGatewayProxyStructuredResultV2;

describe('error middleware', () => {
  let logged: string[] = [];
  beforeAll(() => {
    vi.spyOn(console, 'error').mockImplementation((line: string) => void logged.push(line));
  });
  afterEach(() => {
    logged = [];
  });

  it('answers an unexpected error with 500, the request id and nothing internal, and logs it as JSON', async () => {
    const handler = defineHandler(route, async () => {
      throw new Error('connection string postgres://secret@db');
    });
    const res = await invoke(handler);
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body!)).toEqual({ errors: [{ message: 'Internal server error', code: 'INTERNAL_ERROR' }], request_id: 'req-123' });
    expect(res.body).not.toContain('secret');
    expect(res.headers?.['x-request-id']).toBe('req-123');
    const entry = JSON.parse(logged[0]!);
    expect(entry).toMatchObject({ level: 'error', request_id: 'req-123', route: 'POST /v1/x', error: { message: 'connection string postgres://secret@db' } });
  });

  it.each([
    ['a throttled call', { name: 'ThrottlingException' }],
    ['an unreachable endpoint', { code: 'ECONNREFUSED' }],
    ['a throttled transaction', { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }] }],
  ])('answers 503 with Retry-After for %s', async (_case, fields) => {
    const handler = defineHandler(route, async () => {
      throw Object.assign(new Error('unavailable'), fields);
    });
    const res = await invoke(handler);
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['retry-after']).toBe('1');
    expect(JSON.parse(res.body!).errors[0].code).toBe('UNAVAILABLE');
  });

  it('uses the {error} shape on single-style routes', async () => {
    const handler = defineHandler({ ...route, errorStyle: 'single' }, async () => {
      throw new HttpError(429, { message: 'Too many', code: 'RATE_LIMITED' }, { 'retry-after': '7' });
    });
    const res = await invoke(handler);
    expect(res.statusCode).toBe(429);
    expect(JSON.parse(res.body!)).toEqual({ error: 'RATE_LIMITED' });
    expect(res.headers?.['retry-after']).toBe('7');
    expect(logged).toEqual([]);
  });

  it('maps JSON parse failures to 400 and a wrong content type to 415', async () => {
    const handler = defineHandler({ ...route, body: v.object({ a: v.string() }) }, async ({ body }) => body);
    expect((await invoke(handler, event({ body: '{"a":' }))).statusCode).toBe(400);
    expect((await invoke(handler, event({ body: 'a=1', headers: { 'content-type': 'text/plain' } }))).statusCode).toBe(415);
    expect((await invoke(handler, event({ body: '"text"' }))).statusCode).toBe(400);
    const ok = await invoke(handler, event({ body: '{"a":"b"}' }));
    expect([ok.statusCode, JSON.parse(ok.body!)]).toEqual([200, { a: 'b' }]);
    // API Gateway base64-encodes a `+json` body (only application/json arrives as text).
    const encoded = event({ body: Buffer.from('{"a":"c"}').toString('base64'), isBase64Encoded: true, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(JSON.parse((await invoke(handler, encoded)).body!)).toEqual({ a: 'c' });
  });

  it("hands a multipart route's one file part to the handler, after the path is checked", async () => {
    const upload = { ...route, path: '/v1/x/{id}', params: v.object({ id: v.pipe(v.string(), v.digits()) }), body: 'multipart' } as const;
    const handler = defineHandler(upload, async ({ body }) => ({ filename: body.file.filename, text: body.file.bytes.toString('utf8') }));
    const form = Buffer.from('--b\r\nContent-Disposition: form-data; name="file"; filename="a.svg"\r\n\r\n<svg/>\r\n--b--\r\n').toString('base64');
    const multipart = (id: string, contentType: string) => event({ pathParameters: { id }, body: form, isBase64Encoded: true, headers: { 'content-type': contentType } });
    const ok = await invoke(handler, multipart('1', 'multipart/form-data; boundary=b'));
    expect([ok.statusCode, JSON.parse(ok.body!)]).toEqual([200, { filename: 'a.svg', text: '<svg/>' }]);
    expect((await invoke(handler, multipart('1', 'application/json'))).statusCode).toBe(415);
    expect((await invoke(handler, multipart('x', 'application/json'))).statusCode).toBe(404);
  });

  it('shapes the response through the route schema, in its field order, dropping extras', async () => {
    const handler = defineHandler({ ...route, response: v.object({ id: v.number(), name: v.string() }) }, async () => ({ name: 'n', secret: 's', id: 1 }));
    expect((await invoke(handler)).body).toBe('{"id":1,"name":"n"}');
  });
});

describe("the request's DynamoDB deadline (lib/db/request-effects.ts boundRequestTime)", () => {
  const deadlineSeen = async (withContext: Context) => {
    let seen: number | undefined = -1;
    const handler = defineHandler(route, async () => {
      seen = requestEffects()?.deadline;
      return {};
    });
    const before = Date.now();
    await handler(event(), withContext);
    return { seen, before };
  };

  it("is the function's remaining time less 300 ms to answer", async () => {
    const { seen, before } = await deadlineSeen({ ...context, getRemainingTimeInMillis: () => 10_000 });
    expect(seen).toBeGreaterThanOrEqual(before + 9_700);
    expect(seen).toBeLessThanOrEqual(Date.now() + 9_700);
  });

  it('is absent when the runtime gives no remaining time', async () => {
    expect((await deadlineSeen(context)).seen).toBeUndefined();
  });
});
