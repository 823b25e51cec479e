import { createHash } from 'node:crypto';
import { affiliateNotFound, createAffiliate, findRefHolder, loadMembership, refCodeInUse, saveWithdrawSettings, type Affiliate, type VisitCounters } from '#lib/db/affiliate.ts';
import { addLink, countVisit, removeLink, visitAttribute } from '#lib/db/affiliate-link.ts';
import { createOnce } from '#lib/db/idempotency.ts';
import { rateWindow } from '#lib/db/rate-limit.ts';
import { DEFAULT_AFFILIATE_SETTINGS } from '#lib/db/store.ts';
import { recordWithdrawal, requestedWithdrawal } from '#lib/db/withdrawal.ts';
import { AFFILIATE_LINKS_MAX, assertActive, lastSevenDays, visitCounterExpiry, visitDay, VISIT_WINDOW_SECONDS } from '#lib/domain/affiliate.ts';
import { currentTimeMs } from '#lib/clock.ts';
import { customerUnauthenticated, HttpError, notFound, unprocessable } from '#lib/errors.ts';
import { REF_CODE_MIN, type AffiliateLink, type AffiliatePanel, type AffiliateTransaction, type WithdrawSettings } from '#lib/schemas/affiliate.ts';
import type { Customer } from '#lib/schemas/buyer.ts';

const UNSAVED_WITHDRAW_SETTINGS = { full_name: '', pix_key: '', pix_key_type: '', cpf_cnpj: '' };

/** Visits of one counter attribute (or of all of them) over the days read. */
const visitsOf = (visits: VisitCounters, attribute?: string) =>
  visits.reduce(
    (sum, day) =>
      sum + Object.entries(day).reduce((daySum, [name, value]) => daySum + ((attribute ? name === attribute : name === 'main' || /^c\d+$/.test(name)) ? Number(value) : 0), 0),
    0,
  );

const linkUrl = (storeDomain: string, refCode: string) => `https://${storeDomain}/?ref=${encodeURIComponent(refCode)}`;

/**
 * The panel, for the buyer and the operator alike. Name and e-mail come from the customer (a
 * renamed customer shows the new name), the rest from the affiliate item, `d7_visits` from the
 * daily counters of the last 7 days (`visits`). The main link's id is the affiliate's; its
 * sales and revenue are the main code's own, the stats are every code's. `withdraw_settings`
 * is stored null until saved; the panel shows it as four empty strings, the spec's shape.
 */
export function toPanel(affiliate: Affiliate, customer: Customer, storeDomain: string, visits: VisitCounters): AffiliatePanel {
  const main: AffiliateLink = {
    id: affiliate.id,
    name: 'Main link',
    ref_code: affiliate.ref_code,
    url: linkUrl(storeDomain, affiliate.ref_code),
    sales: affiliate.main_sales,
    revenue: affiliate.main_revenue,
    d7_visits: visitsOf(visits, visitAttribute(undefined)),
  };
  const links = Object.values(affiliate.links)
    .sort((a, b) => a.id - b.id)
    .map((link) => ({ ...link, url: linkUrl(storeDomain, link.ref_code), d7_visits: visitsOf(visits, visitAttribute(link.id)) }));
  return {
    status: affiliate.status,
    id: affiliate.id,
    name: customer.name,
    email: customer.email,
    ref_code: affiliate.ref_code,
    percent_commission: affiliate.percent_commission,
    balance: affiliate.balance,
    min_withdraw: affiliate.min_withdraw,
    withdraw_settings: affiliate.withdraw_settings ?? UNSAVED_WITHDRAW_SETTINGS,
    stats: { total_sales: affiliate.total_sales, total_amount: affiliate.total_amount, d7_visits: visitsOf(visits) },
    links: [main, ...links],
  };
}

/**
 * Join: 1 BatchGet (store, affiliate, customer, the code's sentinel, the visit counters), then
 * for a new affiliate 1 sequence ADD and 1 TransactWrite. A customer who already is an
 * affiliate gets the panel, whatever valid code is sent and even if self-registration has
 * since been disabled. The spec's refusals of a short code (422), of a store without
 * self-registration (403) and of a code in use (409) carry a message only.
 */
export async function joinAffiliate(storeId: number, customerId: number, storeDomain: string, refCode: string): Promise<AffiliatePanel> {
  if (refCode.length < REF_CODE_MIN) throw new HttpError(422, { message: `ref_code must be at least ${REF_CODE_MIN} characters` });
  const { affiliate, customer, store, refHolder, visits } = await loadMembership(storeId, customerId, { store: true, refCode, visitDays: lastSevenDays(currentTimeMs()) });
  if (!customer) throw customerUnauthenticated();
  if (affiliate) return toPanel(affiliate, customer, storeDomain, visits);
  const settings = store?.affiliate ?? DEFAULT_AFFILIATE_SETTINGS;
  if (!settings.self_registration) throw new HttpError(403, { message: 'Affiliate self-registration is disabled in this store' });
  // A BatchGet is not isolated from a transaction in progress: the sentinel of this customer's
  // own concurrent join may show without its affiliate item, and does not count as taken.
  if (refHolder && refHolder.customerId !== customerId) throw refCodeInUse();
  const created = await createAffiliate(storeId, customer, refCode, settings.percent_commission);
  if (created) return toPanel(created, customer, storeDomain, []);
  // The same customer joined concurrently and won: show that membership.
  const winner = (await loadMembership(storeId, customerId)).affiliate;
  if (!winner) throw new Error('affiliate creation lost to a membership that cannot be read');
  return toPanel(winner, customer, storeDomain, []);
}

