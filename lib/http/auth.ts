import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { currentTimeMs } from '#lib/clock.ts';
import { findCredential, findDomainAndCredential, isLastUseStale, noteCredentialUse, type Credential } from '#lib/db/credential.ts';
import { readSessionCookie } from '#lib/http/cookies.ts';
import { customerUnauthenticated, forbidden, HttpError, notFound, unauthenticated } from '#lib/errors.ts';
import { rememberStoreOrigins } from '#lib/http/cors.ts';
import type { CredentialKind, RouteSpec } from '#lib/http/route.ts';

export interface OperatorAuth {
  kind: 'operator';
  storeId: number;
  credentialId: number;
}
export interface ApiKeyAuth {
  kind: 'apiKey';
  storeId: number;
  credentialId: number;
  scopes: string[];
  /** The game server a `delivery` key is bound to (null for other keys). */
  serverId: number | null;
}
export interface BuyerAuth {
  kind: 'buyer' | 'session';
  storeId: number;
  customerId: number;
  domain: string;
  /** The secret as presented (logout revokes it); never logged or returned. */
  secret: string;
}
export interface StoreHostAuth {
  kind: 'buyerStore' | 'storeHost';
  storeId: number;
  domain: string;
  /** Session cookie if one was sent (logout ends it); never logged or returned. */
  secret?: string;
  /** The cookie is a live session of THIS store (false without a cookie, or for another store's, an expired or a made-up one). */
  sessionOfStore?: boolean;
}
/** A guest (`customerId` null) or a logged-in buyer of the store of `x-store-domain`. */
export interface OptionalBuyerAuth {
  kind: 'buyerOptional';
  storeId: number;
  domain: string;
  customerId: number | null;
}
export interface PublicAuth {
  kind: 'public';
}

export type AuthFor<K extends CredentialKind> = K extends 'operator'
  ? OperatorAuth
  : K extends 'apiKey'
    ? ApiKeyAuth
    : K extends 'buyer' | 'session'
      ? BuyerAuth
      : K extends 'buyerStore' | 'storeHost'
        ? StoreHostAuth
        : K extends 'buyerOptional'
          ? OptionalBuyerAuth
          : PublicAuth;

