import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { checkQueryNames, queryParameterNames } from '#lib/http/validate.ts';
import { buildOpenApiDocument } from '#lib/openapi.ts';
import { routeEntries, routes } from '#lib/routes/index.ts';
import { statusOf } from '../support/http-error.ts';

/**
 * The query names a route takes come from its query schema alone: the same schema the handler
 * stack checks names against (lib/http/validate.ts) and the OpenAPI document lists. Driven by the
 * route table, so that a new route is covered without a new test.
 */
const document = buildOpenApiDocument(routes) as { paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; responses: Record<string, unknown> }>> };

describe('the query parameters of every route', () => {
  for (const [name, spec] of routeEntries()) {
    if (spec.method === 'OPTIONS') continue;
    const operation = document.paths[spec.path]![spec.method.toLowerCase()]!;

    it(`${name}: the OpenAPI document lists exactly the names the handler accepts, a 400 for the others and a 422 for a value out of range`, () => {
      const documented = operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
      expect(new Set(documented)).toEqual(queryParameterNames(spec.query));
      expect(operation.responses['400']).toBeDefined();
      // A well-formed value out of range (limit=101) is a 422, as for a body.
      if (spec.query) expect(operation.responses['422']).toBeDefined();
    });
  }

  it('finds the names under a pipe (the order list checks from <= to on the whole object)', () => {
    expect([...queryParameterNames(routes['order-list'].query)]).toEqual([
      'page',
      'limit',
      'page_cursor',
      'page_size',
      'status',
      'from',
      'to',
      'package',
      'email',
      'client_identifier',
    ]);
    expect(queryParameterNames(undefined).size).toBe(0);
  });
});

describe('checkQueryNames', () => {
  const schema = v.object({ status: v.optional(v.string()), page: v.optional(v.string()) });
  const raw = (rawQueryString: string) => ({ rawQueryString });

  it('passes the names the schema takes, an empty query, and a comma inside one value', () => {
    expect(statusOf(() => checkQueryNames(schema, raw('status=A&page=2')))).toBeUndefined();
    expect(statusOf(() => checkQueryNames(schema, raw('')))).toBeUndefined();
    expect(statusOf(() => checkQueryNames(undefined, raw('')))).toBeUndefined();
    expect(statusOf(() => checkQueryNames(schema, raw('status=A%2CB')))).toBeUndefined();
    // A percent-encoded name is the name it decodes to.
    expect(statusOf(() => checkQueryNames(schema, raw('st%61tus=A')))).toBeUndefined();
  });

  it('refuses a name the schema does not take with 400 INVALID_QUERY naming it', () => {
    expect(statusOf(() => checkQueryNames(schema, raw('status=A&email=x')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: 'email' });
    expect(statusOf(() => checkQueryNames(schema, raw('Status=A')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: 'Status' });
    expect(statusOf(() => checkQueryNames(schema, raw('=x')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: '' });
    expect(statusOf(() => checkQueryNames(schema, raw('status')))).toBeUndefined();
  });

  it('refuses every name on a route without a query schema', () => {
    expect(statusOf(() => checkQueryNames(undefined, raw('page=1')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: 'page' });
  });

  it('refuses a name sent twice, which API Gateway would join into one comma-separated value', () => {
    expect(statusOf(() => checkQueryNames(schema, raw('status=A&status=B')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: 'status' });
    expect(statusOf(() => checkQueryNames(schema, raw('status=A&page=1&status=A')))).toEqual({ status: 400, code: 'INVALID_QUERY', field: 'status' });
  });

  it('reads the parsed parameters when an event carries no raw query string', () => {
    expect(statusOf(() => checkQueryNames(schema, { queryStringParameters: { status: 'A', email: 'x' } }))).toMatchObject({ status: 400, field: 'email' });
    expect(statusOf(() => checkQueryNames(schema, {}))).toBeUndefined();
  });

  it("keeps a strict query schema's own message", () => {
    const strict = v.strictObject({}, 'this endpoint takes its input in the body');
    try {
      checkQueryNames(strict, raw('handoff=abc'));
      expect.unreachable();
    } catch (error) {
      expect((error as { details: { message: string; field: string }[] }).details[0]).toMatchObject({ message: 'this endpoint takes its input in the body', field: 'handoff' });
    }
  });
});
