import * as v from 'valibot';
import { email } from '#lib/schemas/buyer.ts';
import { pageOf, pageQueryEntries, patchBody, storableAmount, text, timestamp } from '#lib/schemas/common.ts';

export const REF_CODE_MIN = 3;
export const REF_CODE_MAX = 32;

/**
 * The spec fixes only "at least 3 characters". It travels in `?ref=` links, so it is bounded
 * to 32 characters of a URL-safe set (letters, digits, `_`, `-`); case is kept for display,
 * uniqueness ignores it. The minimum is only documented here (metadata): the spec answers a
 * short code with a message only, so the join checks it itself (lib/flows/affiliate.ts)
 * instead of leaving it to validation, whose errors carry VALIDATION_FAILED and a field.
 */
export const refCode = v.pipe(
  v.string('ref_code must be a string'),
  v.trim(),
  v.maxLength(REF_CODE_MAX, `ref_code must be at most ${REF_CODE_MAX} characters`),
  v.regex(/^[A-Za-z0-9_-]*$/, 'ref_code may contain only letters, digits, _ and -'),
  v.metadata({ minLength: REF_CODE_MIN }),
);

export const joinBody = v.strictObject({ ref_code: refCode });

/**
 * PIX key types: the spec shows CPF and EMAIL; the others are the remaining kinds of PIX key
 * (CNPJ, phone number, random key).
 */
export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const;
type PixKeyType = (typeof PIX_KEY_TYPES)[number];

const CPF = /^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/;
const CNPJ = /^\d{2}\.?\d{3}\.?\d{3}\/?\d{4}-?\d{2}$/;
const PIX_KEY_FORMATS: Record<PixKeyType, RegExp> = {
  CPF,
  CNPJ,
  EMAIL: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  PHONE: /^\+?\d{10,15}$/,
  RANDOM: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
};

export const pixKeyMatches = (type: PixKeyType, key: string) => PIX_KEY_FORMATS[type].test(key);

export const withdrawSettings = v.pipe(
  v.strictObject({
    full_name: text('full_name', 120),
    pix_key: text('pix_key', 140),
    pix_key_type: v.picklist(PIX_KEY_TYPES, `pix_key_type must be one of ${PIX_KEY_TYPES.join(', ')}`),
    cpf_cnpj: v.pipe(
      v.string('cpf_cnpj must be a string'),
      v.trim(),
      v.check((value) => CPF.test(value) || CNPJ.test(value), 'cpf_cnpj must be a CPF (11 digits) or a CNPJ (14 digits)'),
    ),
  }),
  v.forward(
    v.check((settings) => pixKeyMatches(settings.pix_key_type, settings.pix_key), 'pix_key does not have the format of its pix_key_type'),
    ['pix_key'],
  ),
);

export const affiliatePatchBody = v.strictObject({ withdraw_settings: withdrawSettings });

/** Currency amounts carry at most two decimals. */
const hasCents = (value: number) => Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;

export const withdrawBody = v.strictObject({
  amount: storableAmount(
    'amount',
    v.pipe(
      v.number('amount must be a number'),
      v.finite('amount must be a number'),
      v.gtValue(0, 'amount must be greater than 0'),
      v.check(hasCents, 'amount must have at most two decimals'),
    ),
  ),
});

export const AFFILIATE_PAGE_SIZE = 15;

/** A fixed page of 15: `limit` is not a parameter here. */
export const transactionsQuery = v.object({ page: pageQueryEntries().page });

const withdrawInfo = v.object({ full_name: v.string(), pix_key: v.string(), pix_key_type: v.string(), cpf_cnpj: v.string() });

export const AFFILIATE_STATUSES = ['affiliate', 'blocked'] as const;

export const affiliateLink = v.object({
  id: v.number(),
  name: v.string(),
  ref_code: v.string(),
  url: v.string(),
  sales: v.number(),
  revenue: v.number(),
  d7_visits: v.number(),
});

