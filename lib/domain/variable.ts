import { setFlagsFromString } from 'node:v8';
import { addAmounts } from '#lib/domain/pricing.ts';
import { unprocessable, type ErrorDetail } from '#lib/errors.ts';
import { jsonBytes } from '#lib/schemas/common.ts';
import type { OrderVariable } from '#lib/schemas/order.ts';
import type { StoredOption, Variable, VariableOptionInput, VariableType } from '#lib/schemas/variable.ts';

/**
 * The rules of checkout variables: their options after a write, whether an operator's `regex`
 * may be stored, and the values an order gives them.
 *
 * An operator's `regex` runs on buyer input, and on V8's usual (backtracking) engine a pattern
 * such as `(?=a)(a|a)+` takes seconds on 27 characters and grows exponentially: one order could
 * hold a Lambda for its whole timeout. Every such pattern therefore runs on V8's linear-time
 * engine (the `l` flag), and a pattern that engine cannot run (backreferences, lookarounds,
 * large counted repetitions) is refused when the variable is written. There is no fallback.
 *
 * The engine is behind a V8 flag. It is set here, at module init, because this module is the
 * only one that compiles a pattern with `l` and every function that does (Lambda handlers, the
 * local stack, tests) loads it first; it sets a process flag and does no I/O, so it stays a pure
 * rule. The check right after it makes a runtime without the engine fail at start-up, loudly,
 * instead of refusing every variable with a regex (or, worse, running buyer input unguarded).
 */
setFlagsFromString('--enable-experimental-regexp-engine');
try {
  // biome-ignore lint/complexity/useRegexLiterals: a literal with the l flag would fail to parse, not throw here.
  new RegExp('a', 'l');
} catch (cause) {
  throw new Error('V8 linear-time regexp engine unavailable (the `l` flag): variable regexes cannot run safely on buyer input', { cause });
}

/**
 * Deactivated options accumulate; these keep the variable item below DynamoDB's 400 KB: a count
 * (500 options of ASCII are about 210 KB as JSON) and, for text of 3-byte characters that would
 * not fit (500 x 1.1 KB), the bytes of all the stored options as JSON.
 */
export const STORED_OPTIONS_MAX = 500;
export const STORED_OPTIONS_BYTES_MAX = 256 * 1024;

/**
 * The stored options after a write. `submitted` undefined keeps them as they are (a PATCH
 * without `options`). Submitted options come first, in submission order (the order buyers see);
 * the deactivated ones follow.
 */
export function resolveOptions(
  stored: readonly StoredOption[],
  submitted: readonly VariableOptionInput[] | undefined,
  type: VariableType,
  nextOptionId: number,
): { options: StoredOption[]; nextOptionId: number } {
  if (type !== 'SELECT') {
    if (submitted) throw unprocessable('options are only for SELECT variables', 'options');
    return { options: stored.map((option) => ({ ...option, active: false })), nextOptionId };
  }
  if (!submitted) {
    if (stored.filter((option) => option.active).length < 2) {
      throw unprocessable('A SELECT variable needs options: send at least 2', 'options');
    }
    return { options: [...stored], nextOptionId };
  }
  const byName = new Map(stored.map((option) => [option.name, option]));
  let next = nextOptionId;
  const active = submitted.map((input) => ({
    id: byName.get(input.name)?.id ?? next++,
    name: input.name,
    value: input.value,
    price: input.price ?? null,
    active: true,
  }));
  const submittedNames = new Set(submitted.map((input) => input.name));
  const deactivated = stored.filter((option) => !submittedNames.has(option.name)).map((option) => ({ ...option, active: false }));
  const options = [...active, ...deactivated];
  if (options.length > STORED_OPTIONS_MAX) {
    throw unprocessable(`A variable keeps at most ${STORED_OPTIONS_MAX} options, deactivated ones included; reuse old option names`, 'options');
  }
  if (jsonBytes(options) > STORED_OPTIONS_BYTES_MAX) {
    throw unprocessable(
      `A variable keeps at most ${STORED_OPTIONS_BYTES_MAX} bytes of options as JSON (UTF-8), deactivated ones included; reuse old option names or shorten them`,
      'options',
    );
  }
  return { options, nextOptionId: next };
}

/** The pattern a value must match: the operator's regex, anchored to the whole value, on the linear-time engine. */
function valueRegex(pattern: string): RegExp | undefined {
  try {
    return new RegExp(`^(?:${pattern})$`, 'l');
  } catch {
    return undefined;
  }
}

/** 422 on `regex` when the linear-time engine cannot run it (the schema has already checked that it compiles). */
export function assertLinearRegex(pattern: string | null): void {
  if (pattern !== null && !valueRegex(pattern)) {
    throw unprocessable('regex must run in linear time: backreferences, lookarounds and large counted repetitions are not supported', 'regex');
  }
}

/** A variable's value, checked, with what pricing needs to know about it. */
export interface ResolvedVariable extends OrderVariable {
  /** The price of the SELECT option chosen (null: no price, or not a SELECT variable). */
  option_price: number | null;
  /** The packages the variable applies to (null: every package), so a line can sum its options' prices. */
  applies_to: readonly number[] | null;
}

