import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { isPublicAddress } from '#lib/domain/webhook.ts';

/**
 * One webhook POST: no redirect followed (node's client never follows one: a 3xx is simply not
 * a 2xx, so a redirect to an inward address is never taken), one deadline for the whole exchange,
 * and, when deployed, the address checked three ways (extensions section 12):
 * - an IP literal is judged before any connection (node never calls `lookup` for a literal);
 * - a name is resolved by `checkedLookup`, which refuses it when any of its addresses is not
 *   public, so the socket connects only to an address that passed and DNS cannot rebind it inward;
 * - the address the socket actually connected to is judged again on `connect`, before the
 *   request is written (the listener is put first), whatever resolved it.
 */
export interface PostResult {
  status_code: number | null;
  duration_ms: number;
  /** `timeout`, a connection error (its code), or null when an answer came. */
  error: string | null;
}

const BLOCKED = 'EADDRBLOCKED';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** How names are resolved: dns.lookup with `all`; a test hands in its own to point a name anywhere. */
export type Resolve = (hostname: string, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolve: Resolve = (hostname, callback) => lookup(hostname, { all: true }, callback);
const blocked = (what: string) => Object.assign(new Error(`${what} is not a public address`), { code: BLOCKED });

/** A `lookup` for node's client refusing names with any non-public address (node asks for one address or, with autoSelectFamily, for all). */
const checkedLookup = (resolve: Resolve) => (hostname: string, options: LookupOptions, callback: LookupCallback) => {
  resolve(hostname, (error, addresses) => {
    if (error) return callback(error, []);
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
    if (wanted.length === 0 || addresses.some((entry) => !isPublicAddress(entry.address))) return callback(blocked(hostname), []);
    if (options.all) return callback(null, wanted);
    callback(null, wanted[0]!.address, wanted[0]!.family);
  });
};

/** Refuses the connection when the address the socket reached is not public, before anything is written on it. */
export function checkConnectedAddress(socket: Socket): void {
  socket.prependOnceListener('connect', () => {
    if (!isPublicAddress(socket.remoteAddress ?? '')) socket.destroy(blocked(socket.remoteAddress ?? 'the connected address'));
  });
}

export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; checkAddress: boolean; resolve?: Resolve },
): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const target = new URL(url);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (options.checkAddress && isIP(literal) !== 0 && !isPublicAddress(literal)) {
      resolve({ status_code: null, error: 'blocked address', duration_ms: elapsed() });
      return;
    }
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
      ...(options.checkAddress ? { lookup: checkedLookup(options.resolve ?? systemResolve) as RequestOptions['lookup'] } : {}),
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
    if (options.checkAddress) request.on('socket', checkConnectedAddress);
    request.on('error', (error: NodeJS.ErrnoException) => settle({ status_code: null, error: error.code === BLOCKED ? 'blocked address' : (error.code ?? 'connection error') }));
    request.end(body);
  });
}

/** Whether a host resolves only to addresses a webhook may reach (the creation's check, when deployed). */
export function resolvesToPublic(hostname: string, resolve: Resolve = systemResolve): Promise<boolean> {
  return new Promise((answer) => {
    resolve(hostname, (error, addresses) => answer(!error && addresses.length > 0 && addresses.every((entry) => isPublicAddress(entry.address))));
  });
}