export const affiliatePanel = v.object({
  /** `blocked` (set by the operator): no commission, no withdrawal, no new link; its codes still work on orders. */
  status: v.picklist(AFFILIATE_STATUSES),
  id: v.number(),
  name: v.string(),
  email: v.string(),
  ref_code: v.string(),
  percent_commission: v.number(),
  balance: v.number(),
  min_withdraw: v.nullable(v.number()),
  /**
   * The spec types it as an object of four strings, so it is never null: until the affiliate
   * saves them with PATCH /webstore/affiliate/me each is an empty string.
   */
  withdraw_settings: withdrawInfo,
  stats: v.object({ total_sales: v.number(), total_amount: v.number(), d7_visits: v.number() }),
  /** The main code first (id = the affiliate's id), then the extra links in creation order. */
  links: v.array(affiliateLink),
});

export const orderPackage = v.object({ package_id: v.number(), name: v.string(), quantity: v.number() });

export const affiliateTransaction = v.object({
  id: v.number(),
  operation: v.picklist(['COMMISSION', 'COMMISSION_REVERSED', 'WITHDRAW_PENDING', 'WITHDRAW_PAID', 'WITHDRAW_REJECTED']),
  amount: v.number(),
  message: v.nullable(v.string()),
  order_id: v.nullable(v.number()),
  order_packages: v.optional(v.array(orderPackage)),
  withdraw_info: v.optional(withdrawInfo),
  created_at: timestamp,
});

export const transactionPage = pageOf(affiliateTransaction);

/** A ref_code with the spec's minimum checked by validation (the join checks it itself, for its message-only 422). */
const linkRefCode = v.pipe(refCode, v.minLength(REF_CODE_MIN, `ref_code must be at least ${REF_CODE_MIN} characters`));

export const linkBody = v.strictObject({ name: text('name', 60), ref_code: linkRefCode });
export const visitBody = v.strictObject({ ref_code: refCode });

const money = (name: string) =>
  storableAmount(name, v.pipe(v.number(`${name} must be a number`), v.finite(`${name} must be a number`), v.minValue(0, `${name} must be at least 0`)));

export const operatorAffiliatePatch = patchBody(
  v.strictObject({
    percent_commission: v.optional(
      storableAmount(
        'percent_commission',
        v.pipe(
          v.number('percent_commission must be a number'),
          v.finite('percent_commission must be a number'),
          v.minValue(0, 'percent_commission must be at least 0'),
          v.maxValue(100, 'percent_commission must be at most 100'),
        ),
      ),
    ),
    /** null: the store's min_withdraw applies. */
    min_withdraw: v.optional(v.nullable(money('min_withdraw'))),
    status: v.optional(v.picklist(AFFILIATE_STATUSES, 'status must be affiliate or blocked')),
  }),
);

export const affiliateListQuery = v.object({
  ...pageQueryEntries(),
  /** Case-insensitive prefix of the main code; empty means no filter. */
  ref_code: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(REF_CODE_MAX, `ref_code must be at most ${REF_CODE_MAX} characters`))),
  email: v.optional(email),
});

export const WITHDRAWAL_STATUSES = ['PENDING', 'PAID', 'REJECTED'] as const;

export const withdrawalListQuery = v.object({
  ...pageQueryEntries(),
  status: v.optional(v.picklist(WITHDRAWAL_STATUSES, 'status must be PENDING, PAID or REJECTED')),
});

export const rejectBody = v.strictObject({ message: text('message', 500) });

/** An operator's view of a withdrawal: the statement line and whose it is. */
export const withdrawalItem = v.object({ ...affiliateTransaction.entries, affiliate_id: v.number() });

export type WithdrawSettings = v.InferOutput<typeof withdrawSettings>;
export type AffiliatePanel = v.InferOutput<typeof affiliatePanel>;
export type AffiliateTransaction = v.InferOutput<typeof affiliateTransaction>;
export type OrderPackage = v.InferOutput<typeof orderPackage>;
export type AffiliateLink = v.InferOutput<typeof affiliateLink>;
export type OperatorAffiliatePatch = v.InferOutput<typeof operatorAffiliatePatch>;
export type AffiliateListQuery = v.InferOutput<typeof affiliateListQuery>;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];
