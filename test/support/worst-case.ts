import * as v from 'valibot';
import { jsonBytes } from '#lib/schemas/common.ts';

/**
 * The largest body a valibot schema accepts, built from the schema itself: every optional field
 * present, every nullable field non-null, every array at its maximum length, every string at its
 * maximum length (characters and bytes) in the given character, every record at its maximum
 * number of entries. Strings whose format a regex or check fixes are taken from `FORMATTED`
 * (the longest sample the schema accepts). The caller checks the result with `v.parse`: a body
 * this builds and the schema refuses is a bug of this builder, never silently skipped.
 *
 * `char` is the filling: '€' (3 bytes of UTF-8 per UTF-16 unit, the most bytes a character limit
 * lets through), '😀' (4 bytes of UTF-8, 2 units) or '\u0001' (1 byte stored, 6 as JSON: the most
 * a response or anything kept as JSON grows).
 */
export type Filling = '€' | '😀' | '\u0001';
export const FILLINGS: readonly Filling[] = ['€', '😀', '\u0001'];

type AnySchema = v.GenericSchema & { type: string; pipe?: readonly { type: string; requirement?: unknown }[] } & Record<string, any>;

/** Longest-first samples for strings whose shape a regex, e-mail, URL or check fixes. */
const FORMATTED = [
  'a'.repeat(240) + '@example.com',
  'https://' + 'a'.repeat(2030) + '.com',
  // A Stripe secret key (sk_/rk_ and the mode) of the 512 characters a secret may have.
  'sk_live_' + 'a'.repeat(504),
  'http://' + 'a'.repeat(63) + '.' + 'b'.repeat(63) + '.' + 'c'.repeat(63) + '.example.com:65535',
  'a'.repeat(63) + '.' + 'b'.repeat(63) + '.' + 'c'.repeat(63) + '.' + 'd'.repeat(57) + '.com',
  '9999-12-31T23:59:59.999999999+14:00',
  '12.345.678/0001-90',
  '123.456.789-01',
  '#aabbccdd',
  'lightgoldenrodyellow',
  '#aabbcc',
  '123456',
  'BRL',
  'a',
];

type Action = { type: string; kind: string; requirement?: unknown; metadata?: Record<string, unknown> };
/** The actions of a schema's pipe, nested pipes flattened. */
function actions(schema: AnySchema): Action[] {
  const pipe = (schema.pipe ?? []) as unknown as Action[];
  const inner = pipe[0] as unknown as AnySchema | undefined;
  return [...pipe.slice(1), ...(inner?.pipe ? actions(inner) : [])];
}
const requirement = (schema: AnySchema, type: string) => actions(schema).find((action) => action.type === type)?.requirement as number | undefined;
/** The bound of `maxBytes` (lib/schemas/common.ts), read where the OpenAPI document reads it. */
const byteBound = (schema: AnySchema) =>
  actions(schema).find((action) => action.type === 'metadata' && action.metadata?.['x-maxBytes'] !== undefined)?.metadata?.['x-maxBytes'] as number | undefined;
const accepts = (schema: AnySchema, value: unknown) => v.safeParse(schema, value).success;

/** The most-bytes string the schema accepts in `char` (units as valibot counts them: UTF-16). */
function worstString(schema: AnySchema, char: Filling, index: number): string {
  const maxUnits = requirement(schema, 'max_length') ?? 100_000;
  const maxBytes = requirement(schema, 'max_bytes') ?? Infinity;
  // A distinct first character per array index, so that lists whose names must differ stay valid.
  const prefix = index === 0 ? '' : String(index);
  const charUnits = char.length;
  const charBytes = Buffer.byteLength(char);
  const count = Math.max(0, Math.min(Math.floor((maxUnits - prefix.length) / charUnits), Math.floor((maxBytes - prefix.length) / charBytes)));
  // Free text: a visible character at each end, so trimming takes nothing off.
  const free = count >= 2 ? `${prefix}x${char.repeat(count - 2)}x` : `${prefix}${'x'.repeat(count)}`;
  if (accepts(schema, free)) return free;
  const ascii = `${prefix}${'a'.repeat(Math.min(maxUnits, maxBytes) - prefix.length)}`;
  if (accepts(schema, ascii)) return ascii;
  const sample = FORMATTED.find((candidate) => accepts(schema, candidate));
  if (sample !== undefined) return sample;
  throw new Error(
    `no worst-case sample for a string schema with ${actions(schema)
      .map((action) => action.type)
      .join(', ')}`,
  );
}

function worstNumber(schema: AnySchema, index: number): number {
  const max = requirement(schema, 'max_value');
  const min = requirement(schema, 'min_value') ?? 1;
  // Distinct values (ids must not repeat), as long as the number types take.
  const candidates = [max === undefined ? 10 ** 12 + index : max - index, min + index, 1 + index];
  return candidates.find((candidate) => accepts(schema, candidate)) ?? candidates[0]!;
}

/** `count` elements, or as many as fit in `bound` bytes of JSON when a `maxBytes` bounds the whole. */
function fillWithin<T>(bound: number | undefined, count: number, element: (index: number) => T): T[] {
  const list: T[] = [];
  for (let i = 0; i < count; i++) {
    const next = element(i);
    if (bound !== undefined && jsonBytes([...list, next]) > bound) break;
    list.push(next);
  }
  return list;
}

export function worstValue(schema: AnySchema, char: Filling, index = 0): unknown {
  switch (schema.type) {
    case 'optional':
    case 'nullable':
    case 'nullish':
    case 'exact_optional':
      return worstValue(schema.wrapped, char, index);
    case 'string':
      return worstString(schema, char, index);
    case 'number':
      return worstNumber(schema, index);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'literal':
      return schema.literal;
    case 'picklist':
      return [...(schema.options as string[])].sort((a, b) => b.length - a.length)[0];
    case 'object':
    case 'strict_object':
    case 'loose_object':
      return Object.fromEntries(Object.entries(schema.entries as Record<string, AnySchema>).map(([key, entry]) => [key, worstValue(entry, char, index)]));
    case 'array': {
      const length = requirement(schema, 'max_length');
      if (length === undefined) throw new Error('an array without a maximum length has no worst case');
      return fillWithin(byteBound(schema), length, (i) => worstValue(schema.item, char, i));
    }
    case 'record': {
      const entries = requirement(schema, 'max_entries');
      if (entries === undefined) throw new Error('a record without a maximum number of entries has no worst case');
      return Object.fromEntries(fillWithin(byteBound(schema), entries, (i) => [worstValue(schema.key, char, i), worstValue(schema.value, char, i)]));
    }
    case 'union': {
      const options = (schema.options as AnySchema[]).map((option) => worstValue(option, char, index));
      return options.sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0];
    }
    default:
      throw new Error(`no worst case for schema type ${schema.type}`);
  }
}

/** The largest accepted body of `schema` in `char`, and its parsed output (what the handler gets). */
export function worstBody(schema: v.GenericSchema, char: Filling, adjust?: (body: any, char: Filling) => void): { body: unknown; output: unknown } {
  const body = worstValue(schema as AnySchema, char);
  // Fields whose format depends on another field (a PIX key on its type) are set by the caller.
  adjust?.(body, char);
  const result = v.safeParse(schema, body);
  if (!result.success) {
    throw new Error(`the worst-case body is refused: ${result.issues.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`).join('; ')}`);
  }
  return { body, output: result.output };
}
