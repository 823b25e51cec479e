/**
 * When unpaid checkout orders fall due, by the minute: the time arithmetic of the job that
 * cancels them (lib/flows/unpaid.ts), kept pure so a test gives it any `now`.
 */
export const MINUTE_MS = 60_000;
/** A checkout order still PENDING this long after it was placed is canceled. */
export const UNPAID_AFTER_MS = 30 * MINUTE_MS;
/** A first run (no state yet) looks back this far, so orders placed while nothing ran are not forgotten. */
const FIRST_RUN_LOOKBACK_MINUTES = 60;
/** A run handles at most this many minutes (one Query each); a job that was down catches up over a few runs. */
export const MINUTES_PER_RUN_MAX = 240;

/** The minute bucket of a moment: `2026-11-21T15:04`. */
export const minuteOf = (epochMs: number) => new Date(Math.floor(epochMs / MINUTE_MS) * MINUTE_MS).toISOString().slice(0, 16);

const startOf = (minute: string) => Date.parse(`${minute}:00.000Z`);

/**
 * The minute buckets a run at `now` handles, oldest first: every minute after `doneThrough` that
 * has fully passed (the current minute may still receive orders falling due in it).
 */
export function minutesToHandle(doneThrough: string | undefined, now: number): string[] {
  const last = startOf(minuteOf(now)) - MINUTE_MS;
  const first = doneThrough === undefined ? last - (FIRST_RUN_LOOKBACK_MINUTES - 1) * MINUTE_MS : startOf(doneThrough) + MINUTE_MS;
  const minutes: string[] = [];
  for (let at = first; at <= last && minutes.length < MINUTES_PER_RUN_MAX; at += MINUTE_MS) minutes.push(minuteOf(at));
  return minutes;
}
