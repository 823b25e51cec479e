import { describe, expect, it } from 'vitest';
import { getDotPath, safeParse } from 'valibot';

/** Option matching and the variable input schemas, without the table. */
process.env.TABLE_NAME ??= 'unit-test-table';
const { variableResponse } = await import('#lib/db/variable.ts');
const { resolveOptions, STORED_OPTIONS_BYTES_MAX, STORED_OPTIONS_MAX } = await import('#lib/domain/variable.ts');
const { APPLIES_TO_MAX, variableCreateBody, variablePatchBody } = await import('#lib/schemas/variable.ts');
const { HttpError } = await import('#lib/errors.ts');
type StoredOption = import('#lib/schemas/variable.ts').StoredOption;

const stored: StoredOption[] = [
  { id: 1, name: 'red', value: 'R', price: 1, active: true },
  { id: 2, name: 'green', value: 'G', price: null, active: true },
  { id: 3, name: 'old', value: 'O', price: null, active: false },
];

function rejection(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, field: error.details[0]?.field };
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('resolveOptions', () => {
  it('keeps matched ids, updates them, numbers new names from the counter and deactivates the rest', () => {
    const { options, nextOptionId } = resolveOptions(
      stored,
      [
        { name: 'green', value: 'LIME', price: 3 },
        { name: 'blue', value: 'B' },
      ],
      'SELECT',
      4,
    );
    expect(options).toEqual([
      { id: 2, name: 'green', value: 'LIME', price: 3, active: true },
      { id: 4, name: 'blue', value: 'B', price: null, active: true },
      { id: 1, name: 'red', value: 'R', price: 1, active: false },
      { id: 3, name: 'old', value: 'O', price: null, active: false },
    ]);
    expect(nextOptionId).toBe(5);
  });

  it('reactivates a deactivated name with its old id', () => {
    const { options, nextOptionId } = resolveOptions(
      stored,
      [
        { name: 'old', value: 'again' },
        { name: 'red', value: 'R' },
      ],
      'SELECT',
      4,
    );
    expect(options.filter((o) => o.active).map((o) => [o.id, o.name, o.value])).toEqual([
      [3, 'old', 'again'],
      [1, 'red', 'R'],
    ]);
    expect(nextOptionId).toBe(4);
  });

  it('matches names exactly: a change of case is a new option', () => {
    const { options } = resolveOptions(
      stored,
      [
        { name: 'Red', value: 'R' },
        { name: 'green', value: 'G' },
      ],
      'SELECT',
      4,
    );
    expect(options.find((o) => o.name === 'Red')).toMatchObject({ id: 4, active: true });
    expect(options.find((o) => o.name === 'red')).toMatchObject({ id: 1, active: false });
  });

  it('leaves options untouched when none are submitted, if at least 2 are active', () => {
    expect(resolveOptions(stored, undefined, 'SELECT', 4)).toEqual({ options: stored, nextOptionId: 4 });
    expect(rejection(() => resolveOptions(stored.slice(1), undefined, 'SELECT', 4))).toEqual({ status: 422, field: 'options' });
    expect(rejection(() => resolveOptions([], undefined, 'SELECT', 1))).toEqual({ status: 422, field: 'options' });
  });

  it('deactivates every option of a variable that is not SELECT, and refuses options for it', () => {
    const { options } = resolveOptions(stored, undefined, 'TEXT', 4);
    expect(options.map((o) => [o.id, o.active])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(
      rejection(() =>
        resolveOptions(
          stored,
          [
            { name: 'a', value: 'a' },
            { name: 'b', value: 'b' },
          ],
          'NUMBER',
          4,
        ),
      ),
    ).toEqual({ status: 422, field: 'options' });
  });

  it(`keeps at most ${STORED_OPTIONS_MAX} options, deactivated ones included`, () => {
    const many: StoredOption[] = Array.from({ length: STORED_OPTIONS_MAX - 1 }, (_, i) => ({ id: i + 1, name: `o${i}`, value: 'v', price: null, active: false }));
    const next = STORED_OPTIONS_MAX;
    expect(
      resolveOptions(
        many,
        [
          { name: 'o0', value: 'v' },
          { name: 'new', value: 'v' },
        ],
        'SELECT',
        next,
      ).options,
    ).toHaveLength(STORED_OPTIONS_MAX);
    expect(
      rejection(() =>
        resolveOptions(
          many,
          [
            { name: 'x', value: 'v' },
            { name: 'y', value: 'v' },
          ],
          'SELECT',
          next,
        ),
      ),
    ).toEqual({ status: 422, field: 'options' });
  });

  it(`keeps at most ${STORED_OPTIONS_BYTES_MAX} bytes of options as JSON: 3-byte text reaches it before the count`, () => {
    const option = (i: number) => ({ id: i + 1, name: `${i}${'€'.repeat(95)}`, value: '€'.repeat(255), price: null, active: false });
    // 200 options of 3-byte text: about 230 KB; 100 more would make the item 345 KB of options alone.
    const kept: StoredOption[] = Array.from({ length: 200 }, (_, i) => option(i));
    const fresh = Array.from({ length: 100 }, (_, i) => ({ name: option(200 + i).name, value: option(200 + i).value }));
    expect(kept.length + fresh.length).toBeLessThan(STORED_OPTIONS_MAX);
    expect(rejection(() => resolveOptions(kept, fresh, 'SELECT', 201))).toEqual({ status: 422, field: 'options' });
    expect(resolveOptions(kept, fresh.slice(0, 2), 'SELECT', 201).options).toHaveLength(202);
  });
});

describe('variableResponse', () => {
  const item = {
    id: 7,
    store_id: 1,
    name: 'colour',
    name_lower: 'colour',
    description: 'd',
    type: 'SELECT' as const,
    required: false,
    regex: null,
    applies_to: null,
    options: stored,
    next_option_id: 4,
    revision: 3,
    created_at: '2030-01-01T00:00:00.000Z',
    updated_at: '2030-01-01T00:00:00.000Z',
  };

  it('lists only active options, without their flag, and formats the name', () => {
    const variable = variableResponse(item);
    expect(variable).toMatchObject({ bracket_display: '{colour}', display: 'colour' });
    expect(variable.options).toEqual([
      { id: 1, name: 'red', value: 'R', price: 1 },
      { id: 2, name: 'green', value: 'G', price: null },
    ]);
    expect(variable).not.toHaveProperty('name_lower');
    expect(variable).not.toHaveProperty('revision');
  });

  it('has no options field for other types', () => {
    expect(variableResponse({ ...item, type: 'GAME' })).not.toHaveProperty('options');
  });
});

describe('variable schemas', () => {
  const base = { name: 'v', type: 'TEXT', description: 'd' };
  const fieldOf = (body: unknown) => {
    const result = safeParse(variableCreateBody, body);
    return result.success ? undefined : getDotPath(result.issues[0]);
  };

  it('accepts letters, digits, - and _ in names, nothing else', () => {
    expect(fieldOf({ ...base, name: 'Ab_9-z' })).toBeUndefined();
    for (const name of ['a b', 'a.b', 'a{b}', 'ñ', '']) expect(fieldOf({ ...base, name })).toBe('name');
  });

  it('requires a regex that compiles', () => {
    expect(fieldOf({ ...base, regex: '^\\d{3}-[A-Z]+$' })).toBeUndefined();
    for (const regex of ['(', '[a-', '*a', '\\']) expect(fieldOf({ ...base, regex })).toBe('regex');
  });

  it(`bounds applies_to to ${APPLIES_TO_MAX} distinct ids`, () => {
    expect(APPLIES_TO_MAX).toBe(48);
    expect(fieldOf({ ...base, applies_to: Array.from({ length: 48 }, (_, i) => i + 1) })).toBeUndefined();
    expect(fieldOf({ ...base, applies_to: Array.from({ length: 49 }, (_, i) => i + 1) })).toBe('applies_to');
    expect(fieldOf({ ...base, applies_to: [3, 3] })).toBe('applies_to');
  });

  it('names the repeated option name by its position', () => {
    const options = [
      { name: 'a', value: '1' },
      { name: 'b', value: '2' },
      { name: 'a', value: '3' },
    ];
    expect(fieldOf({ ...base, type: 'SELECT', options })).toBe('options.2.name');
  });

  it('wants at least one field in a patch', () => {
    expect(safeParse(variablePatchBody, {}).success).toBe(false);
    expect(safeParse(variablePatchBody, { required: false }).success).toBe(true);
    expect(safeParse(variablePatchBody, { applies_to: null, regex: null }).success).toBe(true);
  });
});
