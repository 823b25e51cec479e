import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { defaultDocsDir } from '#infra/docs.ts';
import { DOCS_CONTENT_SECURITY_POLICY, DOCS_FILES } from '#infra/docs-headers.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routes } from '#lib/routes/index.ts';
import { call } from '../support/client.ts';

/** `/docs` on the local stack: the files of .build/docs (written at start), each with its type and the page's CSP, and nothing else. */
describe('the API reference at /docs', () => {
  it('serves the page at /docs and /docs/, and every file of it with its content type, nosniff and the CSP', async () => {
    for (const path of ['/docs', '/docs/']) {
      const page = await call('GET', path);
      expect(page.status, path).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toBe(readFileSync(join(defaultDocsDir, 'index.html'), 'utf8'));
    }
    for (const [name, contentType] of Object.entries(DOCS_FILES)) {
      const file = await call('GET', `/docs/${name}`);
      expect(file.status, name).toBe(200);
      expect(file.headers['content-type'], name).toBe(contentType);
      expect(file.headers['content-security-policy'], name).toBe(DOCS_CONTENT_SECURITY_POLICY);
      expect(file.headers['x-content-type-options'], name).toBe('nosniff');
      if (name !== 'favicon-32x32.png') expect(file.text.length, name).toBe(readFileSync(join(defaultDocsDir, name), 'utf8').length);
    }
  });

  it('answers HEAD like GET for every file of the page: the same status, type and length, no body', async () => {
    for (const path of ['/docs', '/docs/', ...Object.keys(DOCS_FILES).map((name) => `/docs/${name}`)]) {
      const [head, get] = await Promise.all([fetch(`${inject('apiUrl')}${path}`, { method: 'HEAD' }), fetch(`${inject('apiUrl')}${path}`)]);
      const got = Buffer.from(await get.arrayBuffer());
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length'), path).toBe(String(got.length));
      expect((await head.arrayBuffer()).byteLength, path).toBe(0);
    }
    expect((await fetch(`${inject('apiUrl')}/docs/nope.js`, { method: 'HEAD' })).status).toBe(404);
  });

  it('holds the OpenAPI document of this route table', async () => {
    const document = await call('GET', '/docs/openapi.json');
    expect(document.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(routes))));
  });

  it('serves the favicon byte for byte (the one binary file)', async () => {
    const favicon = await fetch(`${inject('apiUrl')}/docs/favicon-32x32.png`);
    expect(favicon.status).toBe(200);
    expect(Buffer.from(await favicon.arrayBuffer()).equals(readFileSync(join(defaultDocsDir, 'favicon-32x32.png')))).toBe(true);
  });

  it('answers 404 for anything else under /docs: other files of swagger-ui-dist, paths out of the folder, other methods, the store domains', async () => {
    for (const path of [
      '/docs/index.js',
      '/docs/swagger-ui-standalone-preset.js',
      '/docs/../package.json',
      '/docs/%2e%2e/package.json',
      '/docs/openapi.json/x',
      '/docsx',
      '/docs//index.html',
    ]) {
      const answer = await call('GET', path);
      expect(answer.status, path).toBe(404);
      expect(answer.body.errors[0].code, path).toBe('ROUTE_NOT_FOUND');
    }
    expect((await call('POST', '/docs', { json: {} })).status).toBe(404);
    expect((await call('GET', '/docs', { host: 'demo.localhost' })).status).toBe(404);
  });
});
