import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '#lib/payments/adapter.ts';
import { callProvider, PROVIDER_RETRIES, PROVIDER_TIMEOUT_MS } from '#lib/payments/http.ts';
import { mercadoPagoAdapter } from '#lib/payments/mercadopago.ts';

/**
 * The bounds section 13 puts on every provider call, pinned without waiting for them: 5 s per
 * attempt (the signal handed to fetch), at most one retry, and a retry only where repeating is
 * safe (a GET, or a write carrying its idempotency key) after what may be transient. The same
 * paths run over real HTTP against the fake Mercado Pago in test/integration/payments-mercadopago.test.ts.
 */
const answer = (status: number, body: unknown = {}) => new Response(JSON.stringify(body), { status });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function stubFetch(...outcomes: (Response | Error)[]) {
  const fetch = vi.fn(async () => {
    const next = outcomes.shift();
    if (!next) throw new Error('no more stubbed answers');
    if (next instanceof Error) throw next;
    return next;
  });
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

describe('a provider call', () => {
  it('gives each attempt 5 seconds and retries at most once', async () => {
    expect([PROVIDER_TIMEOUT_MS, PROVIDER_RETRIES]).toEqual([5_000, 1]);
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    const fetch = stubFetch(answer(503), answer(502), answer(200));
    const error = await callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ failure: 'unavailable', status: 502 });
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(timeout.mock.calls).toEqual([[5_000], [5_000]]);
  });

  it('retries a keyed write with the same key, and answers the retry', async () => {
    const fetch = stubFetch(new TypeError('fetch failed'), answer(201, { id: 1 }));
    const response = await callProvider('mercadopago', { method: 'POST', url: 'https://provider.test/x', headers: {}, body: {}, idempotencyKey: 'create:pay_1' });
    expect(response).toEqual({ status: 201, body: { id: 1 } });
    const keys = fetch.mock.calls.map((call) => ((call as unknown[])[1] as RequestInit).headers as Record<string, string>).map((headers) => headers['x-idempotency-key']);
    expect(keys).toEqual(['create:pay_1', 'create:pay_1']);
  });

  it('never repeats a write without a key, nor a refusal (4xx), and reads 429 as transient', async () => {
    let fetch = stubFetch(answer(500));
    await expect(callProvider('mercadopago', { method: 'POST', url: 'https://provider.test/x', headers: {}, body: {} })).rejects.toMatchObject({ failure: 'unavailable' });
    expect(fetch).toHaveBeenCalledTimes(1);
    fetch = stubFetch(answer(400, { message: 'bad' }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} })).resolves.toEqual({ status: 400, body: { message: 'bad' } });
    expect(fetch).toHaveBeenCalledTimes(1);
    fetch = stubFetch(answer(429), answer(200, { ok: true }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: {} })).resolves.toEqual({ status: 200, body: { ok: true } });
  });

  it('names a timeout as one, and no credential in its message', async () => {
    stubFetch(Object.assign(new Error('aborted'), { name: 'TimeoutError' }), Object.assign(new Error('aborted'), { name: 'TimeoutError' }));
    await expect(callProvider('mercadopago', { method: 'GET', url: 'https://provider.test/x', headers: { authorization: 'Bearer APP_USR-secret' } })).rejects.toThrow(
      /^mercadopago: no answer within 5000 ms$/,
    );
  });
});

describe("Mercado Pago's address", () => {
  it('is api.mercadopago.com unless MERCADOPAGO_API_URL names another (a fake, on the local stack only)', async () => {
    const fetch = stubFetch(answer(200, { id: 1 }), answer(200, { id: 2 }));
    vi.stubEnv('MERCADOPAGO_API_URL', '');
    await mercadoPagoAdapter().checkCredentials({ access_token: 't' });
    vi.stubEnv('MERCADOPAGO_API_URL', 'http://127.0.0.1:4599/');
    await mercadoPagoAdapter().checkCredentials({ access_token: 't' });
    expect(fetch.mock.calls.map((call) => String((call as unknown[])[0]))).toEqual(['https://api.mercadopago.com/users/me', 'http://127.0.0.1:4599/users/me']);
  });
});
