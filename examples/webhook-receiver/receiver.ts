import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/**
 * A webhook receiver that checks `X-Store-Signature` before trusting a body.
 *
 *   WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx examples/webhook-receiver/receiver.ts
 *
 * The signature is `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`: compute it over
 * the raw bytes received (never over re-serialized JSON), compare in constant time, and refuse a
 * timestamp older than a few minutes so a captured request cannot be replayed later. Events may
 * arrive more than once: drop an `id` already handled.
 */
export function verifySignature(secret: string, rawBody: string, header: string | undefined, nowSeconds = Date.now() / 1000, toleranceSeconds = 300): boolean {
  const fields = new Map((header ?? '').split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const t = Number(fields.get('t'));
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex'));
  const given = Buffer.from(fields.get('v1') ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const seen = new Set<string>();
  createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!verifySignature(secret, raw, request.headers['x-store-signature'] as string | undefined)) {
        response.writeHead(401).end();
        return;
      }
      const event = JSON.parse(raw) as { id: string; type: string };
      if (!seen.has(event.id)) {
        seen.add(event.id);
        console.log(`${event.type} ${event.id}`);
      }
      response.writeHead(204).end();
    });
  }).listen(Number(process.env.PORT ?? 4000), '127.0.0.1');
}
