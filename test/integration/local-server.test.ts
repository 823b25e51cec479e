import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { IMAGE_ORIGIN_HEADERS } from '#infra/image-origin-headers.ts';
import { lambdaContext, WEBHOOK_INBOX_PATH } from '#infra/local/server.ts';
import { ROUTE_TIMEOUT_SECONDS } from '#lib/http/route.ts';
import { createOrder } from '../support/builders.ts';
import { call, newStore } from '../support/client.ts';

/* The local server itself: it must outlive whatever a client sends, and answer with AWS's headers. */

/** Writes `payload` on a raw connection, then ends (half-closes) or destroys it; resolves with what came back. */
function rawExchange(payload: string, ending: 'end' | 'destroy' | 'wait'): Promise<string> {
  return new Promise((done) => {
    const socket = connect(inject('apiPort'), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => done(received));
    socket.on('close', () => done(received));
    socket.on('connect', () => {
      socket.write(payload);
      if (ending === 'end') socket.end();
      else if (ending === 'destroy') setTimeout(() => socket.destroy(), 50);
      else setTimeout(() => socket.destroy(), 300);
    });
  });
}

describe('the local server under broken requests', () => {
  it('keeps answering after a cut-off body, a client gone mid-request, and malformed HTTP', async () => {
    const store = await newStore();
    const post = (length: number, body: string) =>
      `POST /v1/app/tag HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${store.token}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${body}`;
    await rawExchange(post(100, '{"name":"cut'), 'end');
    await rawExchange(post(100, '{"name":"cut'), 'destroy');
    await rawExchange(`GET /v1/app/tag HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${store.token}\r\n\r\n`, 'destroy');
    await rawExchange('POST /v1/app/tag HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nnot a chunk', 'wait');
    expect(await rawExchange('NOT HTTP AT ALL\r\n\r\n', 'wait')).toMatch(/^HTTP\/1\.1 400/);
    expect(await rawExchange(`GET /v1/app/tag HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 'wait')).toMatch(/^HTTP\/1\.1 4\d\d/);
    await rawExchange('GET /v1/%E0%A4%A HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', 'wait');

    const after = await store.get('/v1/app/tag');
    expect(after.status).toBe(200);
  });
});

describe('security headers', () => {
  it('sends X-Content-Type-Options: nosniff on every API answer: 200, 204, errors, unknown routes', async () => {
    const store = await newStore();
    const created = await store.post('/v1/app/tag', { name: 'Nosniff', color: '#000000' });
    const answers = [
      await store.get('/v1/app/tag'),
      created,
      await store.delete(`/v1/app/tag/${created.body.id}`),
      await store.post('/v1/app/tag', { name: '' }),
      await call('GET', '/v1/app/tag'),
      await call('GET', '/v1/no/such/route'),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 204, 422, 401, 404]);
    for (const answer of answers) expect(answer.headers['x-content-type-options'], String(answer.status)).toBe('nosniff');
  });

  it('serves images from the local origin with the Content-Security-Policy and nosniff of CloudFront', async () => {
    const s3 = new S3Client({ endpoint: inject('s3Endpoint'), region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const key = `headers-probe/${process.pid}.svg`;
    await s3.send(new PutObjectCommand({ Bucket: inject('bucket'), Key: key, Body: '<svg xmlns="http://www.w3.org/2000/svg"/>', ContentType: 'image/svg+xml' }));
    s3.destroy();
    const image = await fetch(`${inject('s3Endpoint')}/${inject('bucket')}/${key}`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-security-policy')).toBe(IMAGE_ORIGIN_HEADERS['Content-Security-Policy']);
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("keeps a webhook's deliveries to its inbox route in <LOCAL_DIR>/webhooks.jsonl, signed, and logs them delivered", async () => {
    const store = await newStore();
    const hook = await store.post('/v1/app/webhook', { url: `${inject('apiUrl')}${WEBHOOK_INBOX_PATH}`, events: ['order.created'] });
    expect(hook.status, hook.text).toBe(200);
    const order = await createOrder(store);
    const inbox = join(inject('localDir'), 'webhooks.jsonl');
    const deadline = Date.now() + 20_000;
    let line: { headers: Record<string, string>; body: string } | undefined;
    while (!line && Date.now() < deadline) {
      const lines = existsSync(inbox)
        ? readFileSync(inbox, 'utf8')
            .trim()
            .split('\n')
            .map((text) => JSON.parse(text))
        : [];
      line = lines.find((entry) => JSON.parse(entry.body).data?.id === order.id && JSON.parse(entry.body).store_id === store.storeId);
      if (!line) await new Promise((done) => setTimeout(done, 25));
    }
    expect(line, 'the delivery reached the inbox').toBeDefined();
    expect(line!.headers).toMatchObject({ 'x-store-event': 'order.created', 'x-store-signature': expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/) });
    // The sender logs the attempt once the inbox has answered: the line can be in the file before the log has it.
    await expect
      .poll(async () => (await store.get(`/v1/app/webhook/${hook.body.id}/delivery?page_cursor=&page_size=10`)).body.data[0], { timeout: 20_000 })
      .toMatchObject({ type: 'order.created', status_code: 204 });
  });
});

describe('the time the local server gives a request', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is a route's budget on AWS (10 s, not API Gateway's 30 s), counting down from the request, so the per-request deadline fires locally too", () => {
    vi.useFakeTimers({ now: Date.parse('2031-01-01T00:00:00.000Z'), toFake: ['Date'] });
    const context = lambdaContext('tag-create', 'budget-test');
    expect(ROUTE_TIMEOUT_SECONDS).toBe(10);
    expect(context.getRemainingTimeInMillis()).toBe(10_000);
    vi.advanceTimersByTime(9_700);
    expect(context.getRemainingTimeInMillis()).toBe(300);
    vi.advanceTimersByTime(1_000);
    expect(context.getRemainingTimeInMillis()).toBe(0);
  });
});
