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

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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
    throw new HttpError(malformed ? 400 : 422, details(result.issues).map((d) => ({ ...d, code: malformed ? 'INVALID_QUERY' : d.code })));
  }
  throw new HttpError(422, details(result.issues));
}