function bearer(event: APIGatewayProxyEventV2): string | undefined {
  const header = event.headers?.authorization ?? event.headers?.Authorization;
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/** The store domain of a store-domain request: the Host, without the port. */
export function hostDomain(event: APIGatewayProxyEventV2): string {
  const host = event.headers?.host ?? event.requestContext?.domainName ?? '';
  return host.replace(/:\d+$/, '').toLowerCase();
}

async function operatorOrKey(event: APIGatewayProxyEventV2): Promise<{ secret: string; credential: Credential }> {
  const secret = bearer(event);
  if (!secret) throw unauthenticated('Missing bearer credential');
  const credential = await findCredential(secret);
  if (!credential) throw unauthenticated('Unknown or revoked credential');
  return { secret, credential };
}

/** The "last used" marks being written, by request (`credentialUseNoted` waits for them). */
const usesBeingNoted = new WeakMap<APIGatewayProxyEventV2, Promise<unknown>>();

/**
 * An accepted API token or key whose "last used" mark is over an hour old gets it moved, beside
 * the request rather than before it: the write starts now and the handler stack waits for it
 * only at the end (`credentialUseNoted`), so a Lambda is not frozen with it half sent. Within the
 * hour nothing is written (lib/db/credential.ts). The mark is a courtesy: its failure fails no request.
 */
function noteUse(event: APIGatewayProxyEventV2, secret: string, credential: Credential): void {
  const now = currentTimeMs();
  if (isLastUseStale(credential, now))
    usesBeingNoted.set(
      event,
      noteCredentialUse(secret, now).catch(() => false),
    );
}

/** Resolves once the request's "last used" write (if it made one) has ended. */
export const credentialUseNoted = async (event: APIGatewayProxyEventV2): Promise<void> => {
  await usesBeingNoted.get(event);
};

/**
 * Resolves the route's credential or throws 401/403/404. Operator and key routes make one
 * GetItem (and, at most once an hour per credential, the UpdateItem of its "last used" mark);
 * buyer and session routes one BatchGetItem (the credential and the domain's store).
 */
export async function authenticate(route: RouteSpec, event: APIGatewayProxyEventV2): Promise<unknown> {
  switch (route.credential) {
    case 'public':
      return { kind: 'public' } satisfies PublicAuth;

    case 'operator': {
      const { secret, credential } = await operatorOrKey(event);
      if (credential.kind === 'api_key') throw forbidden('API keys cannot call operator endpoints; use an API token', 'FORBIDDEN');
      if (credential.kind !== 'api_token') throw unauthenticated('Unknown or revoked credential');
      noteUse(event, secret, credential);
      return { kind: 'operator', storeId: credential.store_id, credentialId: credential.credential_id ?? 0 } satisfies OperatorAuth;
    }

    case 'apiKey': {
      const { secret, credential } = await operatorOrKey(event);
      if (credential.kind === 'api_token') throw forbidden(`This endpoint needs an API key with scope ${route.scope}`, 'FORBIDDEN');
      if (credential.kind !== 'api_key') throw unauthenticated('Unknown or revoked credential');
      if (!route.scope || !(credential.scopes ?? []).includes(route.scope)) {
        throw forbidden(`This API key lacks the scope ${route.scope}`, 'INSUFFICIENT_SCOPE');
      }
      noteUse(event, secret, credential);
      return {
        kind: 'apiKey',
        storeId: credential.store_id,
        credentialId: credential.credential_id ?? 0,
        scopes: credential.scopes ?? [],
        serverId: credential.server_id ?? null,
      } satisfies ApiKeyAuth;
    }

    case 'buyer':
    case 'buyerStore':
    case 'buyerOptional': {
      const domain = event.headers?.['x-store-domain']?.trim().toLowerCase();
      if (!domain) {
        if (route.credential === 'buyer') throw customerUnauthenticated();
        throw new HttpError(400, { message: 'Header x-store-domain is required', code: 'STORE_DOMAIN_REQUIRED', field: 'x-store-domain' });
      }
      const secret = route.credential === 'buyerStore' ? undefined : bearer(event);
      if (route.credential === 'buyer' && !secret) throw customerUnauthenticated();
      const { store, credential } = await findDomainAndCredential(domain, secret);
      if (store === undefined) throw notFound('Store domain');
      rememberStoreOrigins(event, { domain, allowedOrigins: store.allowedOrigins });
      const { storeId } = store;
      if (route.credential === 'buyerStore') return { kind: 'buyerStore', storeId, domain } satisfies StoreHostAuth;
      // Without a token, a guest; a token sent must be valid (401 otherwise), never silently ignored.
      if (route.credential === 'buyerOptional' && !secret) return { kind: 'buyerOptional', storeId, domain, customerId: null } satisfies OptionalBuyerAuth;
      if (route.credential === 'buyerOptional')
        return { kind: 'buyerOptional', storeId, domain, customerId: buyerFrom('buyer', credential, storeId, domain, secret!).customerId } satisfies OptionalBuyerAuth;
      return buyerFrom('buyer', credential, storeId, domain, secret!);
    }

    case 'session':
    case 'storeHost': {
      const domain = hostDomain(event);
      const secret = readSessionCookie(event);
      const { store, credential } = await findDomainAndCredential(domain, secret);
      if (store === undefined) throw notFound('Store domain');
      const { storeId } = store;
      if (route.credential === 'storeHost') {
        const sessionOfStore = credential?.kind === 'session' && credential.store_id === storeId;
        return { kind: 'storeHost', storeId, domain, secret, sessionOfStore } satisfies StoreHostAuth;
      }
      if (!secret) throw customerUnauthenticated();
      return buyerFrom('session', credential, storeId, domain, secret);
    }
  }
}

function buyerFrom(kind: 'buyer' | 'session', credential: Credential | undefined, storeId: number, domain: string, secret: string): BuyerAuth {
  const expected = kind === 'buyer' ? 'buyer_token' : 'session';
  // A token of another store (or of another kind) is simply not valid here.
  if (!credential || credential.kind !== expected || credential.store_id !== storeId || credential.customer_id === undefined) {
    throw customerUnauthenticated();
  }
  return { kind, storeId, customerId: credential.customer_id, domain, secret };
}

/** The server a delivery route acts for: a `delivery` key not bound to a server opens nothing here. */
export function deliveryServer(auth: ApiKeyAuth): number {
  if (auth.serverId === null) throw forbidden('This API key is bound to no game server', 'FORBIDDEN');
  return auth.serverId;
}
