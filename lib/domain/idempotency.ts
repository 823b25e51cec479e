import { createHash } from 'node:crypto';

/**
 * The rules of `Idempotency-Key` (extensions section 12), without I/O: which keys are valid, when
 * two request bodies are "the same JSON value", and what a repeated key gets. The handler stack
 * applies them (lib/http/idempotency.ts) around one conditional write (lib/db/idempotency.ts).
 */
export const IDEMPOTENCY_KEY_MAX = 255;
/** How long a first answer is kept and replayed. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/**
 * How long a first request counts as still running. Longer than any function may run (10 s on
 * AWS), so a request that died half-way blocks its key for at most this long, never for a day.
 */
export const IDEMPOTENCY_RUNNING_SECONDS = 30;

/**
 * Whose key it is (section 12): a key answers only the caller that sent it. The operator's store
 * (an API token or key), the buyer (a buyer token or session: the customer, whichever credential
 * the retry carries), or a guest: the store and the body's `client_email`.
 */
export type IdempotencyCaller =
  | { kind: 'store'; storeId: number }
  | { kind: 'buyer'; storeId: number; customerId: number }
  | { kind: 'guest'; storeId: number; email: string }
  | { kind: 'public' };

/** A guest's e-mail as the schemas normalise it (trimmed, lower case); empty when the body has none. */
export function guestEmailOf(body: string | undefined): string {
  try {
    const email = (JSON.parse(body ?? '') as { client_email?: unknown } | null)?.client_email;
    return typeof email === 'string' ? email.trim().toLowerCase() : '';
  } catch {
    return '';
  }
}

/**
 * The text a key's record and its sealed answer are derived from: the caller, the method and the
 * path as routed (the route's template and its parameters as decoded, so `/order/3/note` and
 * `/order/%33/note` are one path), and the key.
 */
export function idempotencyScope(
  caller: IdempotencyCaller,
  request: { method: string; routePath: string; pathParameters: Record<string, string | undefined>; key: string },
): string {
  const params = Object.keys(request.pathParameters)
    .sort()
    .map((name) => [name, request.pathParameters[name] ?? null]);
  return JSON.stringify([caller, request.method, request.routePath, params, request.key]);
}

/** Why a presented key is refused, or undefined when it is valid. Characters are UTF-16 code points as JavaScript counts them. */
export function idempotencyKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'Idempotency-Key must not be empty';
  if (key.length > IDEMPOTENCY_KEY_MAX) return `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters`;
  return undefined;
}

/** JSON with object keys sorted at every depth: two bodies with the same value and another key order give one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What identifies a request body: the digest of its canonical JSON, or of its exact text when it
 * is not JSON (such a body is refused the same way each time, so only its bytes matter).
 */
export function bodyFingerprint(body: string | undefined): string {
  let text = body ?? '';
  try {
    if (body !== undefined && body !== '') text = `json:${canonicalJson(JSON.parse(body))}`;
  } catch {
    text = `raw:${body}`;
  }
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

export interface KeptRequest {
  status: 'RUNNING' | 'DONE';
  fingerprint: string;
}

/** What a request gets when its key is already held by a live record. */
export type RepeatDecision = 'replay' | 'running' | 'reused';

export function decideRepeat(kept: KeptRequest, fingerprint: string): RepeatDecision {
  if (kept.fingerprint !== fingerprint) return 'reused';
  return kept.status === 'RUNNING' ? 'running' : 'replay';
}

/** Whether a first answer is kept: a 5xx is not, so that the retry runs again. */
export const keepsAnswer = (status: number) => status < 500;
