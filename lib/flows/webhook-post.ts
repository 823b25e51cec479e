import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isBlockedAddress } from '#lib/domain/webhook.ts';

/**
 * One webhook POST: no redirect followed (node's client never follows one: a 3xx is simply not
 * a 2xx), one deadline for the whole exchange, and, when deployed, the address the name resolves
 * to checked at connection time: the socket connects to exactly the address that passed, so a
 * name that resolved to a public address at creation cannot be rebound inward later.
 */
export interface PostResult {
  status_code: number | null;
  duration_ms: number;
  /** `timeout`, a connection error (its code), or null when an answer came. */
  error: string | null;
}

const BLOCKED = 'EADDRBLOCKED';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing blocked addresses (node asks for one address or, with autoSelectFamily, for all). */
function checkedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.length === 0 || addresses.some((entry) => isBlockedAddress(entry.address))) {
      return callback(Object.assign(new Error(`${hostname} resolves to a blocked address`), { code: BLOCKED }), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

export function postWebhook(url: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; checkAddress: boolean }): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const target = new URL(url);
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
      ...(options.checkAddress ? { lookup: checkedLookup as RequestOptions['lookup'] } : {}),
    };
    let settled = false;
    const settle = (result: Omit<PostResult, 'duration_ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, duration_ms: elapsed() });
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, requestOptions, (response) => {
      // The answer's status is all that counts; its body is read and dropped so the socket closes.
      response.resume();
      settle({ status_code: response.statusCode ?? null, error: null });
    });
    const deadline = setTimeout(() => {
      settle({ status_code: null, error: 'timeout' });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => settle({ status_code: null, error: error.code === BLOCKED ? 'blocked address' : (error.code ?? 'connection error') }));
    request.end(body);
  });
}

/** Whether a host resolves only to addresses a webhook may reach (the creation's check, when deployed). */
export function resolvesToPublic(hostname: string): Promise<boolean> {
  return new Promise((resolve) => {
    lookup(hostname, { all: true }, (error, addresses) => resolve(!error && addresses.length > 0 && !addresses.some((entry) => isBlockedAddress(entry.address))));
  });
}
