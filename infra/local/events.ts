import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { buildEvent } from '#infra/local/server.ts';

/**
 * Writes events/<function>.json, one API Gateway HTTP API (payload 2.0)
 * sample event per route of the table, from the route's `example`. Credentials are
 * placeholders that `npm run invoke` fills from .local/demo.json (or the environment):
 * {{api_token}}, {{identify_key}}, {{store_domain}}, {{order_internal_id}}, {{access_token}},
 * {{session}}, {{login_code}}, {{handoff}}, {{delivery_key}}, ... (infra/local/invoke-event.ts).
 */
const API_HOST = '127.0.0.1:3000';
/** Fixed, so that the committed multipart sample stays the same from one generation to the next. */
const MULTIPART_BOUNDARY = 'sample-boundary-7MA4YWxkTrZu0gW';

/** The body and its Content-Type: the example's JSON, or its file as the one part of a multipart/form-data body (as curl -F sends it). */
function sampleBody(example: NonNullable<RouteSpec['example']>): { body: Buffer; contentType?: string } {
  if (example.file) {
    const { filename, contentType, content } = example.file;
    const part = `--${MULTIPART_BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="${filename}"\r\ncontent-type: ${contentType}\r\n\r\n${content}\r\n--${MULTIPART_BOUNDARY}--\r\n`;
    return { body: Buffer.from(part), contentType: `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` };
  }
  if (example.body === undefined) return { body: Buffer.alloc(0) };
  return { body: Buffer.from(JSON.stringify(example.body)), contentType: 'application/json' };
}

function credentialHeaders(spec: RouteSpec): Record<string, string> {
  switch (spec.credential) {
    case 'operator':
      return { authorization: 'Bearer {{api_token}}' };
    case 'apiKey':
      // The demo store has one key per scope: the identify key, and its game server's delivery key.
      return { authorization: spec.scope === 'delivery' ? 'Bearer {{delivery_key}}' : 'Bearer {{identify_key}}' };
    case 'buyer':
      return { authorization: 'Bearer {{access_token}}', 'x-store-domain': '{{store_domain}}' };
    case 'buyerStore':
    case 'buyerOptional':
      return { 'x-store-domain': '{{store_domain}}' };
    case 'session':
      return { cookie: 'store_session={{session}}' };
    default:
      return {};
  }
}

export function sampleEvent(spec: RouteSpec) {
  const example = spec.example ?? {};
  const path = spec.path.replace(/\{([^}]+)\}/g, (_m, name: string) => example.params?.[name] ?? '1');
  const url = new URL(`http://${API_HOST}${path}`);
  for (const [name, value] of Object.entries(example.query ?? {})) url.searchParams.set(name, value);
  const { body, contentType } = sampleBody(example);
  const headers: Record<string, string> = {
    host: spec.api === 'store' ? '{{store_domain}}' : API_HOST,
    'user-agent': 'curl/8.0',
    ...credentialHeaders(spec),
    ...example.headers,
    ...(contentType ? { 'content-type': contentType } : {}),
  };
  const pathParameters = Object.fromEntries([...spec.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => [name!, example.params?.[name!] ?? '1']));
  const event = buildEvent({ method: spec.method, url, headers, body, sourceIp: '127.0.0.1' }, spec, pathParameters);
  // Fixed values keep the committed files stable from one generation to the next.
  return { ...event, requestContext: { ...event.requestContext, requestId: 'sample-request-id', time: '21/Nov/2026:12:00:00 +0000', timeEpoch: 1_795_262_400_000 } };
}

export function writeEvents(dir = 'events'): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, spec] of routeEntries()) {
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(sampleEvent(spec), null, 2)}\n`);
    written.push(name);
  }
  // Events of routes that no longer exist would mislead: remove them.
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.json') && !written.includes(file.slice(0, -5))) rmSync(join(dir, file));
  }
  return written;
}
