import * as v from 'valibot';
import type { GenericSchema } from 'valibot';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, EVENT_DATA } from '#lib/openapi.ts';
import { routeEntries, routes } from '#lib/routes/index.ts';
import { WEBHOOK_EVENT_TYPES } from '#lib/schemas/webhook.ts';

/**
 * Every example of the OpenAPI document (lib/openapi.ts composes them from the schemas and the
 * demo store's values, lib/schemas/examples.ts) is there and parses with the valibot schema the
 * handler itself validates with or answers by: the examples cannot drift from the API.
 */
type Media = { schema?: object; example?: unknown };
type Operation = {
  operationId: string;
  parameters: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};
const document = buildOpenApiDocument(routes) as unknown as {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
};

/** The issues of `example` under `schema`, as `path: message` lines (empty when it parses). */
function problems(schema: GenericSchema, example: unknown): string[] {
  const result = v.safeParse(schema, example);
  return result.success ? [] : result.issues.map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
}

const operations = routeEntries()
  .filter(([, spec]) => spec.method !== 'OPTIONS')
  .map(([name, spec]) => ({ name, spec, operation: document.paths[spec.path]![spec.method.toLowerCase()]! }));

describe('the examples of the OpenAPI document', () => {
  it('give every JSON request body an example that its route validates', () => {
    const wrong: Record<string, unknown> = {};
    for (const { name, spec, operation } of operations) {
      if (!spec.body || spec.body === 'multipart') continue;
      const example = operation.requestBody!.content['application/json']!.example;
      if (example === undefined) wrong[name] = 'no example';
      else if (problems(spec.body, example).length > 0) wrong[name] = problems(spec.body, example);
    }
    expect(wrong).toEqual({});
  });

  it('give every path and query parameter an example its route validates', () => {
    const wrong: Record<string, unknown> = {};
    for (const { name, spec, operation } of operations) {
      for (const part of ['params', 'query'] as const) {
        const schema = spec[part];
        if (!schema) continue;
        const given = operation.parameters.filter((parameter) => parameter.in === (part === 'params' ? 'path' : 'query'));
        const missing = given.filter((parameter) => parameter.example === undefined).map((parameter) => parameter.name);
        if (missing.length > 0) wrong[`${name} ${part}`] = `no example for ${missing.join(', ')}`;
        // As the client sends them: strings in the URL.
        const sent = Object.fromEntries(given.map((parameter) => [parameter.name, String(parameter.example)]));
        if (problems(schema, sent).length > 0) wrong[`${name} ${part}`] = problems(schema, sent);
      }
    }
    expect(wrong).toEqual({});
  });

  it('give every answer an example, the success parsing with the schema the route answers by', () => {
    const wrong: Record<string, unknown> = {};
    for (const { name, spec, operation } of operations) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        for (const media of Object.values(answer.content ?? {})) {
          if (media.example === undefined && Object.keys(media.schema ?? {}).length > 0) wrong[`${name} ${status}`] = 'no example';
        }
      }
      const success = operation.responses[String(spec.status ?? 200)]!;
      if (!spec.response || !success.content) continue;
      const example = success.content['application/json']!.example;
      if (problems(spec.response, example).length > 0) wrong[name] = problems(spec.response, example);
    }
    expect(wrong).toEqual({});
  });

  it('give every error answer an example in its envelope, with a code of the API', () => {
    for (const { name, spec, operation } of operations) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const example = answer.content!['application/json']!.example as { errors?: { message: string; code?: string }[]; error?: string };
        if (spec.errorStyle === 'single') expect(example.error, `${name} ${status}`).toMatch(/^[A-Z_]+$/);
        else expect(example.errors?.[0]?.message, `${name} ${status}`).toEqual(expect.any(String));
      }
    }
  });

  it('give every event under webhooks a body whose data parses with the resource it carries', () => {
    const wrong: Record<string, unknown> = {};
    for (const type of WEBHOOK_EVENT_TYPES) {
      const example = document.webhooks[type]!.post.requestBody!.content['application/json']!.example as { type: string; data: unknown } | undefined;
      if (example === undefined) wrong[type] = 'no example';
      else if (example.type !== type) wrong[type] = `type ${example.type}`;
      else if (problems(EVENT_DATA[type], example.data).length > 0) wrong[type] = problems(EVENT_DATA[type], example.data);
    }
    expect(wrong).toEqual({});
  });

  it('reads as the demo store: the VIP rank, the buyer Steve, real timestamps', () => {
    const tag = document.paths['/v1/app/package/{packageId}']!.get!.responses['200']!.content!['application/json']!.example as Record<string, unknown>;
    expect(tag).toMatchObject({ id: 1, name: 'VIP rank', price: 9.99 });
    const order = document.paths['/v1/app/order/{orderId}']!.get!.responses['200']!.content!['application/json']!.example as Record<string, unknown>;
    expect(order).toMatchObject({ client_identifier: 'Steve', client_email: 'buyer@demo.localhost', created_at: '2026-11-20T14:03:00.000Z' });
    expect(JSON.stringify(document).match(/.{80}\{\{.{40}/g) ?? []).toEqual([]);
  });

  it('would catch an example that no longer fits its schema', () => {
    const tagResource = routes['tag-get'].response;
    const example = document.paths['/v1/app/tag/{tagId}']!.get!.responses['200']!.content!['application/json']!.example as Record<string, unknown>;
    expect(problems(tagResource, example)).toEqual([]);
    expect(problems(tagResource, { ...example, id: '1' })).toEqual([expect.stringMatching(/^id: /)]);
    expect(problems(tagResource, { ...example, created_at: 'yesterday' })).toEqual([expect.stringMatching(/^created_at: /)]);
  });
});
