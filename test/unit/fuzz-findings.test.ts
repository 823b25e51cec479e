import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { operatorAffiliatePatch } from '#lib/schemas/affiliate.ts';
import { storePatchBody } from '#lib/schemas/store.ts';

/**
 * Inputs the fuzz test (test/integration/fuzz.test.ts) found answered 500, each now a 422 naming
 * its field. The fuzz finds them again by chance; these find them every time.
 */
const refusal = (schema: v.GenericSchema, body: unknown) => {
  const result = v.safeParse(schema, body);
  return result.success ? undefined : result.issues.map((issue) => v.getDotPath(issue));
};

describe('fuzz findings', () => {
  it('an allowed origin whose last label is a number (read as an IPv4 address) is a 422, not a TypeError from new URL', () => {
    expect(refusal(storePatchBody, { allowed_origins: ['http://3.z.6.b.bd.e.w.6'] })).toEqual(['allowed_origins.0']);
    expect(refusal(storePatchBody, { allowed_origins: ['http://a.b.6:80'] })).toEqual(['allowed_origins.0']);
    expect(v.parse(storePatchBody, { allowed_origins: ['https://shop.example.com', 'http://127.0.0.1:8080'] })).toEqual({
      allowed_origins: ['https://shop.example.com', 'http://127.0.0.1:8080'],
    });
  });

  it('a percent_commission DynamoDB cannot store (2.5e-323) is a 422, on the store and on an affiliate', () => {
    expect(refusal(storePatchBody, { affiliate: { percent_commission: 2.5e-323 } })).toEqual(['affiliate.percent_commission']);
    expect(refusal(operatorAffiliatePatch, { percent_commission: 1e-200 })).toEqual(['percent_commission']);
    expect(v.parse(operatorAffiliatePatch, { percent_commission: 0 })).toEqual({ percent_commission: 0 });
  });
});
