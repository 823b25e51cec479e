import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { bodyFingerprint, canonicalJson, decideRepeat, idempotencyKeyProblem, idempotencyScope, keepsAnswer } from '#lib/domain/idempotency.ts';

/** The rules of Idempotency-Key (pure), and the middleware's keep/release around a mocked table. */
process.env.TABLE_NAME ??= 'unit-test-table';

const table = vi.hoisted(() => ({
  record: undefined as { status: 'RUNNING' | 'DONE'; fingerprint: string; answer?: Uint8Array | string; store_id: number } | undefined,
  kept: [] as Uint8Array[],
  released: 0,
  /** DynamoDB failing when the answer is kept or the claim settled, after the handler ran. */
  failSettle: false,
}));
const dynamoDbDown = () => Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
vi.mock('#lib/db/idempotency.ts', () => ({
  idempotencyPk: (digest: string) => `IDEMPOTENCY#${digest}`,
  claimIdempotencyKey: async (_claim: unknown, record: { fingerprint: string; store_id: number }) => {
    if (table.record) return { claimed: false, record: table.record };
    table.record = { status: 'RUNNING', ...record };
    return { claimed: true, earlier: { maybeWrote: false } };
  },
  keepAnswer: async (_claim: unknown, answer: Uint8Array) => {
    if (table.failSettle) throw dynamoDbDown();
    table.kept.push(answer);
    table.record = { ...table.record!, status: 'DONE', answer };
  },
  settleUnanswered: async () => {
    if (table.failSettle) throw dynamoDbDown();
    table.released += 1;
    table.record = undefined;
  },
}));

describe('idempotency rules', () => {
  it('accepts keys of 1 to 255 characters', () => {
    expect(idempotencyKeyProblem('')).toMatch(/empty/);
    expect(idempotencyKeyProblem('k')).toBeUndefined();
    expect(idempotencyKeyProblem('k'.repeat(255))).toBeUndefined();
    expect(idempotencyKeyProblem('k'.repeat(256))).toMatch(/255/);
  });

  it('compares bodies as JSON values: key order and spacing do not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(bodyFingerprint('{"a":1,"b":2}')).toBe(bodyFingerprint(' {"b": 2, "a": 1} '));
    expect(bodyFingerprint('{"a":1}')).not.toBe(bodyFingerprint('{"a":"1"}'));
    expect(bodyFingerprint('not json')).not.toBe(bodyFingerprint('"not json"'));
    expect(bodyFingerprint(undefined)).toBe(bodyFingerprint(''));
  });

  it('replays a finished request, refuses a running one (409) and another body (422)', () => {
    expect(decideRepeat({ status: 'DONE', fingerprint: 'f' }, 'f')).toBe('replay');
    expect(decideRepeat({ status: 'RUNNING', fingerprint: 'f' }, 'f')).toBe('running');
    expect(decideRepeat({ status: 'DONE', fingerprint: 'f' }, 'g')).toBe('reused');
    expect(decideRepeat({ status: 'RUNNING', fingerprint: 'f' }, 'g')).toBe('reused');
  });

  it('keeps answers below 500 only', () => {
    expect(keepsAnswer(200)).toBe(true);
    expect(keepsAnswer(422)).toBe(true);
    expect(keepsAnswer(500)).toBe(false);
    expect(keepsAnswer(503)).toBe(false);
  });
});

const { defineHandler } = await import('#lib/http/handler.ts');

describe('idempotency middleware', () => {
  const route = { method: 'POST', path: '/v1/app/thing', api: 'api', credential: 'public', access: 'none', summary: 's', tag: 't' } as const;
  const event = (body: string) =>
    ({
      version: '2.0',
      routeKey: 'POST /v1/app/thing',
      rawPath: '/v1/app/thing',
      rawQueryString: '',
      isBase64Encoded: false,
      body,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      requestContext: { requestId: `r-${Math.random()}`, http: { method: 'POST', path: '/v1/app/thing' } },
    }) as unknown as APIGatewayProxyEventV2;
  const invoke = async (handler: (e: APIGatewayProxyEventV2, c: Context) => Promise<unknown>, body = '{"a":1}') =>
    (await handler(event(body), {} as Context)) as APIGatewayProxyStructuredResultV2;

  beforeEach(() => {
    table.record = undefined;
    table.kept = [];
    table.released = 0;
    table.failSettle = false;
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  it('does not keep a 5xx: the retry runs again, and its answer is kept and replayed', async () => {
    let runs = 0;
    const handler = defineHandler(route, async () => {
      runs += 1;
      if (runs === 1) throw new Error('boom');
      return { ok: runs };
    });
    expect((await invoke(handler)).statusCode).toBe(500);
    expect(table.released).toBe(1);
    const second = await invoke(handler);
    expect(second.statusCode).toBe(200);
    expect(table.kept).toHaveLength(1);
    const replay = await invoke(handler);
    expect(replay.headers?.['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(second.body);
    expect(runs).toBe(2);
  });

  it('seals the kept answer: the stored text does not contain the body it answers', async () => {
    const handler = defineHandler(route, async () => ({ secret: 'whsec_visible_only_once' }));
    await invoke(handler);
    expect(Buffer.from(table.kept[0]!).toString('latin1')).not.toContain('whsec_visible_only_once');
  });

  it('keeps an answer the size of its body: a body of quotes and control characters is not escaped again', async () => {
    // JSON writes each '"' as 2 bytes and each \u0001 as 6; kept inside another JSON text and base64, these were 2.7 and 3.1 times the body.
    const text = '"\u0001'.repeat(20_000);
    const handler = defineHandler(route, async () => ({ text }));
    const first = await invoke(handler);
    const kept = table.kept[0]!;
    expect(kept).toBeInstanceOf(Uint8Array);
    expect(kept.byteLength).toBeLessThan(Buffer.byteLength(first.body as string) + 300);
    const replay = await invoke(handler);
    expect(replay.body).toBe(first.body);
    expect(replay.headers?.['idempotent-replayed']).toBe('true');
  });

  it('still replays an answer kept before answers were bytes (base64 of the whole answer as JSON)', async () => {
    const { createCipheriv, createHash, randomBytes } = await import('node:crypto');
    const scope = idempotencyScope({ kind: 'public' }, { method: 'POST', routePath: '/v1/app/thing', pathParameters: {}, key: 'k1' });
    const key = createHash('sha256').update(`answer:${scope}`, 'utf8').digest();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const old = { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"kept":"before"}' };
    const sealed = Buffer.concat([cipher.update(JSON.stringify(old), 'utf8'), cipher.final()]);
    table.record = { status: 'DONE', fingerprint: bodyFingerprint('{"a":1}'), answer: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'), store_id: 0 };
    const replay = await invoke(defineHandler(route, async () => ({ ran: true })));
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe('{"kept":"before"}');
  });

  it.each([
    ['a 2xx whose answer cannot be kept', async () => ({ ok: true })],
    [
      'a 5xx whose claim cannot be settled',
      async () => {
        throw new Error('boom');
      },
    ],
  ])('%s: 503 with Retry-After and the envelope, never an escaping error', async (_, work) => {
    table.failSettle = true;
    const answer = await invoke(defineHandler(route, work));
    expect(answer.statusCode).toBe(503);
    expect(Number(answer.headers?.['retry-after'])).toBeGreaterThanOrEqual(1);
    const body = JSON.parse(answer.body as string);
    expect(body.errors[0]).toMatchObject({ code: 'UNAVAILABLE' });
    expect(body.request_id).toEqual(expect.any(String));
    expect(answer.headers?.['x-request-id']).toBe(body.request_id);
  });
});
