/**
 * The API reference page's files and the headers they are served with (infra/docs.ts writes the
 * page). CloudFront sends these headers on AWS (the `/docs*` behaviour of infra/stacks/data-stack.ts);
 * the local stack sends the same (infra/local/pages.ts). Kept apart from infra/docs.ts so the CDK
 * stacks need not load the route table to read them.
 */
export const DOCS_PATH = '/docs';

/** Every file of the page, with the type it is served with; nothing else is served under /docs. */
export const DOCS_FILES = {
  'index.html': 'text/html; charset=utf-8',
  'docs.js': 'text/javascript; charset=utf-8',
  'openapi.json': 'application/json; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;
export type DocsFile = keyof typeof DOCS_FILES;

/**
 * What Swagger UI needs and nothing more: its script and the initializer from this origin (no
 * inline script, no eval), its stylesheet, the inline SVG icons (`data:` images) of that
 * stylesheet, and the OpenAPI document fetched from this origin. No frame, form or base URL.
 * Sent by the local stack and by CloudFront's response headers policy of the `/docs*` behaviour.
 */
export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const DOCS_HEADERS = {
  'content-security-policy': DOCS_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
} as const;
