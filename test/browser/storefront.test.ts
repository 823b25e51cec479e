import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '#infra/docs-headers.ts';
import { operationIdOf } from '#lib/openapi.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { WEBHOOK_EVENT_TYPES } from '#lib/schemas/webhook.ts';
import { outboxFileOf } from '../integration/global-setup.ts';

/**
 * The storefront example (examples/storefront) and the API reference (/docs) in a real browser:
 * Debian's Chromium driven by playwright-core, the page on the demo store's domain calling the
 * API on 127.0.0.1 across origins, as a deployed storefront does. Each step leaves a screenshot
 * in .local/screenshots/.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** This machine's network is closed: without these, Chromium's background connections stall it. */
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SCREENSHOTS = resolve('.local', 'screenshots');
const EMAIL = 'alex@example.com';

let context: BrowserContext;
let page: Page;
let userDataDir: string;
/** Uncaught errors of the page's script: any one of them fails the journey. */
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH) to run the browser tests`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  userDataDir = mkdtempSync(join(tmpdir(), 'storefront-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 } });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

afterAll(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

const shot = (name: string, fullPage = true) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });

/** The newest code mailed to `email` after `sentBefore` messages (the local outbox is one JSON line per message). */
async function codeFor(email: string, sentBefore: number): Promise<string> {
  const outbox = outboxFileOf(inject('localDir'));
  await expect.poll(() => messagesTo(outbox, email).length, { timeout: 10_000 }).toBeGreaterThan(sentBefore);
  return messagesTo(outbox, email).at(-1)!.code;
}

const messagesTo = (outbox: string, email: string) =>
  existsSync(outbox)
    ? readFileSync(outbox, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { to: string; code: string }).filter((message) => message.to === email)
    : [];

const card = (name: string) => page.locator('article.package', { has: page.getByRole('heading', { name }) });

describe('the storefront journey', () => {
  it('shows the catalog with images, tags, stock and the checkout variable', async () => {
    await page.goto(inject('storeUrl'));
    await expect.poll(() => page.locator('article.package').count()).toBe(2);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Demo Store');
    const mvp = card('MVP rank');
    expect(await mvp.locator('.tag').textContent()).toBe('Best seller');
    expect(await mvp.locator('.stock').textContent()).toBe('25 left');
    await expect.poll(() => mvp.locator('img').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
    expect(await card('VIP rank').locator('select[name=server] option').allTextContents()).toEqual(['—', 'Survival', 'Creative (+$1.00)']);
    expect(await page.locator('.promo').textContent()).toContain('Bundle deal');
    await shot('01-catalog');
  });

  it('prices the cart with the live quote: the promo discount, the next tier, and a refused coupon', async () => {
    const vip = card('VIP rank');
    await vip.locator('select[name=server]').selectOption('creative');
    await vip.locator('input.quantity').fill('2');
    await vip.getByRole('button', { name: 'Add to cart' }).click();
    // The card is ready for the next add; the cart holds the 2.
    expect(await vip.locator('input.quantity').inputValue()).toBe('1');
    // (9.99 + 1.00) x 2 = 21.98; Bundle deal 10% = 2.20
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe('$19.78');
    expect(await page.locator('#cart .lines .discount').textContent()).toBe('Bundle deal −$2.20');
    expect(await page.locator('#cart .hint').textContent()).toBe('Add 1 more item for 15% off (Bundle deal)');
    await shot('02-cart-promo');

    await page.getByLabel('Coupon').fill('NOPE');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('#cart .error').textContent()).toMatch(/coupon/i);
    // The refused coupon is dropped, not the cart: still priced, still ready to check out.
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe('$19.78');
    expect(await page.getByRole('button', { name: 'Place order ($19.78)' }).isEnabled()).toBe(true);
    await shot('03-cart-coupon-refused');

    await page.getByLabel('Coupon').fill('welcome10');
    await page.getByRole('button', { name: 'Apply' }).click();
    // 10% of 19.78 = 1.98
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe('$17.80');
    expect(await page.locator('#cart .error').count()).toBe(0);
    await shot('04-cart-coupon');
  });

  it('logs in with the e-mailed code', async () => {
    const sent = messagesTo(outboxFileOf(inject('localDir')), EMAIL).length;
    await page.getByLabel('E-mail').first().fill(EMAIL);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code', { exact: true }).fill(await codeFor(EMAIL, sent));
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('#account').textContent()).toContain(`Logged in as ${EMAIL}`);
    // The rest of the page follows the login: my orders (none yet), and checkout as the buyer (no e-mail asked).
    await expect.poll(() => page.locator('#orders').textContent()).toContain('No orders yet.');
    expect(await page.locator('#checkout').getByLabel('E-mail').count()).toBe(0);
    await shot('05-logged-in');
  });

  it('checks out and finds the order in my orders, with its detail', async () => {
    await page.getByLabel('In-game nick').fill('alex');
    await page.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Place order ($17.80)' }).click();
    await expect.poll(() => page.locator('#checkout .success').textContent()).toMatch(/^Order [\w-]+ placed \(PENDING, \$17\.80\)/);
    const orderId = /^Order ([\w-]+)/.exec((await page.locator('#checkout .success').textContent())!)![1]!;
    expect(await page.locator('#cart').textContent()).toContain('Your cart is empty.');
    await shot('06-checkout');

    await page.locator('#orders').getByRole('button', { name: orderId }).click();
    await expect.poll(() => page.locator('#orders .detail').textContent()).toContain('2 × VIP rank: $17.80');
    // The detail ends with that line: nothing stray (a bare 0 once) below it.
    expect(await page.locator('#orders .detail').textContent()).toMatch(/Nothing delivered yet: delivery starts once the order is paid and approved\.$/);
    await shot('07-my-orders');

    // The operator approves it (the payment step is not built yet): the detail shows its delivery.
    const demo = JSON.parse(readFileSync(join(inject('localDir'), 'demo.json'), 'utf8')) as { api_url: string; api_token: string };
    const operator = { authorization: `Bearer ${demo.api_token}` };
    const newest = (await (await fetch(`${demo.api_url}/app/order?page_cursor=`, { headers: operator })).json()) as { data: { id: number; internal_id: string }[] };
    expect(newest.data[0]!.internal_id).toBe(orderId);
    expect((await fetch(`${demo.api_url}/app/order/${newest.data[0]!.id}/approve`, { method: 'POST', headers: operator })).status).toBe(200);
    await page.locator('#orders').getByRole('button', { name: orderId }).click();
    await expect.poll(() => page.locator('#orders .detail table').textContent()).toContain('VIP rankwaiting for a serverPENDING');
    expect(await page.locator('#orders tr', { hasText: orderId }).textContent()).toContain('APPROVED');
    await shot('07b-delivery');
  });

  it("verifies the account with the owner's backend (the handoff)", async () => {
    const sent = messagesTo(outboxFileOf(inject('localDir')), EMAIL).length;
    await page.getByRole('button', { name: 'Verify my account' }).click();
    // No store-domain session yet: the page asks for a code that sets the session cookie.
    await page.getByLabel('Session code').fill(await codeFor(EMAIL, sent));
    await page.getByRole('button', { name: 'Confirm and verify' }).click();
    await expect.poll(() => page.locator('#verified').textContent()).toBe(`The owner's site now knows you as alex <${EMAIL}>.`);
    await shot('08-verified');
    // Again, with the session now held: straight through, no new code.
    const verify = page.getByRole('button', { name: 'Verify my account' });
    await verify.click();
    await expect.poll(() => verify.isEnabled()).toBe(true);
    expect(await page.locator('#verified').count()).toBe(1);
    expect(messagesTo(outboxFileOf(inject('localDir')), EMAIL).length).toBe(sent + 1);
    const owner = (await (await fetch(inject('ownerBackendUrl'))).json()) as { last_identified: { email: string } };
    expect(owner.last_identified.email).toBe(EMAIL);
    expect(pageErrors).toEqual([]);
  });
});

