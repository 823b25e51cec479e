import { ProviderError } from '#lib/payments/adapter.ts';
import type { Provider } from '#lib/schemas/payment.ts';

/**
 * One provider call as section 13 bounds it: 5 s per attempt, at most one retry, and only for
 * what may be sent again safely (a GET, or a write carrying its idempotency key) after what may
 * be transient (no answer, a timeout, 5xx, 429). The worst case, 2 x 5 s + the pause, stays well
 * inside a Lambda's and API Gateway's 29 s, and inside Mercado Pago's 22 s wait for a notification's answer.
 */
export const PROVIDER_TIMEOUT_MS = 5_000;
export const PROVIDER_RETRIES = 1;
const RETRY_PAUSE_MS = 200;

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON, or form-encoded when it is a URLSearchParams (Stripe's bodies, OAuth token requests). */
  body?: unknown;
  /** Writes are retried only with one: the provider answers a repeated key with the first result. */
  idempotencyKey?: string;
  /** The header the key travels in: Mercado Pago `X-Idempotency-Key` (the default), Stripe `Idempotency-Key`, PayPal `PayPal-Request-Id`. */
  idempotencyHeader?: string;
  /** A write that may be sent twice with no key (an OAuth token request: a second token is harmless). */
  retrySafe?: boolean;
}

export interface ProviderResponse {
  status: number;
  body: unknown;
}

export interface CallOptions {
  timeoutMs?: number;
  retries?: number;
}

const transient = (status: number) => status >= 500 || status === 429;

async function attempt(provider: Provider, request: ProviderRequest, timeoutMs: number): Promise<ProviderResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
  const form = request.body instanceof URLSearchParams;
  if (request.body !== undefined) headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
  if (request.idempotencyKey) headers[request.idempotencyHeader ?? 'x-idempotency-key'] = request.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : form ? String(request.body) : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new ProviderError(provider, 'unavailable', timedOut ? `no answer within ${timeoutMs} ms` : 'unreachable');
  }
  let text: string;
  try {
    text = await response.text();
  } catch {
    throw new ProviderError(provider, 'unavailable', `answer cut off (HTTP ${response.status})`, response.status);
  }
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      // A proxy's HTML error page: the status says what happened.
      body = null;
    }
  }
  return { status: response.status, body };
}

/** The provider's answer (any status but a transient one), or ProviderError `unavailable` once the retry is spent. */
export async function callProvider(provider: Provider, request: ProviderRequest, options: CallOptions = {}): Promise<ProviderResponse> {
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const retryable = request.method === 'GET' || request.idempotencyKey !== undefined || request.retrySafe === true;
  const attempts = 1 + (retryable ? (options.retries ?? PROVIDER_RETRIES) : 0);
  let last: ProviderError | undefined;
  for (let index = 0; index < attempts; index += 1) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    try {
      const response = await attempt(provider, request, timeoutMs);
      if (!transient(response.status)) return response;
      last = new ProviderError(provider, 'unavailable', `HTTP ${response.status}`, response.status);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      last = error;
    }
  }
  throw last!;
}
