import * as v from 'valibot';
import { processLocalKeys } from '#lib/crypto.ts';
import { type Credential, createApiKey, createApiToken, DELIVERY_SCOPE, findCredential, listOperatorCredentials, operatorRevokeDeletes, rotateApiKey } from '#lib/db/credential.ts';
import { nowIso } from '#lib/clock.ts';
import { fillCartIndex } from '#lib/db/cart-index.ts';
import { indexOrderClient } from '#lib/db/order.ts';
import { listPromos } from '#lib/db/promo.ts';
import { listVariables } from '#lib/db/variable.ts';
import { draftOf, promoReferences } from '#lib/domain/promo.ts';
import { ENTITY } from '#lib/schemas/entity.ts';
import { targetsWholeStore } from '#lib/schemas/promo.ts';
import { listOrdersByCursor, recountOrders } from '#lib/db/order-list.ts';
import { createServerKey, serverKeyRotation } from '#lib/db/server.ts';
import { createStore, getStore, listStores } from '#lib/db/store.ts';
import { writeGuarded } from '#lib/db/transact.ts';
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
  if (!result.success)
    throw new HttpError(
      422,
      result.issues.map((issue) => ({ message: issue.message })),
    );
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
async function credentialOfSecret(secret: string, kind: keyof typeof KIND_NAMES, storeFlag: string | undefined, action: string): Promise<Credential & { credential_id: number }> {
  const guard = storeFlag === undefined ? undefined : parsed(storeIdInput, storeFlag);
  const credential = await findCredential(secret);
  if (!credential || credential.kind !== kind || credential.credential_id === undefined) throw notFound(KIND_NAMES[kind]);
  if (guard !== undefined && guard !== credential.store_id) {
    throw new HttpError(422, { message: `--store ${guard} does not match: this ${KIND_NAMES[kind]} belongs to store ${credential.store_id}; nothing ${action}` });
  }
  return credential as Credential & { credential_id: number };
}

async function revokeBySecret(secret: string, kind: keyof typeof KIND_NAMES, storeFlag: string | undefined): Promise<{ revoked: true }> {
  const credential = await credentialOfSecret(secret, kind, storeFlag, 'revoked');
  await writeGuarded(operatorRevokeDeletes(secret, kind, credential.store_id, credential.credential_id, () => notFound(KIND_NAMES[kind])));
  return { revoked: true };
}

export type Flags = Record<string, string | undefined>;

/** A command's flags, as node:util parseArgs takes them (all strings), with the line `--help` prints. */
export interface AdminCommand {
  summary: string;
  flags: Record<string, { help: string; required?: true }>;
  /** What it prints, for `--help`. */
  prints: string;
  run(flags: Flags): Promise<unknown>;
}

const storeFlag = { help: 'the store id', required: true } as const;
const guardFlag = { help: 'a guard: must name the store the secret belongs to' } as const;

/** `token list` / `key list`: a store's live operator credentials, never a secret. */
const listCommand = (kind: keyof typeof KIND_NAMES, summary: string): AdminCommand => ({
  summary,
  flags: { store: storeFlag },
  prints: '{store_id, data: [{id, kind, scopes, server_id, created_at, last_used_at}]} (last_used_at: to the hour, null until first used)',
  run: async (flags) => {
    const storeId = await existingStore(flags.store);
    return { store_id: storeId, data: await listOperatorCredentials(storeId, kind) };
  },
});

