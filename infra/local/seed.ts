import * as v from 'valibot';
import { processLocalKeys } from '#lib/crypto.ts';
import { createCategory } from '#lib/db/category.ts';
import { createApiKey, createApiToken } from '#lib/db/credential.ts';
import { findOrCreateCustomer } from '#lib/db/customer.ts';
import { createNote } from '#lib/db/note.ts';
import { createServer, createServerKey } from '#lib/db/server.ts';
import { listDeliveries, listWebhookItems } from '#lib/db/webhook.ts';
import { createLink, joinAffiliate, requestWithdrawal, updateWithdrawSettings } from '#lib/flows/affiliate.ts';
import { listOrderCommands, reportCommand } from '#lib/flows/command.ts';
import { createDiscount } from '#lib/flows/discount.ts';
import { createImageUpload, uploadPackageImage } from '#lib/flows/image.ts';
import { createStoreWebhook, updateStoreWebhook } from '#lib/flows/webhook.ts';
import { createPromo } from '#lib/flows/promo.ts';
import { createVariable } from '#lib/flows/variable.ts';
import { approveOrder, createOrder } from '#lib/flows/order.ts';
import { putProviderAccount } from '#lib/flows/payment-provider.ts';
import { createPackage } from '#lib/db/package.ts';
import { createStore } from '#lib/db/store.ts';
import { createTag } from '#lib/db/tag.ts';
import { discountCreateBody } from '#lib/schemas/discount.ts';
import { commandReportBody } from '#lib/schemas/command.ts';
import { noteCreateBody } from '#lib/schemas/note.ts';
import { orderCreateBody } from '#lib/schemas/order.ts';
import { withdrawSettings } from '#lib/schemas/affiliate.ts';
import { serverCreateBody } from '#lib/schemas/server.ts';
import { packageCreateBody } from '#lib/schemas/package.ts';
import { promoCreateBody } from '#lib/schemas/promo.ts';
import { variableCreateBody } from '#lib/schemas/variable.ts';
import { webhookCreateBody, webhookPatchBody } from '#lib/schemas/webhook.ts';
import { WEBHOOK_INBOX_PATH } from '#infra/local/server.ts';

export const DEMO_DOMAIN = 'demo.localhost';
/** The demo store's buyer: `npm run invoke` issues its token or session for the buyer events. */
export const DEMO_BUYER_EMAIL = 'buyer@demo.localhost';
/** The demo buyer's in-game nick: the `client_identifier` of its orders, the player a delivery claim names online. */
export const DEMO_BUYER_NICK = 'Steve';

/** A flat badge, so the storefront example shows real images without shipping binary files. */
const badge = (color: string, letter: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160"><rect width="160" height="160" rx="24" fill="${color}"/>` +
      `<text x="80" y="104" font-family="sans-serif" font-size="72" font-weight="700" fill="#fff" text-anchor="middle">${letter}</text></svg>`,
  );

/** What `.local/demo.json` holds: the demo store, its credentials, and what its sample events act on. */
export interface DemoStore {
  store_id: number;
  store_domain: string;
  api_token: string;
  identify_key: string;
  /** A game server's `delivery` key, for the delivery agent and the delivery sample events, and that server. */
  delivery_key: string;
  delivery_server_id: number;
  /** The demo buyer's first order (approved). */
  order_internal_id: string;
  /** An image uploaded through package 1's presigned POST and not yet confirmed (package-image-confirm). */
  image_upload_key: string;
  /** The demo webhook (delivering to the stack's inbox, .local/webhooks.jsonl) and its signing secret, to check what the inbox receives. */
  webhook_id: number;
  webhook_secret: string;
}

/** Uploads through a presigned POST as a browser form does: its fields first, the file last. */
async function postToBucket(post: { url: string; fields: Record<string, string> }, content: Buffer): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries(post.fields)) form.append(name, value);
  form.append('file', new Blob([content]), 'badge.svg');
  const response = await fetch(post.url, { method: 'POST', body: form });
  if (!response.ok) throw new Error(`demo seed: the presigned upload answered ${response.status}`);
}

/**
 * The stack's webhook delivery (infra/local/webhooks.ts, or the running stack's) logs the demo
 * webhook's first attempt moments after the seed's first approval: waited for, so that the
 * redelivery sample has its attempt as soon as the store is ready.
 */
async function firstWebhookAttempt(storeId: number, webhookId: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await listDeliveries(storeId, webhookId, '', 1, processLocalKeys())).data.length === 0) {
    if (Date.now() > deadline) throw new Error('demo seed: the demo webhook logged no attempt (is webhook delivery running?)');
    await new Promise((done) => setTimeout(done, 100));
  }
}