/** 1 BatchGet (affiliate, customer, 7 visit counters). */
export async function getAffiliatePanel(storeId: number, customerId: number, storeDomain: string): Promise<AffiliatePanel> {
  const { affiliate, customer, visits } = await loadMembership(storeId, customerId, { visitDays: lastSevenDays(currentTimeMs()) });
  if (!customer) throw customerUnauthenticated();
  if (!affiliate) throw affiliateNotFound();
  return toPanel(affiliate, customer, storeDomain, visits);
}

/** 1 UpdateItem and 1 BatchGet (customer, visit counters), in parallel. */
export async function updateWithdrawSettings(storeId: number, customerId: number, storeDomain: string, settings: WithdrawSettings) {
  const [affiliate, { customer, visits }] = await Promise.all([
    saveWithdrawSettings(storeId, customerId, settings),
    loadMembership(storeId, customerId, { visitDays: lastSevenDays(currentTimeMs()) }),
  ]);
  if (!customer) throw customerUnauthenticated();
  return toPanel(affiliate, customer, storeDomain, visits);
}

/**
 * 1 BatchGet (affiliate, customer, store), then 1 sequence ADD and 1 TransactWrite. The
 * balance and status read here only spare a doomed write; the conditional debit is what keeps
 * concurrent withdrawals from overdrawing (and a just-blocked affiliate from withdrawing).
 * The retry of a request whose answer was lost (the same Idempotency-Key) answers the line it
 * wrote (1 GetItem), before any check its debit changed: not 422 on the lower balance.
 */
export async function requestWithdrawal(storeId: number, customerId: number, amount: number): Promise<AffiliateTransaction> {
  return createOnce(
    (transactionId: number) => requestedWithdrawal(storeId, customerId, transactionId),
    async (recordOnKey) => {
      const { affiliate, store } = await loadMembership(storeId, customerId, { store: true });
      if (!affiliate) throw affiliateNotFound();
      assertActive(affiliate, 'withdraw');
      if (!affiliate.withdraw_settings) {
        throw unprocessable('Save withdraw_settings with PATCH /v1/webstore/affiliate/me before withdrawing', 'withdraw_settings', 'WITHDRAW_SETTINGS_REQUIRED');
      }
      const minWithdraw = affiliate.min_withdraw ?? store?.affiliate.min_withdraw ?? DEFAULT_AFFILIATE_SETTINGS.min_withdraw;
      if (amount < minWithdraw) throw unprocessable(`amount must be at least ${minWithdraw}`, 'amount', 'BELOW_MIN_WITHDRAW');
      if (amount > affiliate.balance) throw unprocessable('amount is larger than the balance', 'amount', 'INSUFFICIENT_BALANCE');
      return recordWithdrawal(affiliate, amount, affiliate.withdraw_settings, recordOnKey);
    },
  );
}

/**
 * A new link: 1 sequence ADD + 1 TransactWrite, nothing read first. The write's own conditions
 * are the rules, and each failed one names its answer (lib/db/affiliate-link.ts `addLink`): no
 * affiliate 404, blocked 403, the code held by any affiliate or link 409, the 21st link 422, in
 * that order when several fail. A read before it could only spare a doomed write, at the price
 * of a call on every request that succeeds. The retry of a request whose answer was lost (the
 * same Idempotency-Key) answers the link it added, as it was answered (1 BatchGet): not 409 for
 * the code the link now holds.
 */
export async function createLink(storeId: number, customerId: number, storeDomain: string, body: { name: string; ref_code: string }): Promise<AffiliateLink> {
  const answer = (link: { id: number; name: string; ref_code: string }) => ({
    id: link.id,
    name: link.name,
    ref_code: link.ref_code,
    url: linkUrl(storeDomain, link.ref_code),
    sales: 0,
    revenue: 0,
    d7_visits: 0,
  });
  return createOnce(
    async (linkId: number) => {
      const link = (await loadMembership(storeId, customerId)).affiliate?.links[String(linkId)];
      if (!link) throw notFound('Link');
      return answer(link);
    },
    async (recordOnKey) => answer(await addLink(storeId, customerId, body.name, body.ref_code, AFFILIATE_LINKS_MAX, recordOnKey)),
  );
}

/** 1 BatchGet (affiliate, customer) + 1 TransactWrite. The main link is the affiliate's code itself: it cannot be deleted. */
export async function deleteLink(storeId: number, customerId: number, linkId: number): Promise<void> {
  const { affiliate, customer } = await loadMembership(storeId, customerId);
  if (!customer) throw customerUnauthenticated();
  if (!affiliate) throw affiliateNotFound();
  if (linkId === affiliate.id) throw unprocessable('The main link cannot be deleted', 'linkId', 'MAIN_LINK');
  const link = affiliate.links[String(linkId)];
  if (!link) throw notFound('Link');
  await removeLink(affiliate, link);
}

/**
 * A storefront page opened with `?ref=<code>`: 1 Get (the code's sentinel; 404 unknown) + 1
 * TransactWrite (the visitor's window + the day's counter). One visitor (source IP, stored
 * only as a hash) counts once per code per hour; a repeat is answered the same (204) and not
 * counted, so a script learns nothing and inflates nothing.
 */
export async function recordVisit(storeId: number, refCode: string, sourceIp: string): Promise<void> {
  const holder = await findRefHolder(storeId, refCode);
  if (!holder) throw new HttpError(404, { message: `ref_code ${refCode} is not a code of this store`, code: 'NOT_FOUND', field: 'ref_code' });
  const now = currentTimeMs();
  const visitor = createHash('sha256').update(sourceIp).digest('base64url').slice(0, 16);
  const window = rateWindow(storeId, `VISIT#${visitor}#${refCode.toLowerCase()}`, 1, VISIT_WINDOW_SECONDS, now);
  const day = visitDay(now);
  await countVisit(storeId, holder, day, visitCounterExpiry(day), window);
}
