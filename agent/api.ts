import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createHash } from 'node:crypto';

/**
 * The two calls of extensions section 9 a game server makes, with its delivery key.
 *
 * An ack carries an Idempotency-Key derived from its lease and its results (`ackKey`), so the
 * retry of an ack whose answer was lost is the same request and the store answers it from the key
 * (a repeated ack changes nothing anyway: the key makes it one request, not two). A claim carries
 * none: its answer can be several MB, more than the store keeps under a key, and a claim whose
 * answer was lost leaves its commands under a lease nobody acks, so they are handed out again
 * (attempt + 1) when it lapses, none of them run.
 */
export interface ClaimedCommand {
  id: number;
  order_id: number;
  attempt: number;
  command: string;
  offline_execute: boolean;
  order: { client_identifier: string; [field: string]: unknown };
}

export interface Claim {
  lease_id: string | null;
  expires_at: string | null;
  commands: ClaimedCommand[];
}

export interface AckResult {
  id: number;
  status: 'DONE' | 'FAILED';
  response: string;
}

export interface AckAnswer {
  accepted: number[];
  rejected: { id: number; reason: string }[];
}

/** The API could not be reached, or answered 5xx or 429: worth trying again later. */
export class ApiUnavailable extends Error {}

/** The API refused the request (4xx): the same request will be refused again. */
export class ApiRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }

  /** 401 / 403: the key is unknown, revoked, or not a delivery key bound to a server. */
  get badKey(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** A request that gets no answer in this time counts as the API being down. */
const REQUEST_TIMEOUT_MS = 15_000;

export class StoreApi {
  constructor(
    private readonly base: string,
    private readonly key: string,
    private readonly userAgent: string,
    private readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {}

  claim(body: { online: string[]; limit: number; lease_seconds: number }): Promise<Claim> {
    return this.post<Claim>('/delivery/claim', body);
  }

  ack(leaseId: string, results: AckResult[]): Promise<AckAnswer> {
    return this.post<AckAnswer>('/delivery/ack', { lease_id: leaseId, results }, ackKey(leaseId, results));
  }

  private async post<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    let answer: { status: number; text: string };
    try {
      answer = await send(new URL(`${this.base}${path}`), JSON.stringify(body), this.timeoutMs, {
        authorization: `Bearer ${this.key}`,
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      });
    } catch (error) {
      throw new ApiUnavailable(`POST ${path}: no answer from ${this.base} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const { status, text } = answer;
    // 409 under a key: the same ack sent before (its answer lost or late) still runs; its answer will be kept for this key.
    const stillRunning = status === 409 && idempotencyKey !== undefined;
    if (status >= 500 || status === 429 || stillRunning) throw new ApiUnavailable(`POST ${path}: ${status} ${firstMessage(text)}`);
    if (status < 200 || status > 299) throw new ApiRefused(`POST ${path}: ${status} ${firstMessage(text)}`, status);
    try {
      return JSON.parse(text) as T;
    } catch {
      // A proxy's error page in front of the API, say: not the store's answer.
      throw new ApiUnavailable(`POST ${path}: ${status} with a body that is not JSON`);
    }
  }
}

/**
 * The Idempotency-Key of an ack: a digest of its lease and of each result (command id, outcome
 * and response), so every retry of one ack sends one key, even after a restart from the journal,
 * and an ack of other results can never be answered with this one's answer.
 */
export function ackKey(leaseId: string, results: AckResult[]): string {
  const outcomes = results.map(({ id, status, response }) => [id, status, response]);
  return `ack-${createHash('sha256')
    .update(JSON.stringify([leaseId, outcomes]), 'utf8')
    .digest('base64url')}`;
}

/**
 * One POST through node:http(s) rather than fetch: loading fetch (undici) costs the agent about
 * 12 MB of resident memory for two small requests a cycle.
 */
function send(url: URL, payload: string, timeoutMs: number, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(payload) }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The error envelope's first message, or the start of whatever came back. */
function firstMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { errors?: { message?: string }[] }).errors?.[0]?.message;
    if (message) return message;
  } catch {
    // not the envelope
  }
  return text.slice(0, 200);
}
