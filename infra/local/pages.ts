import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { build } from 'esbuild';
import { renderApiReference } from '#infra/docs.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';

/**
 * The static pages of the local stack, beside the route table:
 * - on a store's own domain, the storefront example (examples/storefront): `/`, `/storefront.js`,
 *   `/storefront.css`. The store-domain API routes all live under `/auth/`, so nothing collides.
 * - on the API host, the API reference at `/docs` (on AWS a static file, see infra/docs.ts).
 * The example is read and compiled on every request, so an edit shows on the next reload.
 */
const storefrontDir = join(process.cwd(), 'examples', 'storefront');
/** The owner's backend of the handoff example (`npm run owner-backend`). */
const ownerBackendUrl = () => process.env.OWNER_BACKEND_URL ?? 'http://127.0.0.1:3001';

const page = (contentType: string, body: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { 'content-type': `${contentType}; charset=utf-8`, 'cache-control': 'no-store' },
  body,
});

let reference: string | undefined;

async function storefrontScript(): Promise<string> {
  const result = await build({ entryPoints: [join(storefrontDir, 'main.ts')], bundle: true, write: false, format: 'esm', target: 'es2022', logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

/** The page for a GET the route table does not serve, or undefined (then the usual 404). */
export async function staticPage(api: 'api' | 'store', method: string, pathname: string, hostWithPort: string): Promise<APIGatewayProxyStructuredResultV2 | undefined> {
  if (method !== 'GET') return undefined;
  if (api === 'api') {
    if (pathname !== '/docs' && pathname !== '/docs/') return undefined;
    reference ??= renderApiReference(buildOpenApiDocument(routes));
    return page('text/html', reference);
  }
  if (pathname === '/') {
    // The API answers on the same port at 127.0.0.1: another origin, as on AWS.
    const port = /:(\d+)$/.exec(hostWithPort)?.[1];
    const html = await readFile(join(storefrontDir, 'index.html'), 'utf8');
    return page('text/html', html.replace('%API_URL%', `http://127.0.0.1${port ? `:${port}` : ''}/v1`).replace('%OWNER_BACKEND_URL%', ownerBackendUrl()));
  }
  if (pathname === '/storefront.css') return page('text/css', await readFile(join(storefrontDir, 'storefront.css'), 'utf8'));
  if (pathname === '/storefront.js') return page('text/javascript', await storefrontScript());
  return undefined;
}
