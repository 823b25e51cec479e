import { DeleteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));

const { exchangeHandoff, handoffKey, issueHandoff } = await import('#lib/db/handoff.ts');
const { hashSecret } = await import('#lib/crypto.ts');

const HANDOFF = `sho_${'a'.repeat(43)}`;
const NOW = Date.parse('2026-05-01T12:00:30.250Z');
const customer = {
  id: 4,
  store_id: 9,
  email: 'ana@example.com',
  name: 'Ana',
  avatar: null,
  social_id: 'sid',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const conditionalFailure = () => Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException' });

beforeEach(() => {
  send.mockReset();
});

describe('exchangeHandoff', () => {
  it("sends one conditional DeleteItem on the handoff's hash, bound to the key's store and to expiry", async () => {
    send.mockResolvedValueOnce({
      Attributes: { store_id: 9, issued_at: '2026-05-01T12:00:00.000Z', customer: { store_id: 9, email: 'ana@example.com', name: 'Ana', avatar: null, social_id: null } },
    });
    const result = await exchangeHandoff(9, HANDOFF, NOW);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]![0];
    expect(command).toBeInstanceOf(DeleteCommand);
    expect(command.input).toEqual({
      TableName: 'unit-table',
      Key: { pk: `HANDOFF#${hashSecret(HANDOFF)}`, sk: '#HANDOFF' },
      ConditionExpression: 'store_id = :store AND expires_at > :now',
      ExpressionAttributeValues: { ':store': 9, ':now': '2026-05-01T12:00:30.250Z' },
      ReturnValues: 'ALL_OLD',
    });
    expect(result).toEqual({ customer: { store_id: 9, email: 'ana@example.com', name: 'Ana', avatar: null, social_id: null, issued_at: '2026-05-01T12:00:00.000Z' } });
  });

  it('answers 400 HANDOFF_INVALID when the condition fails', async () => {
    send.mockRejectedValueOnce(conditionalFailure());
    await expect(exchangeHandoff(9, HANDOFF, NOW)).rejects.toMatchObject({ status: 400, code: 'HANDOFF_INVALID' });
  });

  it('does not touch the table for something that is not a handoff', async () => {
    for (const value of ['', 'hello', `sss_${'a'.repeat(43)}`, `${HANDOFF}x`]) {
      await expect(exchangeHandoff(9, value, NOW)).rejects.toMatchObject({ status: 400, code: 'HANDOFF_INVALID' });
    }
    expect(send).not.toHaveBeenCalled();
  });

  it('lets other errors through (they become 500/503)', async () => {
    send.mockRejectedValueOnce(Object.assign(new Error('down'), { name: 'ServiceUnavailable' }));
    await expect(exchangeHandoff(9, HANDOFF, NOW)).rejects.toMatchObject({ name: 'ServiceUnavailable' });
  });
});

describe('issueHandoff', () => {
  it('writes once: the rate counter and the hashed handoff in one transaction', async () => {
    send.mockResolvedValueOnce({});
    const { handoff, expires_in } = await issueHandoff(customer, NOW);
    expect(expires_in).toBe(60);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]![0];
    expect(command).toBeInstanceOf(TransactWriteCommand);
    const [rate, put] = command.input.TransactItems;
    expect(rate.Update).toMatchObject({
      Key: { pk: 'STORE#9', sk: `RATE#HANDOFF#4#${Math.floor(NOW / 60_000) * 60}` },
      ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
      ExpressionAttributeValues: { ':limit': 20 },
    });
    expect(put.Put.Item).toEqual({
      ...handoffKey(handoff),
      entity: 'HANDOFF',
      store_id: 9,
      customer_id: 4,
      customer: { store_id: 9, email: 'ana@example.com', name: 'Ana', avatar: null, social_id: 'sid' },
      issued_at: '2026-05-01T12:00:30.250Z',
      expires_at: '2026-05-01T12:01:30.250Z',
      expires_epoch: Math.floor(NOW / 1000) + 60,
    });
    expect(JSON.stringify(command.input)).not.toContain(handoff);
  });

  it('answers 429 with the seconds left in the minute, rounded up, when the counter refuses', async () => {
    send.mockRejectedValueOnce(
      Object.assign(new Error('cancelled'), { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }] }),
    );
    await expect(issueHandoff(customer, NOW)).rejects.toMatchObject({ status: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '30' } });
  });
});
