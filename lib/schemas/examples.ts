/*
 * The values the OpenAPI document's examples are made of (lib/openapi.ts `exampleOf` composes each
 * request and response example from its schema, taking a leaf's value from here by its property
 * name). They are the demo store's (infra/local/seed.ts): the VIP rank of the Ranks category, the
 * buyer Steve, the affiliate code ana_games, the Brazilian real. test/unit/openapi-examples.test.ts
 * parses every composed example with its route's own valibot schema, so a value that stops fitting
 * its schema fails there rather than misleading a reader.
 */

/** One instant for every timestamp of the examples: an order placed, approved and delivered in the same minute reads true. */
export const EXAMPLE_TIMESTAMP = '2026-11-20T14:03:00.000Z';

/** A leaf's value by its property name, for strings and numbers whose name says what they hold. */
export const EXAMPLE_VALUES: Readonly<Record<string, string | number | boolean>> = {
  // Who and where
  name: 'VIP rank',
  package_name: 'VIP rank',
  description: 'Colored name, /kit vip every day.',
  domain: 'demo.localhost',
  active_domain: 'demo.localhost',
  allowed_origins: 'https://shop.example.com',
  email: 'buyer@demo.localhost',
  client_email: 'buyer@demo.localhost',
  client_name: 'Steve',
  client_identifier: 'Steve',
  sender_name: 'Steve',
  full_name: 'Ana Souza',
  client_document: '123.456.789-09',
  cpf_cnpj: '123.456.789-09',
  client_phone: '+55 11 91234-5678',
  client_social: 'steve#1234',
  social_id: '1234567890',
  pix_key: 'ana@example.com',
  pix_key_type: 'EMAIL',
  server_name: 'Survival',
  online: 'Steve',
  // A status where its schema has it (a payment, a command, an order being paid)
  status: 'PENDING',
  // Catalog
  color: '#6366f1',
  primary_color: '#6366f1',
  command: 'lp user {client_identifier} parent add vip',
  code: 'WELCOME10',
  coupon: 'WELCOME10',
  ref_code: 'ana_games',
  currency: 'BRL',
  gateway: 'PIX',
  display: 'Pix',
  value: 'survival',
  regex: '^[A-Za-z0-9_]{3,16}$',
  bracket_display: 'Survival',
  restricted_to: 'Survival',
  content_type: 'image/svg+xml',
  // Money and counts
  price: 9.99,
  total: 17.98,
  per_page: 20,
  unit_price: 9.99,
  options_price: 0,
  amount: 19.98,
  total_amount: 17.98,
  subtotal: 19.98,
  discount: 2,
  promo_discount: 2,
  coupon_discount: 0,
  min_price: 9.99,
  min_amount: 2,
  min_withdraw: 10,
  balance: 12.5,
  revenue: 19.98,
  sales: 2,
  total_sales: 2,
  percent_commission: 10,
  reward_value: 10,
  reward_type: 'PERCENTAGE',
  stock: 25,
  quantity: 2,
  uses: 1,
  max_uses: 100,
  max_uses_per_client: 1,
  per_customer_limit: 1,
  expiry_days: 30,
  delay_seconds: 0,
  lease_seconds: 60,
  expires_in: 2592000,
  status_code: 204,
  duration_ms: 84,
  d7_visits: 12,
  // Texts and links
  message: 'Thanks, the rank arrived!',
  content: 'Paid by Pix, delivered at once.',
  response: 'Added Steve to group vip',
  url: 'https://hooks.example.com/store',
  image: 'https://images.example.com/store/1/package/1.svg',
  logo: 'https://images.example.com/store/1/logo.svg',
  banner: 'https://images.example.com/store/1/banner.svg',
  avatar: 'https://images.example.com/avatar/steve.png',
  terms_url: 'https://demo.localhost/terms',
  first_page_url: 'https://demo.localhost/v1/app/package?page=1',
  last_page_url: 'https://demo.localhost/v1/app/package?page=1',
  next_page_url: 'https://demo.localhost/v1/app/package?page=2',
  previous_page_url: 'https://demo.localhost/v1/app/package?page=1',
  // Opaque strings, in their real forms
  internal_id: 'b2f6d0c4e8a1',
  key: 'store/1/upload/7b1e4f.svg',
  quote_id: 'qt_6Jm2xQ9bV1',
  next_cursor: 'eyJrIjoiMTIifQ',
  lease_id: 'ls_3c9f2a7e',
  event_id: 'evt_0f8e4c2a9b7d4e1f8a6c3b5d7e9f1a2b',
  request_id: '3f1c2b7a-9d4e-4f1a-8b6c-2e5d7a9f1c3b',
  access_token: 'sbt_Q2hhbmdlIG1lOiBub3QgYSByZWFsIHRva2Vu',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  handoff: 'sho_M2I0ZDk4ZjYtMmU1Yy00YjBhLTk3ZjItZjAxZA',
  payment_id: 'pay_Q2hhcmdlIGV4YW1wbGUgMDAx',
  paymentId: 'pay_Q2hhcmdlIGV4YW1wbGUgMDAx',
  notify_key: 'q3Vb8xK2mN7pR4sT1wY6zA0cE5gH9jL2oQ8uX3vB7dF',
  // The TEST gateway's page: the status its notification got.
  notified: '200',
  'Idempotency-Key': '0c6f2d4e-8a1b-4f3c-9d2e-7b5a1c3e9f80',
  source: 'api',
  field: 'name',
  error: 'CUSTOMER_UNAUTHENTICATED',
};

