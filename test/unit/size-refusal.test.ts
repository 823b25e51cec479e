import { describe, expect, it } from 'vitest';
import { isSizeRefusal } from '#lib/db/errors.ts';

process.env.TABLE_NAME ??= 'unit-test-table';
const { toHttpError } = await import('#lib/http/handler.ts');

/** DynamoDB's size refusals as AWS words them (DynamoDB Local's own wording: test/integration/size-refusal.test.ts). */
const named = (name: string, message: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { name, ...extra });

describe('size refusals', () => {
  it.each([
    'Item size has exceeded the maximum allowed size',
    'Item size to update has exceeded the maximum allowed size',
    'Transaction request cannot be larger than 4MB',
    'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes',
    'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes',
    'Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes',
  ])('ValidationException "%s" is a 413 TOO_LARGE', (message) => {
    const error = named('ValidationException', message);
    expect(isSizeRefusal(error)).toBe(true);
    expect(toHttpError(error)).toMatchObject({ status: 413, details: [{ code: 'TOO_LARGE' }] });
  });

  it('a transaction cancelled for an item too large, or an item collection over its limit', () => {
    const cancelled = (reasons: { Code: string; Message?: string }[]) => named('TransactionCanceledException', 'Transaction cancelled', { CancellationReasons: reasons });
    expect(isSizeRefusal(cancelled([{ Code: 'None' }, { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' }]))).toBe(true);
    expect(isSizeRefusal(cancelled([{ Code: 'ItemCollectionSizeLimitExceeded' }]))).toBe(true);
    expect(isSizeRefusal(named('ItemCollectionSizeLimitExceededException', 'Collection size exceeded'))).toBe(true);
  });

  it('other validation errors and cancellations are not size refusals (they stay 500s: bugs, not requests)', () => {
    expect(isSizeRefusal(named('ValidationException', 'The provided key element does not match the schema'))).toBe(false);
    expect(isSizeRefusal(named('TransactionCanceledException', 'Transaction cancelled', { CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }))).toBe(false);
    expect(toHttpError(named('ValidationException', 'ExpressionAttributeValues must not be empty'))).toBeUndefined();
  });

  it('a refused request of ours is a 500 (a bug), never a 503 (retry), even when it comes with an HTTP 5xx', () => {
    const refused = named('ValidationException', 'Limit must be a 32-bit integer', { $metadata: { httpStatusCode: 500 } });
    expect(toHttpError(refused)).toBeUndefined();
    // A real outage still is a 503.
    expect(toHttpError(named('InternalServerError', 'Internal server error', { $metadata: { httpStatusCode: 500 } }))).toMatchObject({ status: 503 });
  });
});
