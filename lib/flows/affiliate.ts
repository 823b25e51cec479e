import {
  affiliateNotFound,
  createAffiliate,
  loadMembership,
  recordWithdrawal,
  refCodeInUse,
  saveWithdrawSettings,
  type Affiliate,
} from '#lib/db/affiliate.ts';
import { findCustomer } from '#lib/db/customer.ts';
import { DEFAULT_AFFILIATE_SETTINGS } from '#lib/db/store.ts';
import { customerUnauthenticated, HttpError, unprocessable } from '#lib/errors.ts';
import { REF_CODE_MIN, type AffiliatePanel, type AffiliateTransaction, type WithdrawSettings } from '#lib/schemas/affiliate.ts';
import type { Customer } from '#lib/schemas/buyer.ts';

const UNSAVED_WITHDRAW_SETTINGS = { full_name: '', pix_key: '', pix_key_type: '', cpf_cnpj: '' };

/**
 * The buyer's side of the affiliate program. The panel reads name and e-mail from the customer
 * (so a renamed customer shows the new name) and the rest from the affiliate item.
 *
 * `d7_visits` is 0: no endpoint records referral visits yet. `links` holds one entry, the
 * main link `https://<store domain>/?ref=<ref_code>` (id = the affiliate id), whose sales and
 * revenue are the affiliate's totals; extra links per affiliate are not a feature yet.
 * `withdraw_settings` is stored null until saved; the panel shows it as four empty strings,
 * the spec's shape.
 */
export function toPanel(affiliate: Affiliate, customer: Customer, storeDomain: string): AffiliatePanel {
  return {
    status: 'affiliate',
    id: affiliate.id,
    name: customer.name,
    email: customer.email,
    ref_code: affiliate.ref_code,
    percent_commission: affiliate.percent_commission,
    balance: affiliate.balance,
    min_withdraw: affiliate.min_withdraw,
    withdraw_settings: affiliate.withdraw_settings ?? UNSAVED_WITHDRAW_SETTINGS,
    stats: { total_sales: affiliate.total_sales, total_amount: affiliate.total_amount, d7_visits: 0 },
    links: [
      {
        id: affiliate.id,
        name: 'Main link',
        ref_code: affiliate.ref_code,
        url: `https://${storeDomain}/?ref=${encodeURIComponent(affiliate.ref_code)}`,
        sales: affiliate.total_sales,
        revenue: affiliate.total_amount,
        d7_visits: 0,
      },
    ],
  };
}

/**
 * Join: 1 BatchGet (store, affiliate, customer, the code's sentinel), then for a new affiliate
 * 1 sequence ADD and 1 TransactWrite. A customer who already is an affiliate gets the panel,
 * whatever valid code is sent and even if self-registration has since been disabled. The
 * spec's refusals of a short code (422), of a store without self-registration (403) and of a
 * code in use (409) carry a message only.
 */
export async function joinAffiliate(storeId: number, customerId: number, storeDomain: string, refCode: string): Promise<AffiliatePanel> {
  if (refCode.length < REF_CODE_MIN) throw new HttpError(422, { message: `ref_code must be at least ${REF_CODE_MIN} characters` });
  const { affiliate, customer, store, refCodeTaken } = await loadMembership(storeId, customerId, { store: true, refCode });
  if (!customer) throw customerUnauthenticated();
  if (affiliate) return toPanel(affiliate, customer, storeDomain);
  const settings = store?.affiliate ?? DEFAULT_AFFILIATE_SETTINGS;
  if (!settings.self_registration) throw new HttpError(403, { message: 'Affiliate self-registration is disabled in this store' });
  if (refCodeTaken) throw refCodeInUse();
  const created = await createAffiliate(storeId, customerId, refCode, settings.percent_commission);
  if (created) return toPanel(created, customer, storeDomain);
  // The same customer joined concurrently and won: show that membership.
  const winner = (await loadMembership(storeId, customerId)).affiliate;
  if (!winner) throw new Error('affiliate creation lost to a membership that cannot be read');
  return toPanel(winner, customer, storeDomain);
}

/** 1 BatchGet. */
export async function getAffiliatePanel(storeId: number, customerId: number, storeDomain: string): Promise<AffiliatePanel> {
  const { affiliate, customer } = await loadMembership(storeId, customerId);
  if (!customer) throw customerUnauthenticated();
  if (!affiliate) throw affiliateNotFound();
  return toPanel(affiliate, customer, storeDomain);
}

/** 1 UpdateItem and 1 GetItem, in parallel. */
export async function updateWithdrawSettings(storeId: number, customerId: number, storeDomain: string, settings: WithdrawSettings) {
  const [affiliate, customer] = await Promise.all([saveWithdrawSettings(storeId, customerId, settings), findCustomer(storeId, customerId)]);
  if (!customer) throw customerUnauthenticated();
  return toPanel(affiliate, customer, storeDomain);
}

/**
 * 1 BatchGet (affiliate, customer, store), then 1 sequence ADD and 1 TransactWrite. The
 * balance read here only spares a doomed write; the conditional debit is what keeps concurrent
 * withdrawals from overdrawing.
 */
export async function requestWithdrawal(storeId: number, customerId: number, amount: number): Promise<AffiliateTransaction> {
  const { affiliate, store } = await loadMembership(storeId, customerId, { store: true });
  if (!affiliate) throw affiliateNotFound();
  if (!affiliate.withdraw_settings) {
    throw unprocessable('Save withdraw_settings with PATCH /v1/webstore/affiliate/me before withdrawing', 'withdraw_settings', 'WITHDRAW_SETTINGS_REQUIRED');
  }
  const minWithdraw = affiliate.min_withdraw ?? store?.affiliate.min_withdraw ?? DEFAULT_AFFILIATE_SETTINGS.min_withdraw;
  if (amount < minWithdraw) throw unprocessable(`amount must be at least ${minWithdraw}`, 'amount', 'BELOW_MIN_WITHDRAW');
  if (amount > affiliate.balance) throw unprocessable('amount is larger than the balance', 'amount', 'INSUFFICIENT_BALANCE');
  return recordWithdrawal(affiliate, amount, affiliate.withdraw_settings);
}
