import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { joinBody, withdrawBody, withdrawSettings } from '#lib/schemas/affiliate.ts';

const ok = (schema: v.GenericSchema, value: unknown) => v.safeParse(schema, value).success;

describe('withdraw settings', () => {
  const base = { full_name: 'Ana', cpf_cnpj: '12345678909' };
  it.each([
    ['CPF', '123.456.789-09', true],
    ['CPF', '12345678909', true],
    ['CPF', '1234567890', false],
    ['CNPJ', '12.345.678/0001-95', true],
    ['CNPJ', '12345678909', false],
    ['EMAIL', 'ana@example.com', true],
    ['EMAIL', 'ana', false],
    ['PHONE', '+5511987654321', true],
    ['PHONE', '11-9876', false],
    ['RANDOM', '123e4567-e89b-12d3-a456-426614174000', true],
    ['RANDOM', 'not-a-uuid', false],
  ])('%s key %s valid: %s', (type, key, valid) => {
    expect(ok(withdrawSettings, { ...base, pix_key_type: type, pix_key: key })).toBe(valid);
  });

  it('accepts a CPF or CNPJ, formatted or not, as cpf_cnpj', () => {
    for (const cpf_cnpj of ['123.456.789-09', '12345678909', '12.345.678/0001-95', '12345678000195']) {
      expect(ok(withdrawSettings, { ...base, cpf_cnpj, pix_key_type: 'CPF', pix_key: '12345678909' })).toBe(true);
    }
    expect(ok(withdrawSettings, { ...base, cpf_cnpj: '1234', pix_key_type: 'CPF', pix_key: '12345678909' })).toBe(false);
  });
});

describe('amounts and codes', () => {
  it('accepts amounts with up to two decimals', () => {
    expect([0.01, 0.1, 10, 19.99, 1234.5].every((amount) => ok(withdrawBody, { amount }))).toBe(true);
    expect([0, -1, 0.001, 1.005, Number.POSITIVE_INFINITY].some((amount) => ok(withdrawBody, { amount }))).toBe(false);
  });

  it('keeps the case of a ref_code and trims it', () => {
    expect(v.parse(joinBody, { ref_code: '  Ana-Games_1 ' })).toEqual({ ref_code: 'Ana-Games_1' });
  });

  it('documents the 3-character minimum of a ref_code, which the join enforces itself (message-only 422)', () => {
    const json = toJsonSchema(joinBody, { errorMode: 'ignore' }) as { properties: { ref_code: Record<string, unknown> } };
    expect(json.properties.ref_code).toMatchObject({ type: 'string', minLength: 3, maxLength: 32 });
  });
});