/**
 * The demo store of the local stack: a token, an identify key, a catalog with everything the
 * storefront example (examples/storefront) shows (images, tags, stock, a SELECT variable, a tiered
 * promo and a coupon), and what every sample event of events/ acts on, each consumed target its
 * own (infra/local/invoke-event.ts fills the placeholders; test/integration/events.test.ts runs
 * them all):
 * - category 2 (Kits, empty: category-update, category-delete), note 1 of order 1 (note-delete);
 * - the demo buyer's orders: 1 approved (with its delivery command), 2 pending (order-cancel),
 *   3 and 4 approved (order-chargeback, order-refund), 5 approved with its command reported
 *   FAILED (command 4: command-retry);
 * - the affiliate program: the demo buyer is affiliate 1 (code ana_games) with link 2, a balance
 *   from the orders 6-9 that code referred, and two withdrawal requests (transactions 5 and 6:
 *   withdrawal-pay, withdrawal-reject); alex is affiliate 3 (affiliate-update blocks him);
 * - game server 1 with a `delivery` key (delivery-claim; delivery-ack claims its own lease);
 * - webhook 1, enabled, delivering to the local stack's inbox, with its first attempt logged
 *   (webhook-redeliver);
 * - an image uploaded for package 1 and not yet confirmed (package-image-confirm).
 * Inputs go through the same schemas and flows as the API, so the seed gets the same defaults.
 * `apiUrl` is the local stack's address (the webhook's target); `domain` is unique to a store, so a
 * second demo store in the same table (a test's) needs another.
 */
