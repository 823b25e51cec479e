import { DeleteCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));

const { check, put, putNewItem, remove, update, writeGuarded, writeIf, writeReturning } = await import('#lib/db/transact.ts');
const { DamagedItem, fieldsOf } = await import('#lib/db/entity.ts');
const { queryPage, queryPages } = await import('#lib/db/query.ts');
const { ENTITY } = await import('#lib/schemas/entity.ts');
const { conflict, notFound, unprocessable } = await import('#lib/errors.ts');

const KEY = { pk: 'STORE#1', sk: 'TAG#000000000001' };
const conditionalFailure = (item?: unknown) => Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException', ...(item ? { Item: item } : {}) });
const cancelled = (codes: string[], items: unknown[] = []) =>
  Object.assign(new Error('cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code, i) => ({ Code, Item: items[i] })) });

beforeEach(() => send.mockReset());

describe('the write builders', () => {
  it('carry the table name', () => {
    expect(put({ Item: KEY })).toEqual({ Put: { TableName: 'unit-table', Item: KEY } });
    expect(putNewItem(KEY)).toEqual({ Put: { TableName: 'unit-table', Item: KEY, ConditionExpression: 'attribute_not_exists(pk)' } });
    expect(update({ Key: KEY, UpdateExpression: 'SET a = :a' })).toEqual({ Update: { TableName: 'unit-table', Key: KEY, UpdateExpression: 'SET a = :a' } });
    expect(remove({ Key: KEY })).toEqual({ Delete: { TableName: 'unit-table', Key: KEY } });
    expect(check({ Key: KEY, ConditionExpression: 'attribute_exists(pk)' })).toEqual({
      ConditionCheck: { TableName: 'unit-table', Key: KEY, ConditionExpression: 'attribute_exists(pk)' },
    });
  });
});

describe('writeGuarded', () => {
  it.each([
    ['Put', putNewItem(KEY), PutCommand],
    ['Update', update({ Key: KEY, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': 1 } }), UpdateCommand],
    ['Delete', remove({ Key: KEY }), DeleteCommand],
  ])('sends one %s as a plain call, not a transaction', async (_, item, command) => {
    send.mockResolvedValueOnce({});
    await writeGuarded([{ item }]);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toBeInstanceOf(command);
    expect(send.mock.calls[0]![0].input).toEqual(Object.values(item)[0]);
  });

  it('sends several writes, or a lone ConditionCheck, as one TransactWrite', async () => {
    send.mockResolvedValue({});
    await writeGuarded([{ item: putNewItem(KEY) }, { item: remove({ Key: { pk: 'a', sk: 'b' } }) }]);
    await writeGuarded([{ item: check({ Key: KEY, ConditionExpression: 'attribute_exists(pk)' }) }]);
    expect(send.mock.calls.map(([command]) => command.constructor)).toEqual([TransactWriteCommand, TransactWriteCommand]);
  });

  it('maps a failed condition to the write’s own error, alone or in a transaction, with the stored item asked for', async () => {
    const stored = { n: { N: '3' } };
    const write = { item: update({ Key: KEY, UpdateExpression: 'ADD n :one' }), onConditionFailed: (current: unknown) => conflict(current ? 'stored' : 'absent') };
    send.mockRejectedValueOnce(conditionalFailure(stored));
    await expect(writeGuarded([write])).rejects.toMatchObject({ status: 409, message: 'stored' });
    send.mockRejectedValueOnce(cancelled(['None', 'ConditionalCheckFailed'], [undefined, stored]));
    await expect(writeGuarded([{ item: putNewItem({ pk: 'x', sk: 'y' }) }, write])).rejects.toMatchObject({ status: 409, message: 'stored' });
    send.mockRejectedValueOnce(conditionalFailure());
    await expect(writeGuarded([write])).rejects.toMatchObject({ status: 409, message: 'absent' });
  });

  it('reports every failed reference of a transaction together (422); any other failure comes first', async () => {
    const reference = (field: string) => ({
      item: update({ Key: KEY, UpdateExpression: 'ADD ref_count :one' }),
      onConditionFailed: () => unprocessable(`${field} missing`, field),
    });
    send.mockRejectedValueOnce(cancelled(['ConditionalCheckFailed', 'None', 'ConditionalCheckFailed']));
    const error = await writeGuarded([reference('a'), { item: putNewItem(KEY) }, reference('b')]).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 422, details: [{ field: 'a' }, { field: 'b' }] });
    send.mockRejectedValueOnce(cancelled(['ConditionalCheckFailed', 'ConditionalCheckFailed']));
    await expect(writeGuarded([reference('a'), { item: remove({ Key: KEY }), onConditionFailed: () => notFound('Tag') }])).rejects.toMatchObject({ status: 404 });
  });

  it('lets any other error through untouched', async () => {
    const error = Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    send.mockRejectedValueOnce(error);
    await expect(writeGuarded([{ item: putNewItem(KEY), onConditionFailed: () => conflict('no') }])).rejects.toBe(error);
  });
});

describe('writeReturning and writeIf', () => {
  it('answers the attributes asked for', async () => {
    send.mockResolvedValueOnce({ Attributes: { value: 7 } });
    expect(await writeReturning({ item: update({ Key: KEY, UpdateExpression: 'ADD #value :one' }) }, 'UPDATED_NEW')).toEqual({ value: 7 });
    expect(send.mock.calls[0]![0].input.ReturnValues).toBe('UPDATED_NEW');
  });

  it('writeIf answers false for a failed condition and true for a write', async () => {
    send.mockRejectedValueOnce(conditionalFailure()).mockResolvedValueOnce({});
    expect(await writeIf(remove({ Key: KEY, ConditionExpression: 'attribute_exists(pk)' }))).toBe(false);
    expect(await writeIf(remove({ Key: KEY, ConditionExpression: 'attribute_exists(pk)' }))).toBe(true);
  });
});

describe('fieldsOf, the reader of a stored item', () => {
  const item = { pk: 'STORE#1', sk: 'TAG#1', id: 1, name: 'x', ids: new Set([2, 3]), nested: { a: 1 }, nothing: null };

  it('reads each attribute by its type, and fills what older items lack', () => {
    const field = fieldsOf(item, ENTITY.TAG);
    expect([field.number('id'), field.string('name'), field.numbers('ids'), field.object('nested', (inner) => inner.number('a'))]).toEqual([1, 'x', [2, 3], 1]);
    expect([field.boolean('flag', false), field.numberOrNull('nothing'), field.stringOrNull('absent'), field.strings('absent'), field.optionalNumber('absent')]).toEqual([
      false,
      null,
      null,
      [],
      undefined,
    ]);
    expect(field.oneOf('name', ['x', 'y'])).toBe('x');
  });

  it.each([
    ['a missing attribute with no default', (field: ReturnType<typeof fieldsOf>) => field.string('absent')],
    ['a number stored as a string', (field: ReturnType<typeof fieldsOf>) => field.string('id')],
    ['a value outside its closed set', (field: ReturnType<typeof fieldsOf>) => field.oneOf('name', ['y', 'z'])],
    ['a list of the wrong elements', (field: ReturnType<typeof fieldsOf>) => field.strings('ids')],
  ])('throws DamagedItem (a 500, never a cast) for %s, naming the item and the attribute', (_, read) => {
    expect(() => read(fieldsOf(item, ENTITY.TAG))).toThrow(DamagedItem);
    expect(() => read(fieldsOf(item, ENTITY.TAG))).toThrow(/TAG item STORE#1 \/ TAG#1: /);
  });
});

describe('queryPages, the one loop over pages', () => {
  it('follows LastEvaluatedKey to the end, asking each page’s Limit before it', async () => {
    send
      .mockResolvedValueOnce({ Items: [{ n: 1 }], LastEvaluatedKey: { k: 1 } })
      .mockResolvedValueOnce({ Items: [{ n: 2 }], LastEvaluatedKey: { k: 2 } })
      .mockResolvedValueOnce({ Items: [{ n: 3 }] });
    const limits = [5, 4, 3];
    const pages = [];
    for await (const page of queryPages({ KeyConditionExpression: 'pk = :pk' }, { limit: () => limits.shift() })) pages.push(page.Items);
    expect(pages).toEqual([[{ n: 1 }], [{ n: 2 }], [{ n: 3 }]]);
    expect(send.mock.calls.map(([command]) => [command.constructor, command.input.TableName, command.input.Limit, command.input.ExclusiveStartKey])).toEqual([
      [QueryCommand, 'unit-table', 5, undefined],
      [QueryCommand, 'unit-table', 4, { k: 1 }],
      [QueryCommand, 'unit-table', 3, { k: 2 }],
    ]);
  });

  it('reads no further page once the caller stops', async () => {
    send.mockResolvedValue({ Items: [{ n: 1 }], LastEvaluatedKey: { k: 1 } });
    for await (const page of queryPages({ KeyConditionExpression: 'pk = :pk' })) if (page.Items?.length) break;
    expect(send).toHaveBeenCalledTimes(1);
    await queryPage({ KeyConditionExpression: 'pk = :pk' }, { k: 9 }, 1);
    expect(send.mock.calls[1]![0].input).toMatchObject({ ExclusiveStartKey: { k: 9 }, Limit: 1 });
    expect(send).toHaveBeenCalledTimes(2);
  });
});
