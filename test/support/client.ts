import { request } from 'node:http';
import { inject } from 'vitest';
import { createApiKey, createApiToken, noteCredentialUse } from '#lib/db/credential.ts';
import { createStore } from '#lib/db/store.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  /** JSON body (sent with content-type application/json unless `contentType` says otherwise). */
  json?: unknown;
  /** Raw body, sent as is. */
  raw?: string | Buffer;
  contentType?: string;
  /** An array sends the header once per value. */
  headers?: Record<string, string | string[]>;
  /** Host header: a store's own domain for the store-domain routes. */
  host?: string;
  cookie?: string;
}

/** One HTTP request to the local stack (node:http, because fetch cannot set Host). */
export function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const port = inject('apiPort');
  const payload = options.raw ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  const headers: Record<string, string | string[]> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (payload !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    // A length rather than chunks: node's server refuses a chunked GET body before any handler sees it.
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  if (options.host) headers.host = `${options.host}:${port}`;
  if (options.cookie) headers.cookie = options.cookie;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

let storeCounter = 0;

/**
 * Marks credentials as used far ahead of any time a test sets (x-local-now), so that no request of
 * theirs moves the "last used" mark: the DynamoDB calls the tests pin are a route's steady state, and
 * the mark's own write (at most one an hour per credential) is pinned once, by
 * test/integration/credential-last-use.test.ts, which makes its credentials unused.
 */
const IN_USE_UNTIL_MS = Date.parse('9000-01-01T00:00:00.000Z');
export const markInUse = async (...secrets: string[]) => {
  for (const secret of secrets) await noteCredentialUse(secret, IN_USE_UNTIL_MS);
};

/** A fresh store with an operator token and an identify key (marked in use unless `unusedCredentials`): tests never share a store. */
export async function newStore(name = 'Test store', options: { unusedCredentials?: boolean } = {}) {
  const domain = `s${process.pid}-${Date.now().toString(36)}-${++storeCounter}.test.localhost`;
  const store = await createStore({ name, domain });
  const { api_token } = await createApiToken(store.id);
  const { key } = await createApiKey(store.id, ['customers:identify']);
  if (!options.unusedCredentials) await markInUse(api_token, key);
  const as = (token: string) => ({
    get: <T = any>(path: string, options: CallOptions = {}) => call<T>('GET', path, { token, ...options }),
    post: <T = any>(path: string, json?: unknown, options: CallOptions = {}) => call<T>('POST', path, { token, json, ...options }),
    patch: <T = any>(path: string, json?: unknown, options: CallOptions = {}) => call<T>('PATCH', path, { token, json, ...options }),
    put: <T = any>(path: string, json?: unknown, options: CallOptions = {}) => call<T>('PUT', path, { token, json, ...options }),
    delete: <T = any>(path: string, options: CallOptions = {}) => call<T>('DELETE', path, { token, ...options }),
  });
  return { storeId: store.id, domain: store.domain, token: api_token, identifyKey: key, ...as(api_token), as };
}

/** Asserts the error envelope and returns its first error. */
export function firstError(response: ApiResponse) {
  const errors = (response.body as { errors?: { message: string; code?: string; field?: string }[] })?.errors;
  if (!Array.isArray(errors) || errors.length === 0 || typeof errors[0]?.message !== 'string') {
    throw new Error(`expected an error envelope, got ${response.status} ${response.text}`);
  }
  return errors[0]!;
}

/**
 * Headers that run a request at `offsetMs` after `iso` on the local stack (x-local-now,
 * lib/clock.ts): a test of "updated_at moves" or of a time window sets the time instead of sleeping.
 */
export const atTime = (iso: string, offsetMs = 0) => ({ 'x-local-now': new Date(Date.parse(iso) + offsetMs).toISOString() });

/** The DynamoDB calls the local stack measured for this request (header x-local-dynamodb-calls). */
export const dynamoDbCalls = (response: { headers: Record<string, unknown> }) => Number(response.headers['x-local-dynamodb-calls']);
