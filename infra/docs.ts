import { copyFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';
import { DOCS_PATH, type DocsFile } from '#infra/docs-headers.ts';

/**
 * The API reference page: Swagger UI (swagger-ui-dist, a static bundle) rendering the OpenAPI
 * document of the route table. `npm run build` (and `npx cdk synth`, and the local stack at start)
 * writes it to `.build/docs/`: the two files of swagger-ui-dist the page loads, the document, an
 * index.html and its initializer. Nothing is fetched from a CDN, nothing is rendered by a Lambda:
 * the same folder is served at `/docs` by the local stack (infra/local/pages.ts) and shipped to
 * S3 behind the CloudFront behaviour `/docs*` on AWS (infra/stacks/docs-stack.ts).
 *
 * Every URL in the page is absolute (`/docs/...`), so it works at `/docs` and at `/docs/`.
 */
const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const defaultDocsDir = resolve(projectRoot, '.build/docs');

/** Copied as they are from swagger-ui-dist. The standalone preset (its top bar loads any URL typed in) is left out. */
const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png'] as const satisfies readonly DocsFile[];

const indexHtml = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
<link rel="preload" href="${DOCS_PATH}/openapi.json" as="fetch" crossorigin>
<link rel="preload" href="/v1/openapi.json" as="fetch" crossorigin>
</head>
<body>
<noscript>The reference needs JavaScript; the OpenAPI document itself is <a href="${DOCS_PATH}/openapi.json">openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/docs.js"></script>
</body>
</html>
`;

/**
 * The initializer. "Try it out" works only where the API is the page's own origin: the local
 * stack serves /docs beside /v1, so the page asks its origin for `/v1/openapi.json`. Answered,
 * it is the console (every method submittable, the Authorize dialog's credentials sent with the
 * calls). Not answered (the deployed page on the images CDN, another origin than the API, whose
 * operator routes allow no browser origin), it is a reference: no submit buttons and no Authorize
 * dialog, which would authorize nothing. Either way no call goes to the public validator
 * (validator.swagger.io) that Swagger UI uses by default.
 *
 * The first draw (measured by `npm run bench:docs`): the document comes from this folder (written
 * with the page, no handler run for it), both fetches start from the page's head (preload) while
 * the bundle loads, and Swagger UI's reference resolution is held until the operations are
 * painted. For an OpenAPI 3.1 document that resolution refracts the whole document (ApiDOM), seconds
 * of main-thread work on a busy machine, which used to run between the first render and its paint.
 */
const initializer = `const referenceOnly = () => ({ wrapComponents: { authorizeBtn: () => () => null, authorizeOperationBtn: () => () => null } });
const painted = new Promise((done) => {
  const check = () => (document.querySelector('.opblock') ? requestAnimationFrame(() => setTimeout(done)) : requestAnimationFrame(check));
  requestAnimationFrame(check);
});
const resolveAfterFirstPaint = () => ({
  statePlugins: { spec: { wrapActions: { requestResolvedSubtree: (resolve) => (...path) => painted.then(() => resolve(...path)) } } },
});
const isJson = (answer) => answer.ok && (answer.headers.get('content-type') || '').includes('json');
const documentOfThePage = fetch('${DOCS_PATH}/openapi.json').then((answer) => answer.json());
const sameOriginApi = fetch('/v1/openapi.json').then(isJson).catch(() => false);
Promise.all([documentOfThePage, sameOriginApi]).then(([spec, live]) => {
  window.ui = SwaggerUIBundle({
    spec,
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis],
    plugins: live ? [resolveAfterFirstPaint] : [resolveAfterFirstPaint, referenceOnly],
    layout: 'BaseLayout',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    filter: true,
    supportedSubmitMethods: live ? ['get', 'post', 'put', 'patch', 'delete'] : [],
    validatorUrl: null,
  });
});
`;

/** Written beside, then renamed into place: a stack starting while another writes never reads half a file. */
function writeAtomically(file: string, write: (temporary: string) => void) {
  const temporary = `${file}.${process.pid}.tmp`;
  write(temporary);
  renameSync(temporary, file);
}

/** Writes the page into `dir` (`.build/docs` by default); returns the folder. */
export function writeApiReference(dir = defaultDocsDir): string {
  mkdirSync(dir, { recursive: true });
  const document = buildOpenApiDocument(routes);
  const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  for (const name of SWAGGER_UI_FILES) writeAtomically(join(dir, name), (temporary) => copyFileSync(join(swaggerUiDir, name), temporary));
  const generated: Record<Exclude<DocsFile, (typeof SWAGGER_UI_FILES)[number]>, string> = {
    'index.html': indexHtml(`${document.info.title} API reference`),
    'docs.js': initializer,
    // Compact: the page's first draw waits for it (a tenth of its size again when the CDN compresses it).
    'openapi.json': JSON.stringify(document),
  };
  for (const [name, content] of Object.entries(generated)) writeAtomically(join(dir, name), (temporary) => writeFileSync(temporary, content));
  return dir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`API reference written to ${relative(process.cwd(), writeApiReference())}/`);
}
