import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver that checks the signature before trusting a body.
 *
 *   WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx examples/webhook-receiver/receiver.ts
 *
 * Every delivery carries the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), so the receiver uses the `standardwebhooks` library (any language has one)
 * and writes no crypto of its own: `verifyDelivery` below. The library checks the signature over
 * the raw bytes received (never over re-serialized JSON), in constant time, and refuses a timestamp
 * more than 5 minutes away, so a captured request cannot be replayed later. Events may arrive more
 * than once: drop a `webhook-id` (the event's `id`) already handled.
 *
 * The secret shown at the webhook's creation is `whsec_<base64>`, the library's own form. A secret
 * made before these headers existed is base64url (`-` and `_` in it): `standardSecret` rewrites it.
 */
export function standardSecret(secret: string): string {
  return `whsec_${Buffer.from(secret.slice('whsec_'.length), 'base64').toString('base64')}`;
}

/** The event, or null when the signature, the timestamp or a header is wrong. */
export function verifyDelivery(secret: string, rawBody: string, headers: IncomingHttpHeaders): { id: string; type: string; data: unknown } | null {
  const standard = {
    'webhook-id': String(headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(headers['webhook-signature'] ?? ''),
  };
  try {
    return new Webhook(standardSecret(secret)).verify(rawBody, standard) as { id: string; type: string; data: unknown };
  } catch {
    return null;
  }
}

/**
 * The store's own scheme, sent beside the standard one:
 * `X-Store-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with the
 * secret's text. For receivers without a Standard Webhooks library.
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
      const event = verifyDelivery(secret, Buffer.concat(chunks).toString('utf8'), request.headers);
      if (!event) {
        response.writeHead(401).end();
        return;
      }
      if (!seen.has(event.id)) {
        seen.add(event.id);
        console.log(`${event.type} ${event.id}`);
      }
      response.writeHead(204).end();
    });
  }).listen(Number(process.env.PORT ?? 4000), '127.0.0.1');
}
