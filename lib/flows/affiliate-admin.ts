import {
  affiliateNotFound,
  customerOfAffiliate,
  affiliatePage,
  listAffiliatesByCode,
  listAffiliatesByEmail,
  loadMembership,
  loadPanelsOf,
  patchAffiliate,
} from '#lib/db/affiliate.ts';
import type { Store } from '#lib/db/store.ts';
import { retrying } from '#lib/db/transact.ts';
import { getWithdrawal, markPaid, markRejected, withdrawalPage, type Withdrawal } from '#lib/db/withdrawal.ts';
import { lastSevenDays, settlement, type WithdrawalAction } from '#lib/domain/affiliate.ts';
import { currentTimeMs, nowIso } from '#lib/clock.ts';
import { notFound } from '#lib/errors.ts';
import { toPanel } from '#lib/flows/affiliate.ts';
import type { AffiliateListQuery, AffiliatePanel, OperatorAffiliatePatch, WithdrawalStatus } from '#lib/schemas/affiliate.ts';

/*
 * The operator's side of the affiliate program (section 11). Calls exclude the credential lookup.
 *
 * | use case         | calls                                                                                 |
 * |------------------|---------------------------------------------------------------------------------------|
 * | list             | the counter + Query with Limit (unfiltered), or Query GSI1 (code prefix) or GSI2 (e-mail); then one BatchGet: the store (its domain, for the links' URLs), the page's customers and 7 visit counters each (2 past 12 affiliates): 3 (2 filtered; none after an empty page) |
 * | get              | Get id sentinel, then BatchGet (affiliate, customer, 7 counters, store): 2         |
 * | patch            | Get id sentinel, then UpdateItem + BatchGet (customer, counters, store): 3          |
 *
 * The store's domain rides in the BatchGet the panels need anyway: reading it apart, even in
 * parallel, is one more call for the same answer.
 * | list withdrawals | Query GSI1, or GSI2 by status: 1                                                      |
 * | pay / reject     | Get pointer + Get line + UpdateItem (pay) or TransactWrite (reject): 3; settled already: 2 |
 */

/** Panels answer with links on the store's own domain, which the operator's token does not carry; it is read in the panels' BatchGet. */
function domainOf(store: Store | undefined): string {
  if (!store) throw notFound('Store');
  return store.domain;
}

async function customerIdOf(storeId: number, affiliateId: number): Promise<number> {
  const customerId = await customerOfAffiliate(storeId, affiliateId);
  if (customerId === undefined) throw affiliateNotFound();
  return customerId;
}

/** The affiliates matching the filters (main code prefix, e-mail), in main-code order, one page of panels. */
export async function listAffiliatePanels(storeId: number, query: AffiliateListQuery): Promise<{ total: number; data: AffiliatePanel[] }> {
  const prefix = query.ref_code ?? '';
  const filtered = async () => {
    const found = query.email ? await listAffiliatesByEmail(storeId, query.email) : await listAffiliatesByCode(storeId, prefix);
    const matching = found.filter((affiliate) => affiliate.ref_code.toLowerCase().startsWith(prefix.toLowerCase()));
    const start = (query.page - 1) * query.limit;
    return { total: matching.length, data: matching.slice(start, start + query.limit) };
  };
  // Unfiltered, the page and its counted total; filtered, what matches (one e-mail's, or one code prefix's) is read for its total.
  const { total, data: page } = query.email || prefix ? await filtered() : await affiliatePage(storeId, query.page, query.limit);
  if (page.length === 0) return { total, data: [] };
  const { store, panels } = await loadPanelsOf(storeId, page, lastSevenDays(currentTimeMs()));
  const domain = domainOf(store);
  return {
    total,
    // A customer item is never deleted while its affiliate exists; one missing is skipped rather than shown half.
    data: panels.flatMap(({ affiliate, customer, visits }) => (customer ? [toPanel(affiliate, customer, domain, visits)] : [])),
  };
}

export async function getAffiliateById(storeId: number, affiliateId: number): Promise<AffiliatePanel> {
  const customerId = await customerIdOf(storeId, affiliateId);
  const { affiliate, customer, visits, store } = await loadMembership(storeId, customerId, { store: true, visitDays: lastSevenDays(currentTimeMs()) });
  if (!affiliate || !customer) throw affiliateNotFound();
  return toPanel(affiliate, customer, domainOf(store), visits);
}

export async function updateAffiliate(storeId: number, affiliateId: number, patch: OperatorAffiliatePatch): Promise<AffiliatePanel> {
  const customerId = await customerIdOf(storeId, affiliateId);
  const [affiliate, { customer, visits, store }] = await Promise.all([
    patchAffiliate(storeId, customerId, patch),
    loadMembership(storeId, customerId, { store: true, visitDays: lastSevenDays(currentTimeMs()) }),
  ]);
  if (!customer) throw affiliateNotFound();
  return toPanel(affiliate, customer, domainOf(store), visits);
}

export const storeWithdrawalPage = (storeId: number, status: WithdrawalStatus | undefined, page: number, limit: number) => withdrawalPage(storeId, status, page, limit);

/**
 * Pays or rejects a pending withdrawal, exactly once however many requests race: each reads
 * the line, lets `settlement` decide, and writes conditioned on the line still being pending;
 * a loser reads again and answers the line as it now is (same action) or 409 (the other).
 */
export function settleWithdrawal(storeId: number, transactionId: number, action: WithdrawalAction, message: string | null): Promise<Withdrawal> {
  return retrying(async () => {
    const withdrawal = await getWithdrawal(storeId, transactionId);
    if (settlement(withdrawal.operation, action) === 'already') return withdrawal;
    return action === 'pay' ? markPaid(storeId, withdrawal, nowIso()) : markRejected(storeId, withdrawal, message ?? '', nowIso());
  });
}
