import { readFileSync } from 'node:fs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { wallClockMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import type { ServerKeys } from '#lib/crypto.ts';

/**
 * The server secret behind every keyed hash (lib/crypto.ts `keyedHash`): login codes, cursors,
 * quote ids. On AWS it is a Secrets Manager secret (`SERVER_SECRET_ARN`, given only to the
 * functions whose route says `uses: ['secret']`, the only ones whose imports reach this module,
 * so no other bundle carries the Secrets Manager client); on the local stack a file
 * (`SERVER_SECRET_FILE`, written with mode 0600 on first start). Its value is JSON
 * `{"current": "...", "previous"?: "..."}` (docs/operations.md, "The server secret": rotation).
 *
 * Read on first use, not at init (a function that never hashes never pays for it), then kept
 * for CACHE_MS: one GetSecretValue per container per 5 minutes, so a rotation reaches every
 * container within that time. The value is never logged, and errors name the source, never
 * the content.
 */
const CACHE_MS = 5 * 60 * 1000;
/** 32 characters at least: the generated secret has 64. */
const KEY_MIN_LENGTH = 32;

export function parseServerSecret(text: string, source: string): ServerKeys {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`The server secret (${source}) is not JSON`);
  }
  const { current, previous } = (value ?? {}) as Record<string, unknown>;
  const valid = (key: unknown) => typeof key === 'string' && key.length >= KEY_MIN_LENGTH;
  if (!valid(current) || (previous !== undefined && previous !== null && previous !== '' && !valid(previous))) {
    throw new Error(`The server secret (${source}) needs "current" (and an optional "previous") of at least ${KEY_MIN_LENGTH} characters`);
  }
  return valid(previous) ? { current: current as string, previous: previous as string } : { current: current as string };
}

let client: SecretsManagerClient | undefined;

async function readServerSecret(): Promise<ServerKeys> {
  const arn = config.serverSecretArn;
  if (arn) {
    client ??= new SecretsManagerClient({ region: config.region });
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    return parseServerSecret(SecretString ?? '', 'SERVER_SECRET_ARN');
  }
  const file = config.serverSecretFile;
  if (!file) throw new Error('No server secret: set SERVER_SECRET_ARN (AWS) or SERVER_SECRET_FILE (local stack)');
  return parseServerSecret(readFileSync(file, 'utf8'), file);
}

let cached: { keys: Promise<ServerKeys>; until: number } | undefined;

/** The server keys, read at most once per CACHE_MS per container (a failed read is not kept). */
export function serverKeys(now = wallClockMs()): Promise<ServerKeys> {
  if (cached && now < cached.until) return cached.keys;
  const keys = readServerSecret();
  const entry = { keys, until: now + CACHE_MS };
  cached = entry;
  keys.catch(() => {
    if (cached === entry) cached = undefined;
  });
  return keys;
}

export const SERVER_SECRET_CACHE_MS = CACHE_MS;
