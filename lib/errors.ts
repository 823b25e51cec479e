/**
 * Every code an error may carry: one list, so tsc refuses a code written at a throw site that is
 * not here (a typo, or a new code nobody documented). Clients branch on these; never rename one.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'INVALID_BODY'
  | 'INVALID_QUERY'
  | 'INVALID_MULTIPART'
  | 'INVALID_CURSOR'
  | 'INVALID_IDEMPOTENCY_KEY'
  | 'UNAUTHENTICATED'
  | 'CUSTOMER_UNAUTHENTICATED'
  | 'LOGIN_CODE_INVALID'
  | 'HANDOFF_INVALID'
  | 'FORBIDDEN'
  | 'INSUFFICIENT_SCOPE'
  | 'ORIGIN_NOT_ALLOWED'
  | 'STORE_DOMAIN_REQUIRED'
  | 'NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'REF_CODE_NOT_FOUND'
  | 'CONFLICT'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'IDEMPOTENCY_ANSWER_LOST'
  | 'TOO_LARGE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNSUPPORTED_FILE_TYPE'
  | 'FILE_CONTENT_MISMATCH'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL_ERROR'
  | 'BAD_GATEWAY'
  | 'PROVIDER_CREDENTIALS'
  | 'PROVIDER_UNAVAILABLE'
  | 'PROVIDER_REFUSED'
  | 'AFFILIATE_BLOCKED'
  | 'BELOW_MIN_WITHDRAW'
  | 'INSUFFICIENT_BALANCE'
  | 'LINK_LIMIT_REACHED'
  | 'MAIN_LINK'
  | 'WITHDRAW_SETTINGS_REQUIRED'
  | 'LIMIT_REACHED'
  | 'OUT_OF_STOCK'
  | 'PACKAGE_DISABLED'
  | 'WEBHOOK_URL_REFUSED'
  | 'COUPON_NOT_FOUND'
  | 'COUPON_SOLD_OUT'
  | 'COUPON_CLIENT_LIMIT'
  | 'COUPON_EXPIRED'
  | 'COUPON_MIN_PRICE'
  | 'COUPON_NOT_APPLICABLE'
  | 'COUPON_RESTRICTED';

/**
 * Errors a handler or domain function throws. The error middleware turns each into the
 * envelope `{errors: [{message, code?, field?}]}` (or `{error}` on the handoff route).
 */
export interface ErrorDetail {
  message: string;
  code?: ErrorCode;
  field?: string;
}

export class HttpError extends Error {
  readonly status: number;
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(status: number, details: ErrorDetail | ErrorDetail[], headers: Record<string, string> = {}) {
    const list = Array.isArray(details) ? details : [details];
    super(list[0]?.message ?? `HTTP ${status}`);
    this.name = 'HttpError';
    this.status = status;
    this.details = list;
    this.headers = headers;
  }

  /** The single code of this error, for routes that answer `{error: CODE}`. */
  get code(): string {
    return this.details[0]?.code ?? this.details[0]?.message ?? 'ERROR';
  }
}

export const badRequest = (message: string, code: ErrorCode = 'BAD_REQUEST', field?: string) => new HttpError(400, { message, code, ...(field ? { field } : {}) });
export const unauthenticated = (message = 'Missing or invalid credential', code: ErrorCode = 'UNAUTHENTICATED') => new HttpError(401, { message, code });
export const customerUnauthenticated = () => new HttpError(401, { message: 'Invalid or expired session', code: 'CUSTOMER_UNAUTHENTICATED' });
export const forbidden = (message: string, code?: ErrorCode) => new HttpError(403, code ? { message, code } : { message });
export const notFound = (what: string) => new HttpError(404, { message: `${what} not found`, code: 'NOT_FOUND' });
export const conflict = (message: string, field?: string) => new HttpError(409, { message, code: 'CONFLICT', ...(field ? { field } : {}) });
export const unprocessable = (message: string, field?: string, code: ErrorCode = 'VALIDATION_FAILED') => new HttpError(422, { message, code, ...(field ? { field } : {}) });
/** A dependency is throttling, unreachable or contended: the request was fine and may be sent again. */
export const unavailable = (message = 'Service temporarily unavailable') => new HttpError(503, { message, code: 'UNAVAILABLE' }, { 'retry-after': '1' });
/** A payment provider that did not answer (unreachable, timed out, 5xx after the one retry): nothing was changed, try again. */
export const providerUnavailable = (message = 'The payment provider could not be reached; nothing was changed, try again') =>
  new HttpError(502, { message, code: 'PROVIDER_UNAVAILABLE' });
/**
 * A payment provider that answered and said no, for a reason of the store's (a refund of a payment
 * too old, or disputed; its credentials revoked): nothing was changed, and sending the same again
 * gets the same no. `code` PROVIDER_REFUSED, or PROVIDER_CREDENTIALS when the store's own
 * credentials were refused.
 */
export const providerRefused = (message: string, code: Extract<ErrorCode, 'PROVIDER_REFUSED' | 'PROVIDER_CREDENTIALS'> = 'PROVIDER_REFUSED') =>
  new HttpError(409, { message, code });
/** DynamoDB refused to store what the request would write (an item over 400 KB, a transaction over 4 MB, a key too long). */
export const tooLarge = () =>
  new HttpError(413, { message: 'This request would store more than one record can hold (400 KB, or 4 MB in one transaction); send less', code: 'TOO_LARGE' });
export const tooManyRequests = (retryAfterSeconds: number, code: ErrorCode = 'RATE_LIMITED') =>
  new HttpError(429, { message: 'Too many requests', code }, { 'retry-after': String(retryAfterSeconds) });

/**
 * Coupon refusals (422 on `coupon`). Both the coupon rules (lib/domain/coupon.ts) and the coupon
 * use's guarded writes (lib/db/coupon-use.ts, where the transaction re-checks the counts
 * atomically) raise them, so they live below both layers.
 */
export const couponRefused = (message: string, code: ErrorCode) => unprocessable(message, 'coupon', code);
export const couponNotFound = (code: string) => couponRefused(`Coupon ${code} does not exist in this store`, 'COUPON_NOT_FOUND');
export const couponSoldOut = (code: string) => couponRefused(`Coupon ${code} has no uses left`, 'COUPON_SOLD_OUT');
export const couponClientLimit = (coupon: { coupon: string; max_uses_per_client: number | null; limit_criteria: 'CLIENT_EMAIL' | 'CLIENT_IDENTIFIER' }) =>
  couponRefused(
    `Coupon ${coupon.coupon} may be used at most ${coupon.max_uses_per_client} time(s) per ${coupon.limit_criteria === 'CLIENT_EMAIL' ? 'client_email' : 'client_identifier'}`,
    'COUPON_CLIENT_LIMIT',
  );