describe('the API reference', () => {
  it('renders every operation of the route table with Swagger UI, loading nothing but its own origin, within its CSP', async () => {
    const origin = `http://127.0.0.1:${inject('apiPort')}`;
    const requested: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    const started = Date.now();
    const response = await page.goto(`${origin}/docs`);
    expect(response!.headers()['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY);

    const operations = routeEntries().filter(([, spec]) => spec.method !== 'OPTIONS');
    await page.locator('.opblock').first().waitFor();
    // Measured, not asserted (timings are the benchmarks' business).
    console.log(`/docs: first operation drawn ${Date.now() - started} ms after navigation started`);
    // Tags start open (docExpansion: list); any collapsed one is opened, so every operation is in the page.
    for (const tag of await page.locator('.opblock-tag[data-is-open="false"]').all()) await tag.click();
    // The routes' operations, and the events under webhooks.
    await expect.poll(() => page.locator('.opblock').count()).toBe(operations.length + WEBHOOK_EVENT_TYPES.length);
    const documented = await page.locator('.opblock').evaluateAll((blocks) =>
      blocks.map((block) => {
        const text = (selector: string) => block.querySelector(selector)?.textContent?.trim();
        return `${text('.opblock-summary-method')} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')} ${text('.opblock-summary-operation-id')}`;
      }),
    );
    expect(documented.filter((entry) => entry.split(' ')[1]!.startsWith('/')).sort()).toEqual(operations.map(([name, spec]) => `${spec.method} ${spec.path} ${operationIdOf(name)}`).sort());
    await shot('09-docs', false);

    // One operation opened: its parameters and request body schema are there.
    const checkout = page.locator('.opblock[id$="-webstoreCheckout"]');
    await checkout.locator('.opblock-summary-control').click();
    await expect.poll(() => checkout.locator('.opblock-body').textContent()).toContain('client_identifier');
    await checkout.scrollIntoViewIfNeeded();
    await shot('10-docs-checkout', false);

    expect(requested.length).toBeGreaterThan(0);
    // The page's own origin answered the document: Try it out is on (the next test uses it).
    expect(requested).toContain(`${origin}/v1/openapi.json`);
    expect(requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
    // A CSP violation is logged as a console error: none, so the policy allows all the page uses.
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('runs an operation with Try it out on the local stack (same origin), with the token given in Authorize', async () => {
    const origin = `http://127.0.0.1:${inject('apiPort')}`;
    const demo = JSON.parse(readFileSync(join(inject('localDir'), 'demo.json'), 'utf8')) as { api_token: string };
    await page.goto(`${origin}/docs`);
    await page.locator('.btn.authorize').first().click();
    const scheme = page.locator('.auth-container').filter({ hasText: 'apiToken' });
    await scheme.locator('input').fill(demo.api_token);
    await scheme.locator('button.authorize').click();
    await page.locator('.btn-done').first().click();
    const tags = page.locator('.opblock[id$="-tagList"]');
    await tags.locator('.opblock-summary-control').click();
    await tags.locator('.try-out__btn').click();
    await tags.locator('.execute').click();
    await expect.poll(() => tags.locator('.live-responses-table tbody .response-col_status').first().textContent()).toContain('200');
    await shot('11-docs-try-it-out', false);
  });

  it('is a reference without Try it out nor an Authorize dialog where the API is not the page\'s origin', async () => {
    const origin = `http://127.0.0.1:${inject('apiPort')}`;
    // As on the CDN that serves the deployed page: its origin has no /v1/openapi.json.
    await page.route(`${origin}/v1/openapi.json`, (route) => route.fulfill({ status: 403, contentType: 'application/xml', body: '<Error/>' }));
    try {
      await page.goto(`${origin}/docs`);
      const tags = page.locator('.opblock[id$="-tagList"]');
      await tags.waitFor();
      await tags.locator('.opblock-summary-control').click();
      await expect.poll(() => tags.locator('.opblock-body').textContent()).toContain('Parameters');
      expect(await page.locator('.btn.authorize').count()).toBe(0);
      expect(await tags.locator('.try-out__btn').count()).toBe(0);
    } finally {
      await page.unroute(`${origin}/v1/openapi.json`);
    }
  });
});
