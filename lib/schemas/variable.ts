import * as v from 'valibot';
import { patchBody, storableAmount, text, timestamp } from '#lib/schemas/common.ts';

export const VARIABLE_TYPES = ['SELECT', 'NUMBER', 'TEXT', 'GAME'] as const;
export const VARIABLE_NAME_MAX = 50;
export const DESCRIPTION_MAX = 500;
export const REGEX_MAX = 500;
export const OPTIONS_MAX = 100;
export const OPTION_NAME_MAX = 100;
export const OPTION_VALUE_MAX = 255;

/**
 * A variable's write is one TransactWrite (at most 100 items): the variable, the two writes that
 * move its name sentinel on a rename, and one count per package whose reference changes, which
 * is up to 2 per listed package when a PATCH swaps the whole list for another.
 */
export const APPLIES_TO_MAX = Math.floor((100 - 3) / 2);

const variableName = v.pipe(
  v.string('name must be a string'),
  v.trim(),
  v.minLength(1, 'name is required'),
  v.maxLength(VARIABLE_NAME_MAX, `name must be at most ${VARIABLE_NAME_MAX} characters`),
  v.regex(/^[A-Za-z0-9_-]+$/, 'name may contain only letters, digits, - and _'),
);

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

const regex = v.nullable(
  v.pipe(
    v.string('regex must be a string or null'),
    v.minLength(1, 'regex must not be empty; send null for no validation'),
    v.maxLength(REGEX_MAX, `regex must be at most ${REGEX_MAX} characters`),
    v.check(compiles, 'regex must be a valid regular expression'),
  ),
);

const appliesTo = v.nullable(
  v.pipe(
    v.array(
      v.pipe(v.number('applies_to entries must be package ids'), v.safeInteger('applies_to entries must be package ids'), v.minValue(1, 'applies_to entries must be package ids')),
      'applies_to must be an array of package ids or null',
    ),
    v.maxLength(APPLIES_TO_MAX, `applies_to may name at most ${APPLIES_TO_MAX} packages`),
    v.check((ids) => new Set(ids).size === ids.length, 'applies_to must not repeat a package id'),
  ),
);

const option = v.strictObject({
  name: text('option name', OPTION_NAME_MAX),
  value: text('option value', OPTION_VALUE_MAX),
  price: v.optional(v.nullable(storableAmount('option price', v.pipe(v.number('option price must be a number or null'), v.minValue(0, 'option price must be at least 0'))))),
});

/** Options are matched by name, so a name may appear once per submission. */
const options = v.pipe(
  v.array(option, 'options must be an array of {name, value, price}'),
  v.minLength(2, 'options must hold at least 2 options (a SELECT variable offers a choice)'),
  v.maxLength(OPTIONS_MAX, `options may hold at most ${OPTIONS_MAX} options`),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    dataset.value.forEach((item, index) => {
      if (seen.has(item.name)) {
        addIssue({
          message: `option name "${item.name}" appears more than once`,
          path: [
            { type: 'array', origin: 'value', input: dataset.value, key: index, value: item },
            { type: 'object', origin: 'value', input: item, key: 'name', value: item.name },
          ],
        });
      }
      seen.add(item.name);
    });
  }),
);

/**
 * Whether options fit the type (SELECT needs them, other types take none) depends on the
 * stored variable for a PATCH, and whether `regex` can run on the linear-time engine on how
 * V8 was started, so both are checked by the variable rules (lib/domain/variable.ts).
 */
export const variableCreateBody = v.strictObject({
  name: variableName,
  type: v.picklist(VARIABLE_TYPES, 'type must be SELECT, NUMBER, TEXT or GAME'),
  description: text('description', DESCRIPTION_MAX),
  required: v.optional(v.boolean('required must be a boolean')),
  regex: v.optional(regex),
  applies_to: v.optional(appliesTo),
  options: v.optional(options),
});

const variablePatchFields = v.partial(variableCreateBody);
export const variablePatchBody = patchBody(variablePatchFields);

export const variableOption = v.object({
  id: v.number(),
  name: v.string(),
  value: v.string(),
  price: v.nullable(v.number()),
});

export const variableResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  description: v.string(),
  type: v.picklist(VARIABLE_TYPES),
  required: v.boolean(),
  regex: v.nullable(v.string()),
  applies_to: v.nullable(v.array(v.number())),
  bracket_display: v.string(),
  display: v.string(),
  created_at: timestamp,
  updated_at: timestamp,
  /** Only for SELECT: the active options; deactivated ones stay stored but are not listed. */
  options: v.optional(v.array(variableOption)),
});

export type VariableCreate = v.InferOutput<typeof variableCreateBody>;
/** From the object schema: the at-least-one-field check would widen the type to a plain record. */
export type VariablePatch = v.InferOutput<typeof variablePatchBody>;
export type VariableOptionInput = NonNullable<VariableCreate['options']>[number];
export type VariableType = (typeof VARIABLE_TYPES)[number];
export type Variable = v.InferOutput<typeof variableResource>;
/** An option as stored: deactivated options stay (orders may name them) with `active: false`. */
export type StoredOption = v.InferOutput<typeof variableOption> & { active: boolean };