const NUMBER = /^-?\d{1,15}(\.\d{1,6})?$/;

function valueProblem(variable: Variable, value: string): string | undefined {
  if (variable.type === 'SELECT' && !(variable.options ?? []).some((option) => option.value === value)) {
    return `${variable.name} must be one of: ${(variable.options ?? []).map((option) => option.value).join(', ')}`;
  }
  if (variable.type === 'NUMBER' && !NUMBER.test(value)) return `${variable.name} must be a number`;
  if (variable.regex !== null) {
    // A pattern stored before the linear-time check existed and refused by that engine: the value cannot be checked safely.
    const regex = valueRegex(variable.regex);
    if (!regex) return `${variable.name} cannot be checked: its regex needs a backtracking engine and must be changed by the store`;
    if (!regex.test(value)) return `${variable.name} does not match the required format`;
  }
  return undefined;
}

/** A value given for a variable, with the input paths its 422 names (`variables.0.value`, `cart.1.fields.server`). */
export interface GivenValue {
  name: string;
  value: string;
  nameField: string;
  valueField: string;
}

export interface CheckedVariables {
  resolved: ResolvedVariable[];
  problems: ErrorDetail[];
}

/**
 * Values given for the store's checkout variables, under the names the store gave them. Names
 * match ignoring case (they are unique that way); every value is checked by its variable's type,
 * options (active ones only: a deactivated option cannot be chosen) and regex. Every problem is
 * returned, so the caller can report them with its other ones at once.
 */
export function resolveValues(defined: readonly Variable[], given: readonly GivenValue[]): CheckedVariables {
  const byName = new Map(defined.map((variable) => [variable.name.toLowerCase(), variable]));
  const problems: ErrorDetail[] = [];
  const resolved: ResolvedVariable[] = [];
  for (const item of given) {
    const variable = byName.get(item.name.toLowerCase());
    if (!variable) {
      problems.push({ message: `Variable ${item.name} does not exist in this store`, code: 'VALIDATION_FAILED', field: item.nameField });
      continue;
    }
    const problem = valueProblem(variable, item.value);
    if (problem) problems.push({ message: problem, code: 'VALIDATION_FAILED', field: item.valueField });
    const option = variable.type === 'SELECT' ? variable.options?.find((candidate) => candidate.value === item.value) : undefined;
    resolved.push({ name: variable.name, value: item.value, option_price: option?.price ?? null, applies_to: variable.applies_to });
  }
  return { resolved, problems };
}

/** A line's values as its package sees them: the line's own over the order-level ones, by name ignoring case (section 8). */
export function lineValues(orderLevel: readonly ResolvedVariable[], own: readonly ResolvedVariable[]): ResolvedVariable[] {
  const ownNames = new Set(own.map((variable) => variable.name.toLowerCase()));
  return [...orderLevel.filter((variable) => !ownNames.has(variable.name.toLowerCase())), ...own];
}

/** A line of the order as the required-variable rule reads it. */
export interface ValuedLine {
  package_id: number;
  /** The line's input path (`cart.1`): where a value missing on this line only is reported (`cart.1.fields`). */
  field: string;
  /** The line's own values (empty for an operator order, whose values are all order-level). */
  own: readonly ResolvedVariable[];
}

/**
 * A required variable needs a value for each line whose package it applies to, from the line or
 * the order level. Missing everywhere: one problem on `requiredField` (`variables` or `fields`);
 * missing on some lines only: one problem per such line, on that line's `fields`.
 */
export function missingRequired(defined: readonly Variable[], orderLevel: readonly ResolvedVariable[], lines: readonly ValuedLine[], requiredField: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const has = (values: readonly ResolvedVariable[], name: string) => values.some((value) => value.name.toLowerCase() === name);
  for (const variable of defined) {
    if (!variable.required) continue;
    const name = variable.name.toLowerCase();
    if (has(orderLevel, name)) continue;
    const applying = lines.filter((line) => variable.applies_to === null || variable.applies_to.includes(line.package_id));
    const lacking = applying.filter((line) => !has(line.own, name));
    if (lacking.length === 0) continue;
    if (lacking.length === applying.length) {
      problems.push({ message: `Variable ${variable.name} is required for the packages of this order`, code: 'VALIDATION_FAILED', field: requiredField });
    } else {
      for (const line of lacking) {
        problems.push({
          message: `Variable ${variable.name} is required for package ${line.package_id}: give it in this line's fields or the order's`,
          code: 'VALIDATION_FAILED',
          field: `${line.field}.fields`,
        });
      }
    }
  }
  return problems;
}

/** Per unit: the summed prices of the SELECT options chosen for variables that apply to this package (rule 1 of section 8). */
export function optionsPriceOf(variables: readonly ResolvedVariable[], packageId: number): number {
  return addAmounts(
    variables.flatMap((variable) => (variable.option_price !== null && (variable.applies_to === null || variable.applies_to.includes(packageId)) ? [variable.option_price] : [])),
  );
}