export async function seedDemoStore(apiUrl: string, domain = DEMO_DOMAIN): Promise<DemoStore> {
  const store = await createStore({ name: 'Demo Store', domain });
  const { api_token, credential_id: tokenId } = await createApiToken(store.id);
  const { key } = await createApiKey(store.id, ['customers:identify']);
  const fresh = await createTag(store.id, { name: 'New', color: '#22c55e' });
  const bestSeller = await createTag(store.id, { name: 'Best seller', color: '#f59e0b' });
  const ranks = await createCategory(store.id, { name: 'Ranks' });
  // Empty, for category-update and category-delete.
  await createCategory(store.id, { name: 'Kits' });
  const catalog = [
    {
      name: 'VIP rank',
      price: 9.99,
      tags: [fresh.id],
      stock: null,
      color: '#6366f1',
      description: 'Colored name, /kit vip every day.',
      command: 'lp user {client_identifier} parent add vip',
    },
    {
      name: 'MVP rank',
      price: 19.99,
      tags: [bestSeller.id],
      stock: 25,
      color: '#ec4899',
      description: 'Everything VIP has, plus /fly in the lobby.',
      command: 'lp user {client_identifier} parent add mvp',
    },
  ];
  for (const item of catalog) {
    const created = await createPackage(
      store.id,
      v.parse(packageCreateBody, {
        name: item.name,
        price: item.price,
        category_id: ranks.id,
        description: item.description,
        tags: item.tags,
        stock: item.stock,
        commands: [{ command: item.command }],
      }),
    );
    await uploadPackageImage(store.id, created.id, { filename: 'badge.svg', bytes: badge(item.color, item.name[0]!) });
  }
  // A new badge for the VIP rank, uploaded as a browser does and left for package-image-confirm.
  const upload = await createImageUpload(store.id, 1, 'image/svg+xml');
  await postToBucket(upload, badge('#0ea5e9', 'V'));
  // Not required, so the operator curl session's quotes (docs/operator.md, no fields) stay valid; an option with a price shows options_price.
  await createVariable(
    store.id,
    v.parse(variableCreateBody, {
      name: 'server',
      type: 'SELECT',
      description: 'Game server',
      required: false,
      options: [
        { name: 'Survival', value: 'survival', price: 0 },
        { name: 'Creative', value: 'creative', price: 1 },
      ],
    }),
  );
  // Two tiers, so a cart of 2 sees the next one in `next_tiers` ("add 1 more for 15% off").
  await createPromo(
    store.id,
    v.parse(promoCreateBody, {
      name: 'Bundle deal',
      type: 'PROGRESSIVE',
      condition_mode: 'QUANTITY',
      starts_at: '2025-01-01T00:00:00Z',
      targets: [{ type: 'STORE' }],
      tiers: [
        { min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 },
        { min_amount: 3, reward_type: 'PERCENTAGE', reward_value: 15 },
      ],
    }),
  );
  await createDiscount(store.id, v.parse(discountCreateBody, { coupon: 'WELCOME10', type: 'PERCENTAGE', value: 10 }));
  // The TEST gateway (section 13), so a purchase is paid offline; its notification_url names this stack.
  await putProviderAccount(store.id, 'test', { enabled: true }, apiUrl.replace(/\/v1\/?$/, ''));

  const server = await createServer(store.id, v.parse(serverCreateBody, { name: 'Survival' }));
  const { key: deliveryKey } = await createServerKey(store.id, server.id);

  const order = (client: { name: string; email: string }, quantity = 1, refCode: string | null = null) =>
    createOrder(
      store.id,
      v.parse(orderCreateBody, {
        client_identifier: client.name,
        client_email: client.email,
        client_name: client.name,
        packages: [{ package_id: 1, quantity }],
        ref_code: refCode,
      }),
    );
  const steve = { name: DEMO_BUYER_NICK, email: DEMO_BUYER_EMAIL };
  const first = await order(steve);
  await approveOrder(store.id, first.id);
  await createNote(store.id, first.id, tokenId, v.parse(noteCreateBody, { content: 'Asked for the rank before the weekend event' }));
  await order(steve);
  for (let reversible = 0; reversible < 2; reversible += 1) await approveOrder(store.id, (await order(steve)).id);
  const failing = await approveOrder(store.id, (await order(steve)).id);
  const [failingCommand] = await listOrderCommands(store.id, failing.id);
  await reportCommand(store.id, failingCommand!.id, v.parse(commandReportBody, { status: 'FAILED', response: 'Unknown command: lp (is LuckPerms installed?)' }));

  const buyer = await findOrCreateCustomer(store.id, DEMO_BUYER_EMAIL);
  await joinAffiliate(store.id, buyer.id, store.domain, 'ana_games');
  await createLink(store.id, buyer.id, store.domain, { name: 'Twitch', ref_code: 'ana_twitch' });
  const alex = await findOrCreateCustomer(store.id, 'alex@demo.localhost');
  await joinAffiliate(store.id, alex.id, store.domain, 'alex_plays');
  // Players who came through the demo buyer's code: their approved orders are its balance.
  for (const name of ['Notch', 'Jeb', 'Dinnerbone', 'Grumm']) await approveOrder(store.id, (await order({ name, email: `${name.toLowerCase()}@example.com` }, 2, 'ana_games')).id);
  await updateWithdrawSettings(
    store.id,
    buyer.id,
    store.domain,
    v.parse(withdrawSettings, { full_name: 'Steve Miller', pix_key: 'buyer@demo.localhost', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' }),
  );
  // Late, so that the attempts of the seed's own changes are few: the withdrawals' (the port opens after the seed).
  const webhook = await createStoreWebhook(
    store.id,
    v.parse(webhookCreateBody, {
      url: `${apiUrl}${WEBHOOK_INBOX_PATH}`,
      events: ['order.approved', 'order.refunded', 'order.chargeback', 'affiliate.withdrawal_requested'],
      description: 'Local inbox',
    }),
  );
  for (const amount of [2, 1.5]) await requestWithdrawal(store.id, buyer.id, amount);

  await firstWebhookAttempt(store.id, webhook.id);
  return {
    store_id: store.id,
    store_domain: store.domain,
    api_token,
    identify_key: key,
    delivery_key: deliveryKey,
    delivery_server_id: server.id,
    order_internal_id: first.internal_id,
    image_upload_key: upload.key,
    webhook_id: webhook.id,
    webhook_secret: webhook.secret,
  };
}

/** The stack's own receiver (`POST /local/webhook-inbox` on the API host), at whatever port it ran. */
function isLocalInbox(url: string): boolean {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return parsed?.pathname === WEBHOOK_INBOX_PATH && ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
}

/**
 * A later start of the stack, maybe on another port or host: the demo store's webhooks that
 * deliver to the stack's own inbox follow it to `apiUrl` (one the user pointed elsewhere is left
 * alone). Through the same flow as PATCH /v1/app/webhook/{id}.
 */
export async function followStackAddress(storeId: number, apiUrl: string): Promise<void> {
  const inbox = `${apiUrl}${WEBHOOK_INBOX_PATH}`;
  for (const webhook of await listWebhookItems(storeId)) {
    if (webhook.url !== inbox && isLocalInbox(webhook.url)) await updateStoreWebhook(storeId, webhook.id, v.parse(webhookPatchBody, { url: inbox }));
  }
}
