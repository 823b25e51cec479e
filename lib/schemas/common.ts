import * as v from 'valibot';
import type { ENTITY } from '#lib/schemas/entity.ts';

/** A numeric id in a path. Anything else names no resource (404). */
export const idString = v.pipe(v.string(), v.regex(/^[1-9]\d{0,14}$/), v.transform(Number));

export const idParams = <const K extends string>(name: K) => v.object({ [name]: idString } as { [P in K]: typeof idString });

/** A positive integer carried in a query string, at most `max`. */
export const queryInt = (name: string, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.string(),
    v.digits(`${name} must be a positive integer`),
    v.transform(Number),
    v.minValue(1, `${name} must be at least 1`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/**
 * Page mode query: `page` from 1 (default 1), `limit` per endpoint (default 20, max 100).
 * `fixedLimit` endpoints (the affiliate statement) take no `limit`.
 */
export function pageQueryEntries(options: { defaultLimit?: number; maxLimit?: number } = {}) {
  const { defaultLimit = 20, maxLimit = 100 } = options;
  return {
    page: v.optional(queryInt('page'), '1'),
    limit: v.optional(queryInt('limit', maxLimit), String(defaultLimit)),
  };
}

export const pageQuery = v.object(pageQueryEntries());

/**
 * Date.parse rolls 2026-02-30 over to March 2nd and 9999-12-31T23:00-05:00 into year 10000, whose
 * ISO form (`+010000-...`) sorts wrongly in range keys: both are refused instead.
 */
function isCalendarTimestamp(value: string): boolean {
  const [year, month, day, hour, minute, second = 0] = value.split(/[-T:.Z+]/).map(Number) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  const validDate = date.getUTCFullYear() === year && date.getUTCMonth() === month! - 1 && date.getUTCDate() === day;
  const validTime = hour! <= 23 && minute! <= 59 && second <= 59;
  const time = Date.parse(value);
  return validDate && validTime && !Number.isNaN(time) && /^\d{4}-/.test(new Date(time).toISOString()) && year! >= 1;
}

/** ISO 8601 timestamp with an offset (`Z` or `+02:00`), returned normalised to UTC. */
export const timestampInput = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/, 'Expected an ISO 8601 timestamp with a UTC offset'),
  v.check(isCalendarTimestamp, 'Expected a valid date and time between years 0001 and 9999'),
  v.transform((value) => new Date(value).toISOString()),
);

export const timestamp = v.pipe(v.string(), v.isoTimestamp());

/** A trimmed, non-empty string of at most `max` characters. */
export const text = (name: string, max: number) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.trim(),
    v.minLength(1, `${name} is required`),
    v.maxLength(max, `${name} must be at most ${max} characters`),
    // A lone UTF-16 surrogate is not text: it cannot be encoded as UTF-8 in a JSON response.
    v.check((value) => !LONE_SURROGATE.test(value), `${name} must be valid Unicode text`),
  );

/** The UTF-8 bytes of a value's JSON text: at least what DynamoDB stores for it, and what a response repeating it carries. */
export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/**
 * A bound in bytes where a bound in characters is not enough: a character can take 3 bytes of
 * UTF-8 (4 for two UTF-16 units), a control character 6 bytes of JSON, so `COMMANDS_MAX` lists of
 * `COMMAND_MAX` characters that fit as ASCII would not fit a 400 KB item in other scripts.
 * Counted as the UTF-8 bytes of the value's JSON (`jsonBytes`), which bounds both the stored item
 * and the answer kept for an Idempotency-Key. Shown in the OpenAPI document as `x-maxBytes`; the
 * 422 names the field it is set on.
 */
export const maxBytes = <S extends v.GenericSchema>(name: string, max: number, schema: S) =>
  v.pipe(
    schema,
    v.check((value: v.InferOutput<S>) => jsonBytes(value) <= max, `${name} must be at most ${max} bytes as JSON (UTF-8)`),
    v.metadata({ 'x-maxBytes': max }),
  );

export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const pageMeta = v.object({
  total: v.number(),
  per_page: v.number(),
  current_page: v.number(),
  last_page: v.number(),
  first_page: v.number(),
  first_page_url: v.string(),
  last_page_url: v.string(),
  next_page_url: v.nullable(v.string()),
  previous_page_url: v.nullable(v.string()),
});

export const pageOf = <S extends v.GenericSchema>(item: S) => v.object({ meta: pageMeta, data: v.array(item) });

/** A PATCH body: at least one field, so that an empty patch is a visible mistake. */
export function patchBody<const S extends v.GenericSchema<unknown, Record<string, unknown>>>(fields: S) {
  // Checked on the object's own output type, so the body keeps its field types (a check typed on
  // Record<string, unknown> would widen them).
  return v.pipe(
    fields,
    v.check((input: v.InferOutput<S>) => Object.values(input).some((value) => value !== undefined), 'Send at least one field to change'),
  );
}

/**
 * The range of every amount we store (prices, tier minimums and rewards, option prices, coupon
 * values, affiliate settings). JSON can carry 1e999 (Infinity), 1e200 or 1e-200, which a
 * DynamoDB number (1e-130 to 9.99e125) refuses at write time: without this they were a 500,
 * not a 422.
 * Whole numbers (ids, counts) are bounded by `v.safeInteger` instead.
 */
export const AMOUNT_MAX = 1_000_000_000;
export const AMOUNT_MIN_POSITIVE = 0.000001;
export const storableAmount = <S extends v.GenericSchema<unknown, number>>(name: string, schema: S) =>
  v.pipe(
    schema,
    v.maxValue(AMOUNT_MAX, `${name} must be at most ${AMOUNT_MAX}`),
    v.check((value: number) => value === 0 || Math.abs(value) >= AMOUNT_MIN_POSITIVE, `${name} must be 0 or at least ${AMOUNT_MIN_POSITIVE}`),
  );

/** A catalog item one write refers to (a promo target, a variable's `applies_to`): counted by lib/db/references.ts. */
export type ReferableKind = typeof ENTITY.PACKAGE | typeof ENTITY.CATEGORY;

export interface Reference {
  kind: ReferableKind;
  id: number;
  /** Input path that named it (`targets.2.id`), for the 422. */
  field: string;
}

/**
 * The body a `multipart` route's handler receives: its one part named `file`, read by the
 * handler stack (lib/http/multipart.ts). `contentType` is what the client declared, which
 * decides nothing: the rules of each upload judge the name and the bytes.
 */
export interface UploadedFile {
  filename: string;
  bytes: Buffer;
  contentType?: string;
}
export interface MultipartFileBody {
  file: UploadedFile;
}
