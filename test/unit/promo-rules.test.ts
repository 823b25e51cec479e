import { describe, expect, it } from 'vitest';
import { normalTarget, promoReferences, promoRuleViolations, type PromoDraft } from '#lib/domain/promo.ts';

const progressive = (overrides: Partial<PromoDraft> = {}): PromoDraft => ({
  type: 'PROGRESSIVE',
  condition_mode: 'QUANTITY',
  starts_at: '2030-01-01T00:00:00.000Z',
  ends_at: null,
  targets: [{ type: 'STORE' }],
  tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 10 }],
  ...overrides,
});

const buyXPayY = (overrides: Partial<PromoDraft> = {}): PromoDraft => ({
  ...progressive(),
  type: 'BUY_X_PAY_Y',
  tiers: [{ min_amount: 3, reward_type: 'FREE', reward_quantity: 1, targets: [{ type: 'PRODUCT', id: 4 }] }],
  ...overrides,
});

const fields = (draft: PromoDraft) => promoRuleViolations(draft).map((v) => v.field);

describe('promoRuleViolations', () => {
  it('accepts valid promos of both types', () => {
    expect(promoRuleViolations(progressive())).toEqual([]);
    expect(promoRuleViolations(buyXPayY())).toEqual([]);
    expect(
      promoRuleViolations(progressive({ ends_at: '2030-01-01T00:00:00.001Z', condition_mode: 'VALUE', tiers: [{ min_amount: 0.5, reward_type: 'VALUE', reward_value: 2 }] })),
    ).toEqual([]);
  });

  it('requires ends_at strictly after starts_at', () => {
    expect(fields(progressive({ ends_at: '2030-01-01T00:00:00.000Z' }))).toEqual(['ends_at']);
    expect(fields(progressive({ ends_at: '2029-12-31T23:59:59.999Z' }))).toEqual(['ends_at']);
  });

  it('checks target ids per type, duplicates and a lone STORE target', () => {
    expect(fields(progressive({ targets: [{ type: 'STORE', id: 3 }] }))).toEqual(['targets.0.id']);
    expect(
      fields(
        progressive({
          targets: [
            { type: 'PRODUCT', id: 1 },
            { type: 'CATEGORY', id: null },
          ],
        }),
      ),
    ).toEqual(['targets.1.id']);
    expect(
      fields(
        progressive({
          targets: [
            { type: 'CATEGORY', id: 2 },
            { type: 'CATEGORY', id: 2 },
          ],
        }),
      ),
    ).toEqual(['targets.1']);
    expect(
      fields(
        progressive({
          targets: [
            { type: 'PRODUCT', id: 2 },
            { type: 'CATEGORY', id: 2 },
          ],
        }),
      ),
    ).toEqual([]);
    expect(fields(progressive({ targets: [{ type: 'STORE' }, { type: 'PRODUCT', id: 2 }] }))).toEqual(['targets']);
  });

  it('wants distinct tier minimums, whole units under QUANTITY and a positive amount under VALUE', () => {
    const tier = (min_amount: number) => ({ min_amount, reward_type: 'VALUE' as const, reward_value: 1 });
    expect(fields(progressive({ tiers: [tier(1), tier(2), tier(1)] }))).toEqual(['tiers.2.min_amount']);
    expect(fields(progressive({ tiers: [tier(0)] }))).toEqual(['tiers.0.min_amount']);
    expect(fields(progressive({ tiers: [tier(2.5)] }))).toEqual(['tiers.0.min_amount']);
    expect(fields(progressive({ condition_mode: 'VALUE', tiers: [tier(2.5)] }))).toEqual([]);
    expect(fields(progressive({ condition_mode: 'VALUE', tiers: [tier(0)] }))).toEqual(['tiers.0.min_amount']);
  });

  it('applies the reward rules: FREE only for BUY_X_PAY_Y and without value, value otherwise, percentage at most 100', () => {
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'FREE' }] }))).toEqual(['tiers.0.reward_type']);
    expect(fields(buyXPayY({ tiers: [{ min_amount: 1, reward_type: 'FREE', reward_value: 0.5, reward_quantity: 1, targets: [{ type: 'PRODUCT', id: 1 }] }] }))).toEqual([
      'tiers.0.reward_value',
    ]);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE' }] }))).toEqual(['tiers.0.reward_value']);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 100 }] }))).toEqual([]);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'PERCENTAGE', reward_value: 100.01 }] }))).toEqual(['tiers.0.reward_value']);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 500 }] }))).toEqual([]);
  });

  it('gives BUY_X_PAY_Y exactly one tier with reward_quantity and 1 to 10 PRODUCT reward targets', () => {
    const tier = buyXPayY().tiers[0]!;
    expect(fields(buyXPayY({ tiers: [tier, { ...tier, min_amount: 5 }] }))).toEqual(['tiers']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, reward_quantity: null }] }))).toEqual(['tiers.0.reward_quantity']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, targets: [] }] }))).toEqual(['tiers.0.targets']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, targets: undefined }] }))).toEqual(['tiers.0.targets']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, targets: [{ type: 'CATEGORY', id: 1 }] }] }))).toEqual(['tiers.0.targets.0.type']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, targets: [{ type: 'STORE' }] }] }))).toEqual(['tiers.0.targets.0.type']);
    expect(fields(buyXPayY({ tiers: [{ ...tier, targets: [{ type: 'PRODUCT' }] }] }))).toEqual(['tiers.0.targets.0.id']);
  });

  it('keeps reward_quantity and tier targets out of PROGRESSIVE tiers', () => {
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, reward_quantity: 2 }] }))).toEqual(['tiers.0.reward_quantity']);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, targets: [{ type: 'PRODUCT', id: 1 }] }] }))).toEqual(['tiers.0.targets']);
    expect(fields(progressive({ tiers: [{ min_amount: 1, reward_type: 'VALUE', reward_value: 1, reward_quantity: null, targets: [] }] }))).toEqual([]);
  });

  it('reports every violation with the VALIDATION_FAILED code', () => {
    const violations = promoRuleViolations(progressive({ ends_at: '2000-01-01T00:00:00.000Z', tiers: [{ min_amount: 1, reward_type: 'FREE', reward_value: 3 }] }));
    expect(violations.map((v) => v.field)).toEqual(['ends_at', 'tiers.0.reward_type', 'tiers.0.reward_value']);
    expect(violations.every((v) => v.code === 'VALIDATION_FAILED' && v.message.length > 0)).toBe(true);
  });
});

