import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The time of the request being served. On AWS it is always the wall clock. The local stack may
 * pin it for one request (header `x-local-now`, read only by infra/local/server.ts, never by a
 * Lambda), so that a test of "updated_at moves" or "a window of one minute" never sleeps.
 * Rules in lib/domain never call this: flows read the time once and pass it down.
 */
const pinned = new AsyncLocalStorage<number>();

export const currentTimeMs = (): number => pinned.getStore() ?? Date.now();
export const nowIso = (): string => new Date(currentTimeMs()).toISOString();

/**
 * The machine's clock, never pinned: for what times the process itself (a log line's timestamp, a
 * cache's expiry), never for what a rule decides. Every read of the time goes through this module.
 */
export const wallClockMs = (): number => Date.now();

/** Runs `work` with the clock pinned at `epochMs` (for itself and everything it awaits). */
export const atTime = <T>(epochMs: number, work: () => T): T => pinned.run(epochMs, work);
