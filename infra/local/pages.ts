import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { build } from 'esbuild';
import { defaultDocsDir } from '#infra/docs.ts';
import { DOCS_FILES, DOCS_HEADERS, DOCS_PATH, type DocsFile } from '#infra/docs-headers.ts';

/**
 * The static pages of the local stack, beside the route table:
 * - on a store's own domain, the storefront example (examples/storefront): `/`, `/storefront.js`,
 *   `/storefront.css`. The store-domain API routes all live under `/auth/`, so nothing collides.
 * - on the API host, the API reference at `/docs`: the files of `.build/docs` (infra/docs.ts, written
 *   when the stack starts), with the Content-Security-Policy CloudFront sends for them on AWS.
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

/** A file of the reference page, or undefined for a name that is not one of them (no path is ever joined from the URL). */
async function docsFile(pathname: string): Promise<APIGatewayProxyStructuredResultV2 | undefined> {
  const name = pathname === DOCS_PATH || pathname === `${DOCS_PATH}/` ? 'index.html' : pathname.slice(DOCS_PATH.length + 1);
  if (!pathname.startsWith(`${DOCS_PATH}/`) && pathname !== DOCS_PATH) return undefined;
  if (!Object.hasOwn(DOCS_FILES, name)) return undefined;
  const content = await readFile(join(defaultDocsDir, name));
  const contentType = DOCS_FILES[name as DocsFile];
  const text = contentType !== 'image/png';
  return {
    statusCode: 200,
    headers: { 'content-type': contentType, 'cache-control': 'no-store', ...DOCS_HEADERS },
    body: content.toString(text ? 'utf8' : 'base64'),
    isBase64Encoded: !text,
  };
}

async function storefrontScript(): Promise<string> {
  const result = await build({ entryPoints: [join(storefrontDir, 'main.ts')], bundle: true, write: false, format: 'esm', target: 'es2022', logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

/** The page for a GET (or HEAD) the route table does not serve, or undefined (then the usual 404). */
export async function staticPage(api: 'api' | 'store', method: string, pathname: string, hostWithPort: string): Promise<APIGatewayProxyStructuredResultV2 | undefined> {
  // HEAD is answered as GET (node sends the headers and drops the body), as CloudFront does for the deployed /docs.
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (api === 'api') return docsFile(pathname);
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
