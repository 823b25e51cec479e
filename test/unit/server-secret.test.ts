import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureLocalServerSecret } from '#infra/local/server-secret.ts';
import { cursorCodec } from '#lib/db/cursor.ts';
import { newQuoteId, quoteIdValid } from '#lib/db/quote.ts';
import { HttpError } from '#lib/errors.ts';

const send = vi.hoisted(() => vi.fn());
vi.mock('#lib/db/client.ts', () => ({ db: { send: vi.fn() }, TABLE: 'unit-table' }));
vi.mock('@aws-sdk/client-secrets-manager', () => ({
  SecretsManagerClient: class {
    send = send;
  },
  GetSecretValueCommand: class {
    constructor(readonly input: unknown) {}
  },
}));

const OLD = 'o'.repeat(64);
const NEW = 'n'.repeat(64);
const before = { current: OLD };
/** Within the grace period: new hashes with NEW, OLD still accepted. */
const rotating = { current: NEW, previous: OLD };
/** After it: OLD dropped. */
const after = { current: NEW };

/** A fresh copy of lib/server-secret.ts (its cache is per module, as per container). */
async function freshModule() {
  vi.resetModules();
  return import('#lib/server-secret.ts');
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'server-secret-'));
  send.mockReset();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the local secret file', () => {
  it('is made on first start with mode 0600 and a 64-character current key, and never overwritten', async () => {
    const file = ensureLocalServerSecret(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = readFileSync(file, 'utf8');
    expect(JSON.parse(first).current).toMatch(/^[A-Za-z0-9_-]{64}$/);
    ensureLocalServerSecret(dir);
    expect(readFileSync(file, 'utf8')).toBe(first);
    // Another LOCAL_DIR (another test run) gets its own.
    expect(readFileSync(ensureLocalServerSecret(mkdtempSync(join(tmpdir(), 'server-secret-'))), 'utf8')).not.toBe(first);
  });
});

describe('serverKeys', () => {
  it('reads the file once and keeps it 5 minutes per container, then reads it again (a rotation reaches every container)', async () => {
    const file = join(dir, 'secret.json');
    writeFileSync(file, JSON.stringify(before));
    vi.stubEnv('SERVER_SECRET_ARN', '');
    vi.stubEnv('SERVER_SECRET_FILE', file);
    const { serverKeys, SERVER_SECRET_CACHE_MS } = await freshModule();
    expect(await serverKeys(0)).toEqual(before);
    writeFileSync(file, JSON.stringify(rotating));
    expect(await serverKeys(SERVER_SECRET_CACHE_MS - 1)).toEqual(before);
    expect(await serverKeys(SERVER_SECRET_CACHE_MS)).toEqual(rotating);
  });

  it('on AWS calls Secrets Manager once per container for any number of concurrent requests', async () => {
    vi.stubEnv('SERVER_SECRET_ARN', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-AbCdEf');
    send.mockResolvedValue({ SecretString: JSON.stringify(rotating) });
    const { serverKeys } = await freshModule();
    const keys = await Promise.all(Array.from({ length: 20 }, () => serverKeys(1000)));
    expect(keys.every((k) => k.current === NEW && k.previous === OLD)).toBe(true);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0].input).toEqual({ SecretId: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-AbCdEf' });
  });

  it('keeps no failed read: the next request tries again', async () => {
    vi.stubEnv('SERVER_SECRET_ARN', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-AbCdEf');
    send.mockRejectedValueOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' })).mockResolvedValueOnce({ SecretString: JSON.stringify(before) });
    const { serverKeys } = await freshModule();
    await expect(serverKeys(0)).rejects.toThrow('throttled');
    expect(await serverKeys(1)).toEqual(before);
  });

  it('refuses a malformed or short secret without ever showing its value', async () => {
    const { parseServerSecret } = await freshModule();
    for (const text of ['{"current":"short-secret-value"}', 'not-json-secret-value', '{"current":"' + 'x'.repeat(40) + '","previous":"tiny-secret-value"}']) {
      let message = '';
      try {
        parseServerSecret(text, 'SERVER_SECRET_ARN');
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, text).toContain('SERVER_SECRET_ARN');
      expect(message, text).not.toMatch(/secret-value|xxxx/);
    }
    expect(parseServerSecret(JSON.stringify({ current: NEW, previous: '' }), 'file')).toEqual({ current: NEW });
  });

  it('says which setting is missing when there is none', async () => {
    vi.stubEnv('SERVER_SECRET_ARN', '');
    vi.stubEnv('SERVER_SECRET_FILE', '');
    const { serverKeys } = await freshModule();
    await expect(serverKeys(0)).rejects.toThrow(/SERVER_SECRET_ARN .* SERVER_SECRET_FILE/);
  });
});

describe('rotation', () => {
  const codec = cursorCodec('order', ({ i }) => (typeof i === 'number' ? { i } : undefined));
  const decodes = (cursor: string, keys: typeof before) => {
    try {
      return codec.decode(7, ['f'], cursor, keys).i;
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(400);
      return 'INVALID_CURSOR';
    }
  };

  it('a cursor made under the old key works within the grace period, not after the previous key is dropped', () => {
    const old = codec.encode(7, ['f'], { i: 42 }, before);
    expect(decodes(old, before)).toBe(42);
    expect(decodes(old, rotating)).toBe(42);
    expect(decodes(old, after)).toBe('INVALID_CURSOR');
    // New cursors are made with the current key: they outlive the rotation.
    const fresh = codec.encode(7, ['f'], { i: 43 }, rotating);
    expect(decodes(fresh, after)).toBe(43);
    expect(fresh).not.toBe(codec.encode(7, ['f'], { i: 43 }, before));
  });

  it('a cursor made under an unknown key, or re-signed without the key, is refused', () => {
    const cursor = codec.encode(7, ['f'], { i: 42 }, { current: 'z'.repeat(64) });
    expect(decodes(cursor, rotating)).toBe('INVALID_CURSOR');
    const [body] = cursor.split('.');
    const edited = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), i: 1 })).toString('base64url');
    expect(decodes(`${edited}.${cursor.split('.')[1]}`, { current: 'z'.repeat(64) })).toBe('INVALID_CURSOR');
  });

  it('a quote id made under the old key is valid within the grace period, not after; and only at its own store', () => {
    const id = newQuoteId(before, 3);
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    expect(quoteIdValid(before, 3, id)).toBe(true);
    expect(quoteIdValid(rotating, 3, id)).toBe(true);
    expect(quoteIdValid(after, 3, id)).toBe(false);
    expect(quoteIdValid(rotating, 4, id)).toBe(false);
    expect(quoteIdValid(after, 3, newQuoteId(rotating, 3))).toBe(true);
  });
});
