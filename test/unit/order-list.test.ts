import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import { decodeCursor, listOrdersByCursor } from '#lib/db/order-list.ts';
import { orderListQuery } from '#lib/schemas/order.ts';

const KEYS = { current: 'k'.repeat(40) };
const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));

describe('order list query', () => {
  it('pages 50 orders by default in cursor mode, at most 200, and 20 by default in page mode', () => {
    expect(v.parse(orderListQuery, { page_cursor: '' })).toMatchObject({ page_cursor: '', page_size: 50 });
    expect(v.parse(orderListQuery, { page_cursor: '', page_size: '200' }).page_size).toBe(200);
    expect(v.is(orderListQuery, { page_cursor: '', page_size: '201' })).toBe(false);
    expect(v.parse(orderListQuery, {})).toMatchObject({ page: 1, limit: 20 });
  });
});

describe('cursor pages filtered by package', () => {
  const lastExamined = { pk: 'STORE#1', sk: 'ORDER#000000000700', gsi1pk: 'STORE#1#ORDER', gsi1sk: '2026-05-01T00:00:00.000Z#000000000700' };

  it('examine at most 1000 orders, then answer the matches so far with a cursor after the last order examined', async () => {
    send.mockReset().mockResolvedValue({ Items: [], Count: 0, ScannedCount: 200, LastEvaluatedKey: lastExamined });
    const page = await listOrdersByCursor(1, { package: 7 }, '', 50, KEYS);
    expect(send).toHaveBeenCalledTimes(5);
    expect(send.mock.calls[0]![0].input).toMatchObject({ IndexName: 'gsi1', Limit: 200, FilterExpression: 'contains(package_ids, :package)' });
    expect(page.data).toEqual([]);
    expect(decodeCursor(1, { package: 7 }, page.next_cursor!, KEYS)).toEqual({ created_at: '2026-05-01T00:00:00.000Z', id: 700 });
    // The next page starts after that order.
    send.mockReset().mockResolvedValue({ Items: [], Count: 0, ScannedCount: 12 });
    expect(await listOrdersByCursor(1, { package: 7 }, page.next_cursor!, 50, KEYS)).toEqual({ data: [], next_cursor: null });
    const resumed = send.mock.calls[0]![0].input;
    expect(resumed.KeyConditionExpression).toBe('#pk = :pk AND #sk <= :upper');
    expect(resumed.ExclusiveStartKey).toBeUndefined();
    // Below order 700's key, above every key an earlier order (699, or 700's predecessors in time) can have.
    const upper = resumed.ExpressionAttributeValues[':upper'] as string;
    expect(upper < lastExamined.gsi1sk).toBe(true);
    expect(upper > '2026-05-01T00:00:00.000Z#000000000699').toBe(true);
  });
});
