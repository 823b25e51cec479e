import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));

const { consumeLoginCode, issueLoginCode, loginCodeHash } = await import('#lib/db/login-code.ts');

const KEYS = { current: 'k'.repeat(40) };
const ROTATED = { current: 'n'.repeat(40), previous: KEYS.current };
const NOW = Date.parse('2026-05-01T12:00:00.000Z');
const conditionalFailure = () => Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException' });

beforeEach(() => {
  send.mockReset();
});

describe('login code hash', () => {
  it('binds the code to the store and the (lower-cased) e-mail', () => {
    const hash = loginCodeHash(KEYS, 1, 'ana@example.com', '123456');
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(loginCodeHash(KEYS, 1, 'ANA@example.com', '123456')).toBe(hash);
    expect(loginCodeHash(KEYS, 2, 'ana@example.com', '123456')).not.toBe(hash);
    expect(loginCodeHash(KEYS, 1, 'bob@example.com', '123456')).not.toBe(hash);
    expect(loginCodeHash(KEYS, 1, 'ana@example.com', '123457')).not.toBe(hash);
  });

  it('is keyed: the hash depends on the server key, so a dumped hash cannot be checked against codes without it', () => {
    const hash = loginCodeHash(KEYS, 1, 'ana@example.com', '004217');
    // What the unkeyed scheme stored, and what an attacker can compute for each of the 10^6 codes.
    const unkeyed = createHash('sha256').update('1\nana@example.com\n004217').digest('hex');
    expect(hash).not.toBe(unkeyed);
    expect(hash).not.toBe(createHash('sha256').update('login-code:v1\n1\nana@example.com\n004217').digest('base64url'));
    expect(loginCodeHash({ current: 'x'.repeat(40) }, 1, 'ana@example.com', '004217')).not.toBe(hash);
  });
});

describe('issueLoginCode', () => {
  it('stores the hash only, with 0 attempts, a 10-minute expiry and its TTL', async () => {
    send.mockResolvedValueOnce({});
    const { code } = await issueLoginCode(KEYS, 5, 'ana@example.com', NOW);
    expect(code).toMatch(/^\d{6}$/);
    const items = send.mock.calls[0]![0].input.TransactItems;
    expect(items[1].Put.Item).toEqual({
      pk: 'STORE#5',
      sk: 'LOGIN_CODE#ana@example.com',
      entity: 'LOGIN_CODE',
      store_id: 5,
      code_hash: loginCodeHash(KEYS, 5, 'ana@example.com', code),
      attempts: 0,
      created_at: '2026-05-01T12:00:00.000Z',
      expires_at: '2026-05-01T12:10:00.000Z',
      expires_epoch: NOW / 1000 + 600,
    });
    expect(JSON.stringify(items)).not.toContain(`"${code}"`);
  });
});

describe('consumeLoginCode', () => {
  it('spends a right code with one conditional delete that checks hash, attempts and expiry', async () => {
    send.mockResolvedValueOnce({});
    expect(await consumeLoginCode(KEYS, 5, 'ana@example.com', '123456', NOW)).toBe(true);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]![0];
    expect(command).toBeInstanceOf(DeleteCommand);
    expect(command.input).toEqual({
      TableName: 'unit-table',
      Key: { pk: 'STORE#5', sk: 'LOGIN_CODE#ana@example.com' },
      ConditionExpression: 'code_hash IN (:hash0) AND attempts < :max AND expires_at > :now',
      ExpressionAttributeValues: { ':hash0': loginCodeHash(KEYS, 5, 'ana@example.com', '123456'), ':max': 5, ':now': '2026-05-01T12:00:00.000Z' },
    });
  });

  it('during a rotation accepts the hash under the current or the previous key, still in one conditional delete', async () => {
    send.mockResolvedValueOnce({});
    expect(await consumeLoginCode(ROTATED, 5, 'ana@example.com', '123456', NOW)).toBe(true);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0].input).toMatchObject({
      ConditionExpression: 'code_hash IN (:hash0, :hash1) AND attempts < :max AND expires_at > :now',
      ExpressionAttributeValues: { ':hash0': loginCodeHash(ROTATED, 5, 'ana@example.com', '123456'), ':hash1': loginCodeHash(KEYS, 5, 'ana@example.com', '123456') },
    });
  });

  it('counts a wrong code with a conditional ADD that cannot pass 5', async () => {
    send.mockRejectedValueOnce(conditionalFailure()).mockResolvedValueOnce({});
    expect(await consumeLoginCode(KEYS, 5, 'ana@example.com', '000000', NOW)).toBe(false);
    const command = send.mock.calls[1]![0];
    expect(command).toBeInstanceOf(UpdateCommand);
    expect(command.input).toMatchObject({
      UpdateExpression: 'ADD attempts :one',
      ConditionExpression: 'attribute_exists(pk) AND attempts < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': 5 },
    });
  });

  it('answers false when the attempts are spent or there is no code', async () => {
    send.mockRejectedValueOnce(conditionalFailure()).mockRejectedValueOnce(conditionalFailure());
    expect(await consumeLoginCode(KEYS, 5, 'ana@example.com', '000000', NOW)).toBe(false);
  });
});
