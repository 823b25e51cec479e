import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The store owner's side of the handoff: the only place the identify key lives. The storefront
 * page gets a single-use handoff from GET {store_url}/auth/handoff and POSTs it here; this server
 * exchanges it with POST /v1/app/customer/identify and learns who the buyer is. The buyer's
 * browser never sees the key, and the handoff alone is worth nothing without it.
 *
 * `npm start` runs it beside the local stack for the demo store (on OWNER_PORT, 3001). Alone:
 * `npm run owner-backend`, with IDENTIFY_KEY, API_URL and STORE_ORIGIN, else read from the local
 * stack's demo.json (in LOCAL_DIR, default .local); OWNER_PORT (3001).
 */
export interface OwnerBackendOptions {
  identifyKey: string;
  /** The store API, `.../v1`. */
  apiUrl: string;
  /** The storefront's origin: the only page allowed to call this server from a browser. */
  storeOrigin: string;
}

export function createOwnerBackend({ identifyKey, apiUrl, storeOrigin }: OwnerBackendOptions): Server {
  /** Who the last handoff identified, to show on GET / (a real backend would start its own session here). */
  let lastIdentified: unknown = null;

  return createServer(async (request, response) => {
    const cors = { 'access-control-allow-origin': storeOrigin, 'access-control-allow-headers': 'content-type', vary: 'Origin' };
    const reply = (status: number, body: unknown) => response.writeHead(status, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.method === 'OPTIONS') return response.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST' }).end();
    if (request.method === 'GET' && request.url === '/') return reply(200, { last_identified: lastIdentified });
    if (request.method !== 'POST' || request.url !== '/identify') return reply(404, { errors: [{ message: 'Not found' }] });

    let handoff: unknown;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      handoff = (JSON.parse(Buffer.concat(chunks).toString()) as { handoff?: unknown }).handoff;
    } catch {
      return reply(400, { errors: [{ message: 'Send {"handoff": "..."} as JSON' }] });
    }
    // The handoff goes in the body, never in a URL (URLs end up in logs).
    const answer = await fetch(`${apiUrl}/app/customer/identify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${identifyKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ handoff }),
    }).catch(() => undefined);
    if (!answer) return reply(502, { errors: [{ message: `The store API at ${apiUrl} did not answer` }] });
    const body = (await answer.json().catch(() => ({ errors: [{ message: `The store API answered ${answer.status} without JSON` }] }))) as { customer?: unknown };
    if (answer.ok) lastIdentified = body.customer;
    // The API's own answer (identity or its error envelope) goes back to the page as it came.
    return reply(answer.status, body);
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const demo = () => JSON.parse(readFileSync(join(process.env.LOCAL_DIR ?? '.local', 'demo.json'), 'utf8')) as { api_url: string; store_url: string; identify_key: string };
  const port = Number(process.env.OWNER_PORT ?? 3001);
  createOwnerBackend({
    identifyKey: process.env.IDENTIFY_KEY ?? demo().identify_key,
    apiUrl: process.env.API_URL ?? demo().api_url,
    storeOrigin: process.env.STORE_ORIGIN ?? demo().store_url,
  }).listen(port, '127.0.0.1', () => console.log(JSON.stringify({ ready: true, owner_backend_url: `http://127.0.0.1:${port}` })));
}
