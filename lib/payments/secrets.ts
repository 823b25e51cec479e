import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { config } from '#lib/config.ts';
import type { Provider } from '#lib/schemas/payment.ts';

/**
 * A store's provider secrets (a Mercado Pago access token and webhook secret...) at rest: one
 * ciphertext of their JSON per provider account, bound to the store and the provider by an
 * encryption context, so a ciphertext copied into another store's item (or another provider's)
 * does not decrypt. Two keyrings, one format of use:
 *
 * - AWS: KMS with the stage's customer-managed key (`PAYMENT_SECRETS_KEY_ID`, set only on the
 *   functions the route table grants `kms:Encrypt` or `kms:Decrypt`); the context is KMS's
 *   `EncryptionContext`, so every decrypt is in CloudTrail with its store id. Ciphertext `kms:<base64>`.
 * - The local stack: AES-256-GCM with a 32-byte key in `.local/payment-secrets.key` (mode 0600,
 *   `PAYMENT_SECRETS_KEY_FILE`); the context is the additional authenticated data, so a wrong
 *   context fails the tag check exactly like KMS refuses it. Ciphertext `local:<base64 of iv | tag | data>`.
 *
 * A function with neither setting fails at its first use, naming both. Plaintext never leaves this
 * module except as the secrets object a flow hands to one adapter call; errors never carry it.
 */
export interface SecretContext {
  store_id: number;
  provider: Provider;
}

export interface Keyring {
  encrypt(plaintext: string, context: SecretContext): Promise<string>;
  decrypt(ciphertext: string, context: SecretContext): Promise<string>;
}

export class SecretDecryptionError extends Error {
  constructor(reason: string) {
    super(`provider secrets could not be decrypted: ${reason}`);
    this.name = 'SecretDecryptionError';
  }
}

/** The context as KMS takes it: strings only, with a purpose so the key can serve nothing else by mistake. */
export const encryptionContext = ({ store_id, provider }: SecretContext): Record<string, string> => ({
  purpose: 'payment-provider',
  provider,
  store_id: String(store_id),
});

/** The same context as bytes, in a fixed key order: the AAD of the local keyring. */
const aadOf = (context: SecretContext) => {
  const entries = Object.entries(encryptionContext(context)).sort(([a], [b]) => a.localeCompare(b));
  return Buffer.from(JSON.stringify(entries), 'utf8');
};

const KMS_PREFIX = 'kms:';
const LOCAL_PREFIX = 'local:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const LOCAL_KEY_BYTES = 32;

/** The client is passed in (tests assert the commands it is sent); `paymentSecretsKeyring` makes the real one. */
export function kmsKeyring(client: Pick<KMSClient, 'send'>, keyId: string): Keyring {
  return {
    async encrypt(plaintext, context) {
      const { CiphertextBlob } = await client.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: encryptionContext(context) }));
      if (!CiphertextBlob) throw new Error('KMS Encrypt answered no ciphertext');
      return KMS_PREFIX + Buffer.from(CiphertextBlob).toString('base64');
    },
    async decrypt(ciphertext, context) {
      if (!ciphertext.startsWith(KMS_PREFIX)) throw new SecretDecryptionError('not a KMS ciphertext');
      try {
        const { Plaintext } = await client.send(
          new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(ciphertext.slice(KMS_PREFIX.length), 'base64'), EncryptionContext: encryptionContext(context) }),
        );
        if (!Plaintext) throw new SecretDecryptionError('KMS answered no plaintext');
        return Buffer.from(Plaintext).toString('utf8');
      } catch (error) {
        // A wrong context is KMS's InvalidCiphertextException; throttling and outages stay what they are (a 503 upstream).
        if ((error as { name?: string }).name === 'InvalidCiphertextException') throw new SecretDecryptionError('KMS refused the ciphertext or its context');
        throw error;
      }
    },
  };
}

export function localKeyring(key: Buffer): Keyring {
  if (key.length !== LOCAL_KEY_BYTES) throw new Error(`the local payment secrets key must be ${LOCAL_KEY_BYTES} bytes`);
  return {
    async encrypt(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(aadOf(context));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return LOCAL_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
    },
    async decrypt(ciphertext, context) {
      if (!ciphertext.startsWith(LOCAL_PREFIX)) throw new SecretDecryptionError('not a local ciphertext');
      const bytes = Buffer.from(ciphertext.slice(LOCAL_PREFIX.length), 'base64');
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError('ciphertext too short');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(aadOf(context));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretDecryptionError('wrong key, wrong context, or altered ciphertext');
      }
    },
  };
}

/** The key file holds the 32 bytes as 64 hex characters (a trailing newline allowed). */
export function readLocalKey(file: string): Buffer {
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${file} must hold ${LOCAL_KEY_BYTES} bytes as ${LOCAL_KEY_BYTES * 2} hex characters`);
  return Buffer.from(text, 'hex');
}

let keyring: Keyring | undefined;

/** The keyring of this function, made on first use: KMS when the stage gave it a key, else the local key file. */
export function paymentSecretsKeyring(): Keyring {
  keyring ??= makeKeyring();
  return keyring;
}

function makeKeyring(): Keyring {
  const keyId = config.paymentSecretsKeyId;
  if (keyId) return kmsKeyring(new KMSClient({ region: config.region }), keyId);
  const file = config.paymentSecretsKeyFile;
  if (file) return localKeyring(readLocalKey(file));
  throw new Error('No payment secrets key: set PAYMENT_SECRETS_KEY_ID (AWS) or PAYMENT_SECRETS_KEY_FILE (local stack)');
}

/** Encrypts a provider account's secrets, all in one ciphertext. */
export async function sealSecrets(secrets: Readonly<Record<string, string>>, context: SecretContext, ring: Keyring = paymentSecretsKeyring()): Promise<string> {
  return ring.encrypt(JSON.stringify(secrets), context);
}

export async function openSecrets(ciphertext: string, context: SecretContext, ring: Keyring = paymentSecretsKeyring()): Promise<Record<string, string>> {
  const value = JSON.parse(await ring.decrypt(ciphertext, context)) as unknown;
  if (!value || typeof value !== 'object' || Object.values(value).some((entry) => typeof entry !== 'string')) throw new SecretDecryptionError('not a secrets object');
  return value as Record<string, string>;
}

/** Shorter than this, the last 4 characters would give away too much of a secret: only "..." is shown. */
const MASK_MIN_LENGTH = 12;

/** How a secret is shown once stored: `...` and its last 4 characters, so the operator can tell which one it is. */
export const maskSecret = (secret: string) => (secret.length >= MASK_MIN_LENGTH ? `...${secret.slice(-4)}` : '...');

export const maskSecrets = (secrets: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(secrets).map(([name, value]) => [name, maskSecret(value)]));
