/** A response other than "200 with this JSON": another status, headers or cookies. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
    readonly cookies: string[] = [],
    /** The body is sent as it is (a page), not as JSON. */
    readonly raw = false,
  ) {}
}

/** A page of the API (the TEST gateway's, section 13): HTML, sent as it is, framed by no other site. */
export const htmlReply = (status: number, html: string) =>
  new Reply(
    status,
    html,
    { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'" },
    [],
    true,
  );

export const reply = (status: number, body: unknown, options: { headers?: Record<string, string>; cookies?: string[] } = {}) =>
  new Reply(status, body, options.headers, options.cookies);

export const noContent = () => new Reply(204, undefined);

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Headers on every answer of the API, errors and 204s included: `nosniff` keeps a browser from
 * reading a JSON answer (which may echo a client's text) as HTML or script.
 */
export const BASE_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}, cookies: string[] = []) {
  return {
    statusCode: status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...BASE_HEADERS, ...headers },
    ...(cookies.length > 0 ? { cookies } : {}),
    body: body === undefined ? '' : JSON.stringify(body),
  };
}
