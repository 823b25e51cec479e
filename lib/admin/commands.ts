import * as v from 'valibot';
import { processLocalKeys } from '#lib/crypto.ts';
import { createApiKey, createApiToken, DELIVERY_SCOPE, findCredential, revokeCredential } from '#lib/db/credential.ts';
import { indexOrderClient } from '#lib/db/order.ts';
import { listOrdersByCursor } from '#lib/db/order-list.ts';
import { createServerKey } from '#lib/db/server.ts';
import { createStore, getStore } from '#lib/db/store.ts';
import { HttpError, notFound } from '#lib/errors.ts';
import { PAGE_SIZE_MAX, type OrderCursorPage } from '#lib/schemas/order.ts';
import { domain } from '#lib/schemas/store.ts';

/**
 * The operations of the admin command line (extensions section 2), apart from argument
 * parsing so that each one is a plain function with validated input.
 */
export const KNOWN_SCOPES = ['customers:identify', 'delivery'] as const;

const storeInput = v.object({
  name: v.pipe(v.string('--name is required'), v.trim(), v.minLength(1, '--name is required'), v.maxLength(100, '--name must be at most 100 characters')),
  domain: v.pipe(v.string('--domain is required'), domain),
});
const storeIdInput = v.pipe(v.string('--store is required'), v.regex(/^[1-9]\d*$/, '--store must be a store id'), v.transform(Number));
const serverIdInput = v.pipe(v.string('--server is required with --scope delivery'), v.regex(/^[1-9]\d*$/, '--server must be a server id'), v.transform(Number));
const scopeInput = v.picklist(KNOWN_SCOPES, `--scope must be one of: ${KNOWN_SCOPES.join(', ')}`);
const secretInput = (flag: string) => v.pipe(v.string(`${flag} is required`), v.minLength(1, `${flag} is required`));

function parsed<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw new HttpError(422, result.issues.map((issue) => ({ message: issue.message })));
  return result.output;
}

async function existingStore(flag: string | undefined): Promise<number> {
  const storeId = parsed(storeIdInput, flag);
  if (!(await getStore(storeId))) throw notFound('Store');
  return storeId;
}

const KIND_NAMES = { api_token: 'API token', api_key: 'API key' } as const;

/**
 * `token revoke` / `key revoke` (extensions section 2): the secret names its credential and
 * its store, so `--store` is not needed; given, it is a guard that must name that store (422,
 * nothing revoked, otherwise). The revoke is still a delete conditioned on kind and store (as every
 * revoke, lib/db/credential.ts), with the store the lookup read.
 */
async function revokeBySecret(secret: string, kind: keyof typeof KIND_NAMES, storeFlag: string | undefined): Promise<{ revoked: true }> {
  const guard = storeFlag === undefined ? undefined : parsed(storeIdInput, storeFlag);
  const credential = await findCredential(secret);
  if (!credential || credential.kind !== kind) throw notFound(KIND_NAMES[kind]);
  if (guard !== undefined && guard !== credential.store_id) {
    throw new HttpError(422, { message: `--store ${guard} does not match: this ${KIND_NAMES[kind]} belongs to store ${credential.store_id}; nothing revoked` });
  }
  if (!(await revokeCredential(secret, kind, credential.store_id))) throw notFound(KIND_NAMES[kind]);
  return { revoked: true };
}

export type Flags = Record<string, string | undefined>;

export const adminCommands: Record<string, (flags: Flags) => Promise<unknown>> = {
  async 'store create'(flags) {
    const input = parsed(storeInput, { name: flags.name, domain: flags.domain });
    const store = await createStore(input);
    const { api_token } = await createApiToken(store.id);
    return { store_id: store.id, domain: store.domain, api_token };
  },
  async 'token create'(flags) {
    const storeId = await existingStore(flags.store);
    const { api_token, credential_id } = await createApiToken(storeId);
    return { store_id: storeId, api_token, credential_id };
  },
  'token revoke': (flags) => revokeBySecret(parsed(secretInput('--token'), flags.token), 'api_token', flags.store),
  async 'key create'(flags) {
    const storeId = await existingStore(flags.store);
    const scope = parsed(scopeInput, flags.scope);
    // A delivery key acts for one game server; other scopes belong to the store.
    if (scope === DELIVERY_SCOPE) {
      const serverId = parsed(serverIdInput, flags.server);
      const { key, credential_id } = await createServerKey(storeId, serverId);
      return { store_id: storeId, server_id: serverId, key, credential_id, scopes: [scope] };
    }
    if (flags.server !== undefined) throw new HttpError(422, { message: `--server goes only with --scope ${DELIVERY_SCOPE}` });
    const { key, credential_id, scopes } = await createApiKey(storeId, [scope]);
    return { store_id: storeId, key, credential_id, scopes };
  },
  /**
   * Gives every order of the store written before the client_identifier index its entry (so that
   * `GET /v1/app/order?client_identifier=` finds it): pages of 200 through the store's orders, one
   * conditional update per order lacking it. Idempotent; safe to run while the store takes orders
   * (new ones are indexed when written).
   */
  async 'order index-clients'(flags) {
    const storeId = await existingStore(flags.store);
    let orders = 0;
    let indexed = 0;
    const keys = processLocalKeys();
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page: OrderCursorPage = await listOrdersByCursor(storeId, {}, cursor, PAGE_SIZE_MAX, keys);
      const written = await Promise.all(page.data.map((order) => indexOrderClient(order)));
      orders += page.data.length;
      indexed += written.filter(Boolean).length;
      cursor = page.next_cursor;
    }
    return { store_id: storeId, orders, indexed };
  },
  'key revoke': (flags) => revokeBySecret(parsed(secretInput('--key'), flags.key), 'api_key', flags.store),
};
