import { commissionOf } from '#lib/domain/pricing.ts';
import { conflict, forbidden } from '#lib/errors.ts';

/**
 * The affiliate program's pure rules (section 11): who earns a commission, how a withdrawal is
 * settled, which days `d7_visits` sums. Time is a parameter; nothing here reads or writes.
 */

export type AffiliateStatus = 'affiliate' | 'blocked';

/** At most this many links besides the main code. */
export const AFFILIATE_LINKS_MAX = 20;

/** Days a daily visit counter is kept: the 7 summed plus one of slack for clocks and TTL. */
export const VISIT_COUNTER_DAYS = 8;

/** The window within which one visitor's repeated visits of one code count once. */
export const VISIT_WINDOW_SECONDS = 3600;

/**
 * The commission an approved order earns, or null for none: a blocked affiliate earns nothing,
 * and neither does an order placed under the affiliate's own e-mail (rule 9: ignoring case).
 */
export function commissionDue(affiliate: { status?: AffiliateStatus; email?: string; percent_commission: number }, order: { client_email: string; total: number }): number | null {
  if (affiliate.status === 'blocked') return null;
  if (affiliate.email !== undefined && affiliate.email.toLowerCase() === order.client_email.toLowerCase()) return null;
  return commissionOf(order.total, affiliate.percent_commission);
}

/** A blocked affiliate keeps its panel and its codes but may not withdraw or add links. */
export function assertActive(affiliate: { status?: AffiliateStatus }, action: string): void {
  if (affiliate.status === 'blocked') throw forbidden(`This affiliate is blocked and cannot ${action}`, 'AFFILIATE_BLOCKED');
}

export type WithdrawalAction = 'pay' | 'reject';
export type WithdrawalOperation = 'WITHDRAW_PENDING' | 'WITHDRAW_PAID' | 'WITHDRAW_REJECTED';

const OUTCOME: Record<WithdrawalAction, WithdrawalOperation> = { pay: 'WITHDRAW_PAID', reject: 'WITHDRAW_REJECTED' };

/**
 * What `action` does to a withdrawal in `operation`: a pending one is settled; the same action
 * again changes nothing (the caller answers the transaction); the other action is a 409.
 */
export function settlement(operation: string, action: WithdrawalAction): 'apply' | 'already' {
  if (operation === 'WITHDRAW_PENDING') return 'apply';
  if (operation === OUTCOME[action]) return 'already';
  throw conflict(`This withdrawal is already ${operation === 'WITHDRAW_PAID' ? 'paid' : 'rejected'}`);
}

/** The UTC day (`YYYY-MM-DD`) a visit at `now` is counted in. */
export const visitDay = (now: number) => new Date(now).toISOString().slice(0, 10);

/** The 7 days `d7_visits` sums: the day of `now` and the 6 before it. */
export function lastSevenDays(now: number): string[] {
  const day = 86_400_000;
  return Array.from({ length: 7 }, (_, back) => visitDay(now - back * day));
}

/** Epoch seconds after which the counter of `day` is no longer read (its TTL). */
export const visitCounterExpiry = (day: string) => Math.floor(Date.parse(`${day}T00:00:00.000Z`) / 1000) + VISIT_COUNTER_DAYS * 86_400;
