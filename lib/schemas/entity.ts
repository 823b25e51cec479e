/**
 * The names of the stored entities: the `entity` attribute of every item of the single table, and
 * the prefix of the sort keys of those filed by id (`TAG#000000000042`). Written here once, in one
 * casing, and nowhere else (test/unit/layers.test.ts fails on a literal elsewhere): each lib/db
 * module's definition reads its name from here, and so do the webhook rules (lib/domain/webhook.ts)
 * and the stream's entity filter (infra), which lib/db may not be imported by. This module sits in
 * the bottom layer for that reason.
 *
 * Items written before the names had one casing keep their old `entity` value (`store`,
 * `credential`, `affiliate_transaction`, ...). No read selects those by name: only the stream
 * reads `entity`, and only for changes that old items no longer make (EVENT_SOURCE_ENTITY in
 * lib/domain/webhook.ts: an affiliate transaction is an event only when it is created).
 */
export const ENTITY = {
  AFFILIATE: 'AFFILIATE',
  AFFILIATE_COMMISSION: 'AFFILIATE_COMMISSION',
  AFFILIATE_ID: 'AFFILIATE_ID',
  AFFILIATE_REF: 'AFFILIATE_REF',
  AFFILIATE_TRANSACTION: 'AFFILIATE_TRANSACTION',
  /** Which promos target the whole store and which variables apply to every package (lib/db/cart-index.ts). */
  CART_INDEX: 'CART_INDEX',
  CATEGORY: 'CATEGORY',
  CHAT_MESSAGE: 'CHAT_MESSAGE',
  CHAT_STATE: 'CHAT_STATE',
  COMMAND: 'COMMAND',
  COMMAND_CHAIN: 'COMMAND_CHAIN',
  COUPON: 'COUPON',
  COUPON_CLIENT: 'COUPON_CLIENT',
  CREDENTIAL: 'CREDENTIAL',
  /** An operator credential's entry in its store's list (admin `token list`, `key list`): never the secret. */
  CREDENTIAL_ENTRY: 'CREDENTIAL_ENTRY',
  CUSTOMER: 'CUSTOMER',
  CUSTOMER_EMAIL: 'CUSTOMER_EMAIL',
  CUSTOMER_LIMIT: 'CUSTOMER_LIMIT',
  DISCOUNT: 'DISCOUNT',
  DOMAIN: 'DOMAIN',
  HANDOFF: 'HANDOFF',
  IDEMPOTENCY: 'IDEMPOTENCY',
  JOB_STATE: 'JOB_STATE',
  LEASE: 'LEASE',
  LOGIN_CODE: 'LOGIN_CODE',
  NOTE: 'NOTE',
  /** A player with offline-only commands in one claim queue (lib/db/offline-roster.ts). */
  OFFLINE_PLAYER: 'OFFLINE_PLAYER',
  ORDER: 'ORDER',
  ORDER_INTERNAL: 'ORDER_INTERNAL',
  ORIGIN: 'ORIGIN',
  PACKAGE: 'PACKAGE',
  PAYMENT: 'PAYMENT',
  PAYMENT_ASK: 'PAYMENT_ASK',
  PAYMENT_LIVE: 'PAYMENT_LIVE',
  /** How many payments an order has had: the condition that makes racing requests for a payment create one. */
  PAYMENT_COUNT: 'PAYMENT_COUNT',
  PAYMENT_NOTIFY_KEY: 'PAYMENT_NOTIFY_KEY',
  PAYMENT_PROVIDER: 'PAYMENT_PROVIDER',
  PAYMENT_REF: 'PAYMENT_REF',
  PROMO: 'PROMO',
  QUOTE: 'QUOTE',
  SERVER: 'SERVER',
  SERVER_KEY: 'SERVER_KEY',
  STORE: 'STORE',
  TAG: 'TAG',
  TEST_CHARGE: 'TEST_CHARGE',
  /** A TEST charge's ref -> its account and store: how the TEST page finds a charge (the ledger is filed by account). */
  TEST_CHARGE_REF: 'TEST_CHARGE_REF',
  UNPAID: 'UNPAID',
  VARIABLE: 'VARIABLE',
  VARIABLE_NAME: 'VARNAME',
  WEBHOOK: 'WEBHOOK',
  WEBHOOK_DELIVERY: 'WEBHOOK_DELIVERY',
  WEBHOOK_EVENT: 'WEBHOOK_EVENT',
  WEBHOOK_REDELIVERY: 'WEBHOOK_REDELIVERY',
  WEBHOOK_TASK: 'WEBHOOK_TASK',
  WITHDRAWAL: 'WITHDRAWAL',
} as const;

export type EntityName = (typeof ENTITY)[keyof typeof ENTITY];

/** Every entity name, for the checks that read them all (the layer test's literal rule). */
export const ENTITIES: readonly EntityName[] = Object.values(ENTITY);