/** Integers whose name says little (ids, pages, totals): 1 reads as "the first", and keeps the example's references consistent. */
export const EXAMPLE_INTEGER = 1;

/** A Pix payment of the demo order through Mercado Pago, as section 13's Payment resource shows it. */
const PAYMENT = {
  id: 'pay_Q2hhcmdlIGV4YW1wbGUgMDAx',
  amount: 17.98,
  provider_ref: '1319372064',
  pix_code: '00020126580014br.gov.bcb.pix0136a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d5204000053039865405 17.985802BR5910Demo Store6009SAO PAULO62070503***6304ABCD',
  qr_code: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  checkout_url: 'https://www.mercadopago.com.br/checkout/v1/redirect?pref_id=123456789-abc',
  refunded_amount: 0,
};

/**
 * Where a name means another thing in another resource: the value by the resource (its component
 * name) or by the property holding it (`tags`, `fields`), nearest first.
 */
export const EXAMPLE_VALUES_IN: Readonly<Record<string, Readonly<Record<string, string | number | boolean | null>>>> = {
  StoreResource: { name: 'Demo Store' },
  StorefrontStoreResponse: { name: 'Demo Store' },
  TagResource: { name: 'New', color: '#22c55e' },
  tags: { name: 'New', color: '#22c55e' },
  CategoryResource: { name: 'Ranks' },
  StorefrontCategory: { name: 'Ranks' },
  VariableResource: { name: 'server', description: 'Game server' },
  fields: { name: 'server', description: 'Game server' },
  variables: { name: 'server' },
  options: { name: 'Survival', value: 'survival', price: 0 },
  PromoResource: { name: 'Bundle deal' },
  DiscountResource: { name: 'Welcome coupon' },
  ServerResource: { name: 'Survival' },
  CheckoutResource: { order_id: 'b2f6d0c4e8a1' },
  // lib/db/chat.ts: the sending instant in milliseconds, then 40 random bits.
  ChatMessageResource: { id: '1795183380000-9f3a61c2d4' },
  'chat.message_created': { id: '1795183380000-9f3a61c2d4' },
  'affiliate.withdrawal_requested': { operation: 'WITHDRAW_PENDING', message: 'Withdrawal to the PIX key', amount: 12.5 },
  next_tiers: { name: 'Bundle deal' },
  PaymentResource: PAYMENT,
  'payment.created': PAYMENT,
  'payment.failed': { ...PAYMENT, status: 'FAILED' },
  'payment.expired': { ...PAYMENT, status: 'EXPIRED' },
  // A second payment of an order already paid: refunded to the buyer by the operator.
  'payment.attention': { ...PAYMENT, status: 'PAID', paid_at: EXAMPLE_TIMESTAMP, attention: 'DUPLICATE' },
  // Approved by its Pix payment (section 13 rule 3): the payment_id and gateway of PAYMENT.
  OrderResource: { status: 'APPROVED', paid_at: EXAMPLE_TIMESTAMP },
};

/** Optional facts a fresh resource lacks (a later status's timestamp, a next page of the last): null in the examples. */
export const EXAMPLE_NULLS: ReadonlySet<string> = new Set([
  'attention',
  'paid_at',
  'canceled_at',
  'refunded_at',
  'chargeback_at',
  'parent_id',
  'next_page_url',
  'previous_page_url',
  'next_cursor',
  'avatar',
]);
