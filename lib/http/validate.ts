import { getDotPath, safeParse, type BaseIssue, type GenericSchema } from 'valibot';
import { HttpError, type ErrorDetail } from '#lib/errors.ts';

/** Query issues that mean "could not be read at all" (400) rather than "breaks a rule" (422). */
const MALFORMED_QUERY_ISSUES = new Set(['string', 'regex', 'digits', 'decimal', 'object', 'strict_object', 'loose_object']);

function details(issues: readonly BaseIssue<unknown>[]): ErrorDetail[] {
  return issues.map((issue) => {
    const field = getDotPath(issue) ?? undefined;
    return { message: issue.message, code: 'VALIDATION_FAILED', ...(field ? { field } : {}) };
  });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The names a query schema knows: the entries of its object (under any `pipe`). The OpenAPI
 * document lists the same entries as the route's query parameters (test/unit/query-names.test.ts).
 */
export function queryParameterNames(schema: GenericSchema | undefined): ReadonlySet<string> {
  let node = schema as (GenericSchema & { entries?: Record<string, unknown>; pipe?: readonly GenericSchema[] }) | undefined;
  while (node && !node.entries && node.pipe) node = node.pipe[0] as typeof node;
  return new Set(Object.keys(node?.entries ?? {}));
}

/**
 * The names of the query as the client sent them, once per occurrence. API Gateway (and the local
 * server) join a repeated name's values with commas in `queryStringParameters`, so only the raw
 * query string tells `status=A&status=B` from `status=A,B`.
 */
function sentQueryNames(event: { rawQueryString?: string; queryStringParameters?: Record<string, string | undefined> }): string[] {
  if (event.rawQueryString === undefined) return Object.keys(event.queryStringParameters ?? {});
  return [...new URLSearchParams(event.rawQueryString).keys()];
}

/**
 * Query strings are as strict as bodies: a name the route's query schema does not know is a
 * 400 naming it (a route without a query schema knows none), and so is a name sent twice
 * (every parameter takes one value). Without this, `GET /v1/app/order?email=x` answered every
 * order of the store as if the filter had been applied. A strict query schema's own message
 * (the identify route explains why it takes none) is kept.
 */
export function checkQueryNames(schema: GenericSchema | undefined, event: { rawQueryString?: string; queryStringParameters?: Record<string, string | undefined> }): void {
  const known = queryParameterNames(schema);
  const seen = new Set<string>();
  const ownMessage = (schema as { type?: string; message?: unknown } | undefined)?.type === 'strict_object' ? (schema as { message?: unknown }).message : undefined;
  for (const name of sentQueryNames(event)) {
    if (!known.has(name)) {
      const message =
        typeof ownMessage === 'string'
          ? ownMessage
          : `Unknown query parameter "${name}"${known.size > 0 ? `; this endpoint takes ${[...known].join(', ')}` : '; this endpoint takes none'}`;
      throw new HttpError(400, { message, code: 'INVALID_QUERY', field: name });
    }
    if (seen.has(name)) throw new HttpError(400, { message: `Query parameter "${name}" is repeated; send it once`, code: 'INVALID_QUERY', field: name });
    seen.add(name);
  }
}

/**
 * Path ids that do not parse can name no resource: 404, like a missing one.
 * Malformed query: 400. A body that is not an object: 400. A body that breaks a rule: 422.
 */
export function parsePart(part: 'params' | 'query' | 'body', schema: GenericSchema, value: unknown): unknown {
  if (part === 'body' && !isPlainObject(value)) {
    throw new HttpError(400, { message: 'Request body must be a JSON object', code: 'INVALID_BODY' });
  }
  const result = safeParse(schema, value ?? {});
  if (result.success) return result.output;
  if (part === 'params') throw new HttpError(404, { message: 'Resource not found', code: 'NOT_FOUND' });
  if (part === 'query') {
    const malformed = result.issues.some((issue) => MALFORMED_QUERY_ISSUES.has(issue.type));
    throw new HttpError(
      malformed ? 400 : 422,
      details(result.issues).map((d) => ({ ...d, code: malformed ? 'INVALID_QUERY' : d.code })),
    );
  }
  throw new HttpError(422, details(result.issues));
}