export const adminCommands: Record<string, AdminCommand> = {
  'store create': {
    summary: 'Create a store and its first API token',
    flags: { name: { help: 'the store name (1-100 characters)', required: true }, domain: { help: 'its storefront domain, unique', required: true } },
    prints: '{store_id, domain, api_token}',
    run: async (flags) => {
      const input = parsed(storeInput, { name: flags.name, domain: flags.domain });
      const store = await createStore(input);
      const { api_token } = await createApiToken(store.id);
      return { store_id: store.id, domain: store.domain, api_token };
    },
  },
  'store list': {
    summary: 'List every store',
    flags: {},
    prints: '{data: [{id, name, domain, created_at}]}',
    run: async () => ({ data: await listStores() }),
  },
  'token list': listCommand('api_token', "List a store's API tokens (never their secrets)"),
  'key list': listCommand('api_key', "List a store's API keys, delivery keys included (never their secrets)"),
  'key rotate': {
    summary: 'Replace an API key by a new one with the same scopes (and server); the old one stops working at once',
    flags: { key: { help: 'the key to replace', required: true }, store: guardFlag },
    prints: '{store_id, key, credential_id, scopes, replaced: <old credential id>}',
    run: async (flags) => {
      const oldKey = parsed(secretInput('--key'), flags.key);
      const old = await credentialOfSecret(oldKey, 'api_key', flags.store, 'rotated');
      const serverId = old.server_id;
      const { key, credential_id, scopes } = await rotateApiKey(
        oldKey,
        old,
        () => notFound(KIND_NAMES.api_key),
        (hash, id) => (serverId === undefined ? [] : serverKeyRotation(old.store_id, serverId, old.credential_id, id, hash)),
      );
      return { store_id: old.store_id, key, credential_id, scopes, replaced: old.credential_id };
    },
  },
  'token create': {
    summary: 'Create an API token for a store',
    flags: { store: storeFlag },
    prints: '{store_id, api_token, credential_id}',
    run: async (flags) => {
      const storeId = await existingStore(flags.store);
      const { api_token, credential_id } = await createApiToken(storeId);
      return { store_id: storeId, api_token, credential_id };
    },
  },
  'token revoke': {
    summary: 'Revoke an API token (the token names its store)',
    flags: { token: { help: 'the token to revoke', required: true }, store: guardFlag },
    prints: '{revoked: true}',
    run: (flags) => revokeBySecret(parsed(secretInput('--token'), flags.token), 'api_token', flags.store),
  },
  'key create': {
    summary: 'Create an API key: customers:identify for the store, or delivery for one game server',
    flags: { store: storeFlag, scope: { help: KNOWN_SCOPES.join(' | '), required: true }, server: { help: 'the game server (only with --scope delivery)' } },
    prints: '{store_id, key, credential_id, scopes} (and server_id for a delivery key)',
    run: async (flags) => {
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
  },
  /**
   * Gives every order of the store written before the client_identifier index its entry (so that
   * `GET /v1/app/order?client_identifier=` finds it): pages of 200 through the store's orders, one
   * conditional update per order lacking it. Idempotent; safe to run while the store takes orders
   * (new ones are indexed when written).
   */
  'order index-clients': {
    summary: 'Index the client_identifier of orders written before that filter existed (once; idempotent)',
    flags: { store: storeFlag },
    prints: '{store_id, orders, indexed}',
    run: async (flags) => {
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
  },
  /**
   * Counts the order list's totals again from the orders (the base counter item, less what its
   * shards hold): a repair for a total left wrong, e.g. a store older than the counts first counted
   * by a list function of before the shards while order writes of after them ran (docs/operations.md).
   * Safe while the store takes orders: a count that a move straddles stores nothing, the next read counts again.
   */
  'order recount': {
    summary: "Count a store's order list totals again from its orders (a repair; safe while it takes orders)",
    flags: { store: storeFlag },
    prints: '{store_id, total, by_status}',
    run: async (flags) => {
      const storeId = await existingStore(flags.store);
      return { store_id: storeId, ...(await recountOrders(storeId)) };
    },
  },
  /**
   * Fills the promo and variable ids that carts look up (lib/db/cart-index.ts) for a store created
   * before they existed, then marks the store so its carts use them; until then they read every
   * promo and variable, as before. Idempotent (set ADDs); safe while the store takes orders and its
   * operator edits promos (their writes keep the sets too).
   */
  'cart-index': {
    summary: "Index a store's promos and variables by the packages they apply to, for its carts (stores older than the index; once; idempotent)",
    flags: { store: storeFlag },
    prints: '{store_id, promos, variables, writes}',
    run: async (flags) => {
      const storeId = await existingStore(flags.store);
      const [promos, variables] = await Promise.all([listPromos(storeId), listVariables(storeId)]);
      const referrers = [
        ...promos.map((promo) => ({ set: 'promo_ids' as const, id: promo.id, storeWide: targetsWholeStore(promo), references: promoReferences(draftOf(promo)) })),
        ...variables.map((variable) => ({
          set: 'variable_ids' as const,
          id: variable.id,
          storeWide: variable.applies_to === null,
          references: (variable.applies_to ?? []).map((id) => ({ kind: ENTITY.PACKAGE, id, field: 'applies_to' })),
        })),
      ];
      const writes = await fillCartIndex(storeId, referrers, nowIso());
      return { store_id: storeId, promos: promos.length, variables: variables.length, writes };
    },
  },
  'key revoke': {
    summary: 'Revoke an API key (the key names its store)',
    flags: { key: { help: 'the key to revoke', required: true }, store: guardFlag },
    prints: '{revoked: true}',
    run: (flags) => revokeBySecret(parsed(secretInput('--key'), flags.key), 'api_key', flags.store),
  },
};
