import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * The exact reads a request's credential lookup sends. DynamoDB Local is always consistent, so
 * only here can a test see that a revoked credential could still be read back on AWS.
 */
const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send }, TABLE: 'unit-table' }));
const { findCredential, findDomainAndCredential, findDomain } = await import('#lib/db/credential.ts');

afterEach(() => send.mockReset());

const inputOf = (call: number) => send.mock.calls[call]![0].input;

describe('credential lookups', () => {
  it('read strongly consistently, so a revocation holds from the next request', async () => {
    send.mockResolvedValue({});
    await findCredential('sat_x');
    await findDomain('shop.example.com');
    expect(inputOf(0).ConsistentRead).toBe(true);
    expect(inputOf(1).ConsistentRead).toBe(true);

    send.mockResolvedValue({ Responses: { 'unit-table': [] } });
    await findDomainAndCredential('shop.example.com', 'sss_x');
    expect(inputOf(2).RequestItems['unit-table'].ConsistentRead).toBe(true);
  });

  it('answer 503 with Retry-After when BatchGet keeps leaving keys unprocessed', async () => {
    send.mockImplementation(async (command) => ({ Responses: {}, UnprocessedKeys: command.input.RequestItems }));
    await expect(findDomainAndCredential('shop.example.com', 'sss_x')).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
  });
});
