import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local stack's server secret (lib/server-secret.ts): `<LOCAL_DIR>/server-secret.json`, made
 * on the first start with 64 random characters as `current`, readable by its owner only (0600),
 * kept across restarts, forgotten by `npm run reset` with the data it keyed (the next start makes
 * a new one). Each test run's stack has its own LOCAL_DIR, so its own secret.
 */
export const localServerSecretFile = (localDir: string) => join(localDir, 'server-secret.json');

export function ensureLocalServerSecret(localDir: string): string {
  const file = localServerSecretFile(localDir);
  try {
    // `wx`: never overwrite a secret that exists (a second start, or a rotation done by hand).
    writeFileSync(file, `${JSON.stringify({ current: randomBytes(48).toString('base64url') })}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}

/**
 * The local stack's key of the payment provider secrets (lib/payments/secrets.ts, the AES-256-GCM
 * keyring): `<LOCAL_DIR>/payment-secrets.key`, 32 random bytes as hex, mode 0600, made on the
 * first start and never overwritten (the secrets stored under it would no longer open).
 */
export function ensureLocalPaymentKey(localDir: string): string {
  const file = join(localDir, 'payment-secrets.key');
  try {
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}
