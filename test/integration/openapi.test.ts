import { validate, compileErrors } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { call } from '../support/client.ts';

describe('GET /v1/openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document without credentials', async () => {
    const res = await call('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(res.body));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('documents every route of the table (CORS preflights aside), with its body schema and parameters', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body;
    for (const [name, spec] of routeEntries()) {
      if (spec.method === 'OPTIONS') {
        expect(doc.paths[spec.path]?.options, name).toBeUndefined();
        continue;
      }
      const operation = doc.paths[spec.path]?.[spec.method.toLowerCase()];
      expect(operation, `${spec.method} ${spec.path}`).toBeDefined();
      expect(operation.operationId).toBe(name);
      if (spec.body && spec.body !== 'multipart') expect(operation.requestBody.content['application/json'].schema.type).toBe('object');
      for (const [, param] of spec.path.matchAll(/\{([^}]+)\}/g)) {
        expect(operation.parameters.some((p: { name: string; in: string }) => p.name === param && p.in === 'path')).toBe(true);
      }
      // An unknown store domain is a 404; anything that reads the table can answer 503.
      if (spec.credential !== 'operator' && spec.credential !== 'apiKey' && spec.credential !== 'public') expect(operation.responses['404'], name).toBeDefined();
      expect(operation.responses['503'] !== undefined, name).toBe(spec.access !== 'none');
    }
  });

  it('carries the tag rules: required name and color, name at most 50 characters', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body;
    const schema = doc.paths['/v1/app/tag'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'color']));
    expect(schema.properties.name.maxLength).toBe(50);
  });
});
