import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import { describe, expect, it, vi } from 'vitest';
import { ensureLocalPaymentKey } from '#infra/local/server-secret.ts';
import { kmsKeyring, localKeyring, maskSecret, maskSecrets, openSecrets, readLocalKey, sealSecrets, SecretDecryptionError } from '#lib/payments/secrets.ts';

const SECRETS = { access_token: 'APP_USR-1234567890-abcdef-9f3a', webhook_secret: 'whsec_0123456789abcdef' };
const STORE_ONE = { store_id: 1, provider: 'mercadopago' } as const;

describe('the local keyring: AES-256-GCM, the context as AAD', () => {
  const ring = localKeyring(Buffer.alloc(32, 7));

  it('opens what it sealed under the same store and provider, and never shows the secret in the ciphertext', async () => {
    const sealed = await sealSecrets(SECRETS, STORE_ONE, ring);
    expect(sealed).toMatch(/^local:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('APP_USR');
    expect(Buffer.from(sealed.slice('local:'.length), 'base64').toString('latin1')).not.toContain('APP_USR');
    await expect(openSecrets(sealed, STORE_ONE, ring)).resolves.toEqual(SECRETS);
    // A fresh IV each time: the same secrets never give the same ciphertext.
    expect(await sealSecrets(SECRETS, STORE_ONE, ring)).not.toBe(sealed);
  });

  it.each([
    ['another store', { store_id: 2, provider: 'mercadopago' }],
    ['another provider', { store_id: 1, provider: 'stripe' }],
  ] as const)('refuses to open it under %s', async (_, context) => {
    const sealed = await sealSecrets(SECRETS, STORE_ONE, ring);
    await expect(openSecrets(sealed, context, ring)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('refuses an altered ciphertext, another key, and a KMS ciphertext, naming no secret', async () => {
    const sealed = await sealSecrets(SECRETS, STORE_ONE, ring);
    const bytes = Buffer.from(sealed.slice(6), 'base64');
    bytes[bytes.length - 1]! ^= 1;
    await expect(openSecrets(`local:${bytes.toString('base64')}`, STORE_ONE, ring)).rejects.toThrow(/wrong key, wrong context, or altered ciphertext/);
    await expect(openSecrets(sealed, STORE_ONE, localKeyring(Buffer.alloc(32, 8)))).rejects.toBeInstanceOf(SecretDecryptionError);
    await expect(openSecrets('kms:AAAA', STORE_ONE, ring)).rejects.toThrow(/not a local ciphertext/);
    expect(() => localKeyring(Buffer.alloc(16))).toThrow(/32 bytes/);
  });

  it('keeps its key in LOCAL_DIR: 32 random bytes as hex, mode 0600, never overwritten', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payment-key-'));
    const file = ensureLocalPaymentKey(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readLocalKey(file);
    expect(key).toHaveLength(32);
    ensureLocalPaymentKey(dir);
    expect(readLocalKey(file).equals(key)).toBe(true);
    expect(readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
  });
});

describe('the KMS keyring', () => {
  it('encrypts and decrypts with the stage key and the context {purpose, provider, store_id}', async () => {
    const send = vi.fn(async (command: EncryptCommand | DecryptCommand) =>
      command instanceof EncryptCommand ? { CiphertextBlob: new Uint8Array([1, 2, 3]) } : { Plaintext: Buffer.from(JSON.stringify(SECRETS)) },
    );
    const ring = kmsKeyring({ send } as never, 'arn:aws:kms:us-east-1:111122223333:key/k');
    const sealed = await sealSecrets(SECRETS, STORE_ONE, ring);
    expect(sealed).toBe('kms:AQID');
    const context = { purpose: 'payment-provider', provider: 'mercadopago', store_id: '1' };
    const encrypt = send.mock.calls[0]![0] as EncryptCommand;
    expect(encrypt).toBeInstanceOf(EncryptCommand);
    expect(encrypt.input).toMatchObject({ KeyId: 'arn:aws:kms:us-east-1:111122223333:key/k', EncryptionContext: context });
    expect(Buffer.from(encrypt.input.Plaintext!).toString()).toBe(JSON.stringify(SECRETS));
    await expect(openSecrets(sealed, STORE_ONE, ring)).resolves.toEqual(SECRETS);
    const decrypt = send.mock.calls[1]![0] as DecryptCommand;
    expect(decrypt.input).toMatchObject({ EncryptionContext: context, CiphertextBlob: Buffer.from([1, 2, 3]) });
  });

  it("turns KMS's refusal of a wrong context into a decryption error, and lets an outage through as it is", async () => {
    const refusing = kmsKeyring({ send: async () => Promise.reject(Object.assign(new Error('x'), { name: 'InvalidCiphertextException' })) } as never, 'k');
    await expect(openSecrets('kms:AQID', { store_id: 2, provider: 'mercadopago' }, refusing)).rejects.toBeInstanceOf(SecretDecryptionError);
    const throttled = kmsKeyring({ send: async () => Promise.reject(Object.assign(new Error('slow down'), { name: 'ThrottlingException' })) } as never, 'k');
    await expect(openSecrets('kms:AQID', STORE_ONE, throttled)).rejects.toMatchObject({ name: 'ThrottlingException' });
  });
});

describe('the masked form', () => {
  it('shows "..." and the last 4 characters, and nothing of a short secret', () => {
    expect(maskSecrets(SECRETS)).toEqual({ access_token: '...9f3a', webhook_secret: '...cdef' });
    expect(maskSecret('short-one')).toBe('...');
  });
});
