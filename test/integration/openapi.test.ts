import { validate, compileErrors } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
import { operationIdOf } from '#lib/openapi.ts';
import { WEBHOOK_EVENT_TYPES } from '#lib/schemas/webhook.ts';
import { call } from '../support/client.ts';
import { dereferenced } from '../support/openapi.ts';

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
    const doc = dereferenced((await call('GET', '/v1/openapi.json')).body);
    for (const [name, spec] of routeEntries()) {
      if (spec.method === 'OPTIONS') {
        expect(doc.paths[spec.path]?.options, name).toBeUndefined();
        continue;
      }
      const operation = doc.paths[spec.path]?.[spec.method.toLowerCase()];
      expect(operation, `${spec.method} ${spec.path}`).toBeDefined();
      expect(operation.operationId).toBe(operationIdOf(name));
      expect(operation.operationId).toMatch(/^[a-z][A-Za-z0-9]*$/);
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
    const doc = dereferenced((await call('GET', '/v1/openapi.json')).body);
    const schema = doc.paths['/v1/app/tag'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'color']));
    expect(schema.properties.name.maxLength).toBe(50);
  });

  it('names its resources, bodies and errors as components ($ref), with ids and counts as integers', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body;
    const tag = doc.paths['/v1/app/tag/{tagId}'].get;
    expect(tag.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TagResource' });
    expect(doc.paths['/v1/app/tag'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TagCreateBody' });
    expect(doc.paths['/v1/app/tag'].get.responses['200'].content['application/json'].schema.properties.data.items).toEqual({ $ref: '#/components/schemas/TagResource' });
    expect(tag.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    const schemas = doc.components.schemas;
    expect(schemas.TagResource.properties.id.type).toBe('integer');
    expect(schemas.OrderResource.properties.store_id.type).toBe('integer');
    expect(schemas.PageMeta.properties.total.type).toBe('integer');
    // Money stays a number, an order's total too (only a page's `total` counts).
    expect(schemas.PackageResource.properties.price.type).toBe('number');
    expect(schemas.OrderResource.properties.total.type).toBe('number');
    expect(schemas.QuoteLine.properties.total.type).toBe('number');
    // Every id a component carries is an integer.
    for (const [name, schema] of Object.entries(schemas as Record<string, { properties?: Record<string, { type?: unknown }> }>)) {
      for (const [property, value] of Object.entries(schema.properties ?? {}))
        if (/(^id|_id)$/.test(property) && value.type === 'number') throw new Error(`${name}.${property} is a number`);
    }
  });

  it('types query values as what they are, and x-store-domain as a header parameter of the routes that take it', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body;
    const storefront = doc.paths['/v1/webstore/package'].get;
    const parameter = (operation: { parameters: { name: string }[] }, name: string) => operation.parameters.find((p) => p.name === name) as any;
    expect(parameter(storefront, 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 20 });
    expect(parameter(doc.paths['/v1/app/package'].get, 'page').schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(parameter(storefront, 'x-store-domain')).toMatchObject({ in: 'header', required: true, schema: { type: 'string' } });
    expect(parameter(doc.paths['/v1/webstore/checkout'].post, 'x-store-domain')).toMatchObject({ in: 'header', required: true });
    expect(parameter(doc.paths['/v1/app/package'].get, 'x-store-domain')).toBeUndefined();
    expect(doc.components.securitySchemes.storeDomain).toBeUndefined();
    expect(JSON.stringify(doc.paths)).not.toContain('storeDomain');
  });

  it('carries request examples, and the events under webhooks (the payment ones with the Payment as data)', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body;
    expect(doc.paths['/v1/app/tag'].post.requestBody.content['application/json'].example).toEqual({ name: 'Sale', color: '#ef4444' });
    expect(doc.paths['/v1/webstore/checkout'].post.requestBody.content['application/json'].example).toMatchObject({ gateway: 'TEST', terms: true });
    expect(JSON.stringify(doc)).not.toContain('{{');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    const approved = doc.webhooks['order.approved'].post;
    expect(approved.operationId).toBe('onOrderApproved');
    const body = approved.requestBody.content['application/json'].schema;
    expect(body.properties.type).toEqual({ const: 'order.approved' });
    expect(body.properties.data).toEqual({ $ref: '#/components/schemas/OrderResource' });
    expect(doc.webhooks['chat.message_created'].post.requestBody.content['application/json'].schema.properties.data.properties.order_id.type).toBe('integer');
    for (const type of ['payment.created', 'payment.failed', 'payment.expired', 'payment.attention']) {
      const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(schema.properties.type).toEqual({ const: type });
      expect(schema.properties.data).toEqual({ $ref: '#/components/schemas/PaymentResource' });
    }
  });
});
