import * as v from 'valibot';
import { patchBody, storableAmount, text, timestamp } from '#lib/schemas/common.ts';
import { CHARGEBACK_ON } from '#lib/schemas/payment.ts';

/** A lower-case host name: labels of letters, digits and hyphens (`demo.localhost`, `shop.example.com`). */
export const domain = v.pipe(
  v.string('domain must be a string'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(253, 'domain must be at most 253 characters'),
  v.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/, 'domain must be a host name such as shop.example.com'),
);

export const ALLOWED_ORIGINS_MAX = 10;
const ORIGIN_MAX = 300;
const ORIGIN_SHAPE = /^https?:\/\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:(\d{1,5}))?$/;

/**
 * A web origin as browsers send it (`scheme://host[:port]`, http or https, no path), lower-cased
 * and without a default port (`https://a.example:443` is sent as `https://a.example`), so that
 * the comparison with a request's Origin header is exact.
 */
const origin = v.pipe(
  v.string('allowed_origins entries must be strings'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(ORIGIN_MAX, `allowed_origins entries must be at most ${ORIGIN_MAX} characters`),
  v.regex(ORIGIN_SHAPE, 'allowed_origins entries must be written scheme://host[:port], such as https://shop.example.com'),
  v.check((value) => Number(/:(\d+)$/.exec(value)?.[1] ?? 1) <= 65_535, 'the port of an origin must be at most 65535'),
  // The shape alone lets through hosts a URL refuses (a last label of digits is read as an IPv4 address: `http://a.b.6`).
  v.check((value) => URL.canParse(value), 'allowed_origins entries must be web origins a browser can send'),
  v.transform((value) => new URL(value).origin),
);

/** Duplicates collapse into one. */
const allowedOrigins = v.pipe(
  v.array(origin, 'allowed_origins must be an array of origins'),
  v.maxLength(ALLOWED_ORIGINS_MAX, `allowed_origins holds at most ${ALLOWED_ORIGINS_MAX} origins`),
  v.transform((origins) => [...new Set(origins)]),
);

const percent = storableAmount(
  'percent_commission',
  v.pipe(v.number('percent_commission must be a number'), v.minValue(0, 'percent_commission must be at least 0'), v.maxValue(100, 'percent_commission must be at most 100')),
);
const money = (name: string) => storableAmount(name, v.pipe(v.number(`${name} must be a number`), v.minValue(0, `${name} must be at least 0`)));

export const affiliateSettingsPatch = patchBody(
  v.strictObject({
    self_registration: v.optional(v.boolean('self_registration must be a boolean')),
    percent_commission: v.optional(percent),
    min_withdraw: v.optional(money('min_withdraw')),
  }),
);

/**
 * The currencies a store may price in: ISO 4217 codes (as the runtime's ICU knows them) with two
 * decimals, since every amount is kept to the cent and sent to providers as cents (JPY, with
 * none, or KWD, with three, would need amounts of another shape).
 */
let twoDecimalCurrencies: ReadonlySet<string> | undefined;
/** Built on the first check, not at init: every storefront function imports this module, few check a currency. */
export function isTwoDecimalCurrency(code: string): boolean {
  twoDecimalCurrencies ??= new Set(
    Intl.supportedValuesOf('currency').filter((known) => new Intl.NumberFormat('en', { style: 'currency', currency: known }).resolvedOptions().maximumFractionDigits === 2),
  );
  return twoDecimalCurrencies.has(code);
}
export const DEFAULT_CURRENCY = 'BRL';

export const currency = v.pipe(
  v.string('currency must be a string'),
  v.trim(),
  v.toUpperCase(),
  v.regex(/^[A-Z]{3}$/, 'currency must be an ISO 4217 code such as BRL'),
  v.check(isTwoDecimalCurrency, 'currency must be an ISO 4217 currency with two decimals, such as BRL, USD or EUR'),
);

export const DEFAULT_THEME = { primary_color: '#2563eb', logo: null, banner: null } as const;
const URL_MAX = 2048;

/** An image or page the store's pages show or link: an https URL (pages are served over https; a plain http image would be blocked as mixed content). */
const httpsUrl = (name: string) =>
  v.nullable(
    v.pipe(
      v.string(`${name} must be an https URL or null`),
      v.trim(),
      v.maxLength(URL_MAX, `${name} must be at most ${URL_MAX} characters`),
      v.check((value) => URL.canParse(value) && new URL(value).protocol === 'https:' && new URL(value).hostname !== '', `${name} must be an https URL or null`),
    ),
  );

export const themePatch = patchBody(
  v.strictObject({
    primary_color: v.optional(v.pipe(v.string('primary_color must be a string'), v.regex(/^#[0-9a-fA-F]{6}$/, 'primary_color must be a color written #rrggbb'), v.toLowerCase())),
    logo: v.optional(httpsUrl('logo')),
    banner: v.optional(httpsUrl('banner')),
  }),
);

export const paymentSettingsPatch = patchBody(
  v.strictObject({
    chargeback_on: v.optional(v.picklist(CHARGEBACK_ON, `chargeback_on must be one of ${CHARGEBACK_ON.join(', ')}`)),
  }),
);

export const storePatchBody = patchBody(
  v.strictObject({
    name: v.optional(text('name', 100)),
    domain: v.optional(domain),
    affiliate: v.optional(affiliateSettingsPatch),
    allowed_origins: v.optional(allowedOrigins),
    currency: v.optional(currency),
    theme: v.optional(themePatch),
    payments: v.optional(paymentSettingsPatch),
    terms_url: v.optional(httpsUrl('terms_url')),
  }),
);

/** The store's look, as pages and in-game clients read it (GET /webstore). */
export const storeTheme = v.object({ primary_color: v.string(), logo: v.nullable(v.string()), banner: v.nullable(v.string()) });

export const storeResource = v.object({
  id: v.number(),
  store_id: v.number(),
  name: v.string(),
  domain: v.string(),
  affiliate: v.object({ self_registration: v.boolean(), percent_commission: v.number(), min_withdraw: v.number() }),
  /** Web origins besides the store's own domain that may call the storefront from a browser (CORS). */
  allowed_origins: v.array(v.string()),
  /** ISO 4217: every price of the store is in it. */
  currency: v.string(),
  theme: storeTheme,
  payments: v.object({ chargeback_on: v.picklist(CHARGEBACK_ON) }),
  /** The store's terms of sale (https), or null: when set, a quote or checkout must carry `terms: true`. */
  terms_url: v.nullable(v.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

export type StorePatchBody = v.InferOutput<typeof storePatchBody>;