describe('promoReferences', () => {
  it('names each referenced package or category with its input path, skipping STORE', () => {
    const draft = buyXPayY({
      targets: [
        { type: 'CATEGORY', id: 7 },
        { type: 'PRODUCT', id: 8 },
      ],
      tiers: [
        {
          min_amount: 2,
          reward_type: 'FREE',
          reward_quantity: 1,
          targets: [
            { type: 'PRODUCT', id: 8 },
            { type: 'PRODUCT', id: 9 },
          ],
        },
      ],
    });
    expect(promoReferences(draft)).toEqual([
      { kind: 'CATEGORY', id: 7, field: 'targets.0.id' },
      { kind: 'PACKAGE', id: 8, field: 'targets.1.id' },
      { kind: 'PACKAGE', id: 8, field: 'tiers.0.targets.0.id' },
      { kind: 'PACKAGE', id: 9, field: 'tiers.0.targets.1.id' },
    ]);
    expect(promoReferences(progressive())).toEqual([]);
  });
});

describe('normalTarget', () => {
  it('drops the id of a STORE target and keeps it otherwise', () => {
    expect(normalTarget({ type: 'STORE', id: null })).toEqual({ type: 'STORE' });
    expect(normalTarget({ type: 'PRODUCT', id: 3 })).toEqual({ type: 'PRODUCT', id: 3 });
  });
});
