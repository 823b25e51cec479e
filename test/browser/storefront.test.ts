import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '#infra/docs-headers.ts';
import { operationIdOf } from '#lib/openapi.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { WEBHOOK_EVENT_TYPES } from '#lib/schemas/webhook.ts';
import { outboxFileOf } from '../integration/global-setup.ts';
import { startFakeMercadoPago, type FakeMercadoPago } from '../support/fake-mercadopago.ts';
import { FIRST_OPERATION_PAINTED, FIRST_OPERATION_PAINTED_AT } from '../support/first-draw.ts';

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
/** The Mercado Pago this stack calls (MERCADOPAGO_API_URL): the fake that speaks its wire format. */
let mercadoPago: FakeMercadoPago;
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
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
  mercadoPago = await startFakeMercadoPago(inject('mercadopagoPort'));
});

afterAll(async () => {
  await mercadoPago?.stop();
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
    ? readFileSync(outbox, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { to: string; code: string })
        .filter((message) => message.to === email)
    : [];

const card = (name: string) => page.locator('article.package', { has: page.getByRole('heading', { name }) });

/** Prices as the page writes them: the demo store's currency (BRL) in the browser's locale (en-US here). */
const money = (amount: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'BRL' }).format(amount);

const AXE = resolve('node_modules', 'axe-core', 'axe.min.js');

/** axe-core (pinned devDependency) injected into the page: WCAG 2 A and AA rules, no violation in this state. */
async function accessible(target: Page = page) {
  // The callbacks run in the page: its globals are reached through globalThis (this file is typed for Node).
  if (!(await target.evaluate(() => 'axe' in globalThis))) await target.addScriptTag({ path: AXE });
  const violations = await target.evaluate(async () => {
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run: (context: unknown, options: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> };
    };
    const result = await page.axe.run(page.document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  });
  expect(violations).toEqual([]);
}

/** Each step: its screenshot (kept in .local/screenshots, not committed) and its accessibility check. */
async function step(name: string, target: Page = page) {
  // The page is drawn at once when its first answers are in (hidden until then: axe would check nothing).
  await target.locator('body:not(.loading)').waitFor();
  await target.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  await accessible(target);
}

const demoOperator = () => {
  const demo = JSON.parse(readFileSync(join(inject('localDir'), 'demo.json'), 'utf8')) as { api_url: string; api_token: string };
  return { url: demo.api_url, headers: { authorization: `Bearer ${demo.api_token}`, 'content-type': 'application/json' } };
};

/** Every request whose URL contains `part`, from now on: its URL, body and time. */
function requestsTo(target: Page, part: string) {
  const seen: { url: string; body: string | null; at: number }[] = [];
  target.on('request', (request) => request.url().includes(part) && seen.push({ url: request.url(), body: request.postData(), at: Date.now() }));
  return seen;
}

const PIX_CHOICE = { gateway: 'PIX', display: 'PIX', name: 'pix', fee: 0, is_percentage_fee: false };
const TEST_CHOICE = { gateway: 'TEST', display: 'Test payment', name: 'test', fee: 0, is_percentage_fee: false };

/** A QR-like PNG (base64, as `qr_code` is), drawn by the browser itself. */
const qrImage = (target: Page) =>
  target.evaluate(() => {
    interface Canvas {
      width: number;
      height: number;
      getContext: (kind: '2d') => { fillRect: (x: number, y: number, width: number, height: number) => void };
      toDataURL: (type: string) => string;
    }
    const canvas = (globalThis as unknown as { document: { createElement: (tag: 'canvas') => Canvas } }).document.createElement('canvas');
    canvas.width = canvas.height = 29;
    const context = canvas.getContext('2d');
    for (let x = 0; x < 29; x += 1) for (let y = 0; y < 29; y += 1) if ((x * 7 + y * 13) % 3 === 0) context.fillRect(x, y, 1, 1);
    return canvas.toDataURL('image/png').split(',')[1]!;
  });

/**
 * The browser stack has no Mercado Pago: PIX is offered and its answer given here, around a real
 * order of the API (the checkout goes through without the gateway, and its answer gains the PIX fields).
 */
async function stubPix(target: Page, expiresInMs = 30 * 60_000) {
  const pix = {
    pix_code: `00020126580014br.gov.bcb.pix0136${crypto.randomUUID()}5204000053039865406${(9.99).toFixed(2)}5802BR6304ABCD`,
    qr_code: await qrImage(target),
    expires_at: new Date(Date.now() + expiresInMs).toISOString(),
  };
  await target.route('**/v1/webstore/gateway', (route) => route.fulfill({ json: [PIX_CHOICE, TEST_CHOICE] }));
  await target.route('**/v1/webstore/checkout', async (route) => {
    const { gateway, return_url, ...body } = JSON.parse(route.request().postData()!) as Record<string, unknown>;
    expect(gateway).toBe('PIX');
    expect(return_url).toBe(`${inject('storeUrl')}/?payment=return`);
    const response = await route.fetch({ postData: JSON.stringify(body) });
    const order = (await response.json()) as Record<string, unknown>;
    // The code's life counts from the checkout, as Mercado Pago's does.
    pix.expires_at = new Date(Date.now() + expiresInMs).toISOString();
    await route.fulfill({ response, json: { ...order, ...pix, payment: { id: 'pay_pix_stub', gateway: 'PIX', status: 'PENDING', ...pix, checkout_url: null } } });
  });
  return pix;
}
async function unstubPix(target: Page) {
  await target.unroute('**/v1/webstore/gateway');
  await target.unroute('**/v1/webstore/checkout');
}

/** The TEST gateway's page (section 13): a page of the API host, `/v1/payment/test/<charge ref>`. */
const isTestGatewayPage = (url: URL) => url.origin === new URL(demoOperator().url).origin && url.pathname.startsWith('/v1/payment/test/tst_');

/** The tab is on the TEST gateway's page, sent there by the checkout's `checkout_url`. */
async function testGatewayPage(target: Page) {
  await target.waitForURL(isTestGatewayPage, { timeout: 20_000 }).catch(async (error: Error) => {
    // Still on the store: say what the checkout answered instead of only "timeout".
    throw new Error(`${error.message}; the checkout says: ${await target.locator('#checkout, #payment').allTextContents()}`);
  });
}
const WAITING = 'Waiting for your payment. This page checks every 5 seconds.';
/** The payment screen up, waiting for the money; if not, what the checkout said instead (a busy machine's checkout can take seconds). */
async function awaitingPayment(target: Page) {
  await expect
    .poll(() => target.locator('#payment-status').textContent(), { timeout: 30_000 })
    .toBe(WAITING)
    .catch(async (error: Error) => {
      const fields = await target
        .locator('#checkout input')
        .evaluateAll((inputs) => inputs.map((input) => `${(input as unknown as { name: string; value: string }).name}=${(input as unknown as { value: string }).value}`));
      await shot('failed-checkout');
      throw new Error(`${error.message}; the checkout says: ${await target.locator('#checkout').textContent()} with ${fields.join(' ')}`);
    });
}

/**
 * One button of the TEST gateway's page: the pretend provider changes the charge and sends its
 * signed notification to the store's notify route (which answers 200 once it settled the payment),
 * then the buyer follows "Back to the store" to the return URL.
 */
async function payOnTestGateway(target: Page, button: 'Pay' | 'Fail the payment') {
  await target.getByRole('button', { name: button, exact: true }).click();
  await expect.poll(() => target.locator('#notice').textContent()).toBe("The store's notify route answered 200.");
  await target.getByRole('link', { name: 'Back to the store' }).click();
  await target.waitForURL((url) => url.origin === inject('storeUrl') && url.pathname === '/');
}

/** Logs `email` in with the code the local outbox received. */
async function logIn(email: string) {
  const sent = messagesTo(outboxFileOf(inject('localDir')), email).length;
  await page.locator('#account').getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('Code', { exact: true }).fill(await codeFor(email, sent));
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect.poll(() => page.locator('#account').textContent()).toContain(`Logged in as ${email}`);
}

describe('the storefront journey', () => {
  it('shows the store: its categories, the catalog with images, tags, stock and options, prices in its currency', async () => {
    await page.goto(inject('storeUrl'));
    await expect.poll(() => page.locator('article.package').count()).toBe(2);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Demo Store');
    expect(await page.locator('#categories button').allTextContents()).toEqual(['All', 'Ranks 2']);
    const mvp = card('MVP rank');
    expect(await mvp.locator('.tag').textContent()).toBe('Best seller');
    expect(await mvp.locator('.stock').textContent()).toBe('25 left');
    expect(await mvp.locator('.price').textContent()).toContain(money(19.99));
    await expect.poll(() => mvp.locator('img').evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
    expect(await card('VIP rank').getByLabel('Game server').locator('option').allTextContents()).toEqual(['—', 'Survival', `Creative (+${money(1)})`]);
    expect(await page.locator('.promo').textContent()).toContain('Bundle deal');
    await step('01-catalog');
  });

  it('browses a category and opens a package view', async () => {
    await page.getByRole('button', { name: 'Ranks 2' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Ranks 2' }).getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('article.package').count()).toBe(2);
    await card('MVP rank').getByRole('button', { name: 'Details' }).click();
    const view = page.getByRole('dialog', { name: 'MVP rank' });
    await expect.poll(() => view.isVisible()).toBe(true);
    expect(await view.locator('.description').textContent()).toBe('Everything VIP has, plus /fly in the lobby.');
    expect(await view.locator('.stock').textContent()).toBe('25 left');
    await step('02-package-view');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('is usable by keyboard alone: a package opened, an option chosen, added to the cart, the focus back where it was', async () => {
    const target = await context.newPage();
    const focused = () => target.locator(':focus');
    try {
      await target.goto(inject('storeUrl'));
      await target.locator('body:not(.loading)').waitFor();
      const details = target.locator('article.package', { has: target.getByRole('heading', { name: 'VIP rank' }) }).getByRole('button', { name: 'Details' });
      for (
        let presses = 0;
        presses < 30 && !(await details.evaluate((button) => button === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement));
        presses += 1
      ) {
        await target.keyboard.press('Tab');
      }
      // Where the focus is, it shows (the store's colour, 3 px).
      expect(
        await focused().evaluate((element) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { outlineWidth: string } }).getComputedStyle(element).outlineWidth),
      ).toBe('3px');
      await target.keyboard.press('Enter');
      const view = target.getByRole('dialog', { name: 'VIP rank' });
      await expect.poll(() => view.isVisible()).toBe(true);
      // The focus moved into the dialog; Tab walks to the option, the quantity and the button.
      expect(await view.locator(':focus').count()).toBe(1);
      while ((await focused().getAttribute('name')) !== 'server') await target.keyboard.press('Tab');
      await target.keyboard.press('ArrowDown');
      expect(await focused().inputValue()).toBe('survival');
      await target.keyboard.press('Tab');
      await target.keyboard.press('Tab');
      expect(await focused().textContent()).toBe('Add to cart');
      await target.keyboard.press('Enter');
      await expect.poll(() => view.count()).toBe(0);
      await expect.poll(() => target.locator('#basket-count').textContent()).toBe('1');
      expect(await target.locator('#cart .lines .options').textContent()).toBe('Game server: Survival');
      // The dialog gave the focus back to the button that opened it: the buyer goes on from there.
      expect(await details.evaluate((button) => button === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
    } finally {
      await target.close();
    }
  });

  it('keeps the focus and what the buyer types in the checkout and the coupon field while a new quote redraws them', async () => {
    const target = await context.newPage();
    type InPage = { document: { activeElement: { name?: string } | null } };
    try {
      await target.goto(inject('storeUrl'));
      await target.locator('body:not(.loading)').waitFor();
      await target.locator('article.package').first().getByRole('button', { name: 'Add to cart' }).click();
      const place = target.locator('#checkout').getByRole('button', { name: /^Place order \(/ });
      await expect.poll(() => place.isEnabled()).toBe(true);
      const nick = target.getByLabel('In-game nick');
      await nick.click();
      await target.keyboard.type('ro');
      // The buyer is typing when a quote comes back and the checkout is redrawn under the caret. Here the
      // quote is asked by one more unit added from a script (a click from code leaves the focus where it is).
      const redrawnWhileTyping = async () => {
        await place.evaluate((button) => {
          (button as unknown as { dataset: Record<string, string> }).dataset.before = 'redraw';
        });
        const quoted = target.waitForResponse((response) => response.url().endsWith('/webstore/cart/quote'));
        await target
          .locator('article.package')
          .first()
          .getByRole('button', { name: 'Add to cart' })
          .evaluate((button) => (button as unknown as { click: () => void }).click());
        await quoted;
        await expect.poll(() => target.locator('#checkout button[data-before]').count()).toBe(0);
        await expect.poll(() => place.isEnabled()).toBe(true);
      };
      await redrawnWhileTyping();
      await target.keyboard.type('bin');
      expect(await nick.inputValue()).toBe('robin');
      expect(await target.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.name)).toBe('client_identifier');
      // The coupon field, in the cart redrawn by the same quote.
      await target.getByLabel('Coupon').click();
      await target.keyboard.type('WEL');
      await redrawnWhileTyping();
      await target.keyboard.type('COME');
      expect(await target.getByLabel('Coupon').inputValue()).toBe('WELCOME');
    } finally {
      await target.close();
    }
  });

  it('prices an option chosen on one package on that line alone, the promo, the next tier, and a refused coupon', async () => {
    const vip = card('VIP rank');
    await vip.getByLabel('Game server').selectOption('creative');
    await vip.getByLabel('Quantity').fill('2');
    await vip.getByRole('button', { name: 'Add to cart' }).click();
    expect(await vip.getByLabel('Quantity').inputValue()).toBe('1');
    await card('MVP rank').getByRole('button', { name: 'Add to cart' }).click();
    await expect.poll(() => page.locator('#basket-count').textContent()).toBe('3');
    const vipLine = page.locator('#cart .lines li', { hasText: 'VIP rank' });
    const mvpLine = page.locator('#cart .lines li', { hasText: 'MVP rank' });
    await expect.poll(() => vipLine.textContent()).toContain(`options +${money(1)} each`);
    expect(await vipLine.locator('.options').textContent()).toBe('Game server: Creative');
    // The MVP line left its select at "—": no option, nothing added to its price.
    expect(await mvpLine.textContent()).not.toContain('options');
    await step('03-cart-two-lines');
    await page.getByRole('button', { name: 'Remove MVP rank' }).click();
    // (9.99 + 1.00) x 2 = 21.98; Bundle deal 10% = 2.20
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe(money(19.78));
    expect(await page.locator('#cart .lines .discount').textContent()).toBe(`Bundle deal −${money(2.2)}`);
    expect(await page.locator('#cart .hint').textContent()).toBe('Add 1 more item for 15% off (Bundle deal)');

    await page.getByLabel('Coupon').fill('NOPE');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('#cart .error').textContent()).toMatch(/coupon/i);
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe(money(19.78));
    expect(await page.getByRole('button', { name: `Place order (${money(19.78)})` }).isEnabled()).toBe(true);
    await step('04-cart-coupon-refused');

    await page.getByLabel('Coupon').fill('welcome10');
    await page.getByRole('button', { name: 'Apply' }).click();
    // 10% of 19.78 = 1.98
    await expect.poll(() => page.locator('#cart .total').textContent()).toBe(money(17.8));
    expect(await page.locator('#cart .error').count()).toBe(0);
    await step('05-cart-coupon');
  });

  it('logs in with the e-mailed code', async () => {
    await logIn(EMAIL);
    await expect.poll(() => page.locator('#orders').textContent()).toContain('No orders yet.');
    expect(await page.locator('#checkout').getByLabel('E-mail').count()).toBe(0);
    await step('06-logged-in');
  });

  it('pays with the TEST gateway: its page, a failed payment, paying again, and back on the store the order APPROVED with its delivery listed', async () => {
    const checkouts = requestsTo(page, '/webstore/checkout');
    await page.getByLabel('In-game nick').fill('alex');
    // The one gateway the demo store enables, from GET /webstore/gateway, chosen already.
    expect(await page.getByRole('group', { name: 'Payment method' }).getByRole('radio').count()).toBe(1);
    expect(await page.getByRole('radio', { name: 'Test payment' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: `Place order (${money(17.8)})` }).click();

    await testGatewayPage(page);
    const sent = JSON.parse(checkouts.at(-1)!.body!) as { gateway: string; return_url: string };
    // Back to this page's own origin (the API refuses any other: no open redirect).
    expect(sent).toMatchObject({ gateway: 'TEST', return_url: `${inject('storeUrl')}/?payment=return` });
    await shot('07-test-gateway');
    await payOnTestGateway(page, 'Fail the payment');

    // Back on the store: the order still waits for its money, and another payment is offered.
    await expect.poll(() => page.locator('#payment-status').textContent()).toBe('Waiting for your payment. This page checks every 5 seconds.');
    const orderId = /^Order ([\w-]+)/.exec((await page.locator('#payment-title').textContent())!)![1]!;
    expect(await page.locator('#payment-title').textContent()).toBe(`Order ${orderId} · ${money(17.8)}`);
    expect(await page.locator('#cart').textContent()).toContain('Your cart is empty.');
    expect(await page.locator('#basket-count').textContent()).toBe('0');
    // The address is tidied: a reload does not pretend to come back from the provider again.
    expect(page.url()).toBe(`${inject('storeUrl')}/`);
    await step('08-payment-failed');

    await page.getByRole('button', { name: 'Pay again' }).click();
    await testGatewayPage(page);
    const payClicked = Date.now();
    await payOnTestGateway(page, 'Pay');
    await expect.poll(() => page.locator('#payment-status').textContent()).toBe('Payment received: your order is paid.');
    // Measured, not asserted: the notification, the approval, the way back and the first poll.
    console.log(`TEST gateway: "Pay" clicked to "Payment received" on the store's page in ${Date.now() - payClicked} ms`);
    const detail = page.locator('#payment .detail');
    await expect.poll(() => detail.textContent()).toContain(`2 × VIP rank: ${money(17.8)} (Game server: Creative)`);
    expect(await detail.textContent()).toContain(`Paid · placed`);
    expect(await detail.textContent()).toContain(`For alex · coupon WELCOME10 (−${money(1.98)})`);
    expect(await detail.locator('table').textContent()).toContain('VIP rankany server, once one claims itWaiting to be delivered');
    await expect.poll(() => page.locator('#orders tr', { hasText: orderId }).textContent()).toContain('Paid');
    await step('09-paid');
    await page.getByRole('button', { name: 'Continue shopping' }).click();
    expect(await page.locator('#payment').isHidden()).toBe(true);
  });

  it('pays by PIX: the QR image, a copy button, the expiry, the status polled every 5 seconds until paid, then the order and its deliveries', async () => {
    // The demo store connects a Mercado Pago account (the fake one this stack calls) with PIX, for this test only.
    const operator = demoOperator();
    const accessToken = `APP_USR-browser-${Date.now()}`;
    mercadoPago.addAccount(accessToken, 880_001);
    const connected = await fetch(`${operator.url}/app/payment/provider/mercadopago`, {
      method: 'PUT',
      headers: operator.headers,
      body: JSON.stringify({ access_token: accessToken, webhook_secret: `whsec-browser-${Date.now()}`, gateways: ['PIX'] }),
    });
    expect(connected.status).toBe(200);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: inject('storeUrl') });
    const polls = requestsTo(page, '/webstore/order_status/');
    try {
      await page.reload();
      await expect.poll(() => page.locator('article.package').count()).toBe(2);
      await card('VIP rank').getByRole('button', { name: 'Add to cart' }).click();
      // The reload forgot the nick (it is typed for each order).
      await page.getByLabel('In-game nick').fill('alex');
      await page.getByRole('radio', { name: 'PIX' }).check();
      await page.getByRole('button', { name: `Place order (${money(9.99)})` }).click();

      await awaitingPayment(page);
      // What Mercado Pago made: the QR image (base64 PNG), the copy-and-paste code, the expiry.
      const charge = [...mercadoPago.payments.values()].at(-1)!;
      const pix = { pix_code: charge.point_of_interaction!.transaction_data.qr_code, expires_at: charge.date_of_expiration as string };
      const qr = page.getByRole('img', { name: `PIX QR code to pay ${money(9.99)}` });
      await expect.poll(() => qr.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      expect(await page.getByLabel('PIX code (copy and paste)').inputValue()).toBe(pix.pix_code);
      expect(await page.locator('#payment').textContent()).toContain(`The code expires at ${await page.evaluate((at) => new Date(at).toLocaleString(), pix.expires_at)}.`);
      // The heading took the focus, so a keyboard or screen reader user starts from the payment.
      expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).toBe('payment-title');
      await page.getByRole('button', { name: 'Copy code' }).click();
      await expect.poll(() => page.locator('#payment').getByRole('status').filter({ hasText: 'Code copied.' }).count()).toBe(1);
      expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText: () => Promise<string> } } }).navigator.clipboard.readText())).toBe(
        pix.pix_code,
      );
      await step('10-pix');

      // Until the money comes the order waits, and says what happens next.
      const orderId = /^Order ([\w-]+)/.exec((await page.locator('#payment-title').textContent())!)![1]!;
      await page.locator('#orders').getByRole('button', { name: orderId }).click();
      await expect.poll(() => page.locator('#orders .detail').textContent()).toMatch(/Nothing delivered yet: delivery starts once the order is paid and approved\.$/);

      // Polled every 5 seconds (the official client's rhythm), not faster.
      await expect.poll(() => polls.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
      const gap = polls[1]!.at - polls[0]!.at;
      console.log(`PIX screen: status polled ${gap} ms apart`);
      expect(gap).toBeGreaterThanOrEqual(4_900);

      // The buyer pays at the bank; no notification arrives: a status poll asks Mercado Pago (at most every 10 s) and finds it.
      const paidAt = Date.now();
      mercadoPago.setStatus(charge.id, 'approved');
      await expect.poll(() => page.locator('#payment-status').textContent(), { timeout: 30_000 }).toBe('Payment received: your order is paid.');
      console.log(`PIX: paid at Mercado Pago to "Payment received" on the page in ${Date.now() - paidAt} ms (pull on poll, no notification)`);
      expect(await page.locator('#payment .detail table').textContent()).toContain('VIP rankany server, once one claims itWaiting to be delivered');
      expect(await page.getByLabel('PIX code (copy and paste)').count()).toBe(0);
      const settled = polls.length;
      await step('11-pix-paid');
      // Settled: the polling stops.
      await page.waitForTimeout(5_500);
      expect(polls.length).toBe(settled);
      await page.getByRole('button', { name: 'Continue shopping' }).click();
    } finally {
      // The rest of the journey pays with TEST alone.
      expect((await fetch(`${operator.url}/app/payment/provider/mercadopago`, { method: 'DELETE', headers: operator.headers })).status).toBe(204);
    }
  });

  it("verifies the account with the owner's backend (the handoff)", async () => {
    const sent = messagesTo(outboxFileOf(inject('localDir')), EMAIL).length;
    await page.getByRole('button', { name: 'Verify my account' }).click();
    // No store-domain session yet: the page asks for a code that sets the session cookie.
    await page.getByLabel('Session code').fill(await codeFor(EMAIL, sent));
    await page.getByRole('button', { name: 'Confirm and verify' }).click();
    await expect.poll(() => page.locator('#verified').textContent()).toBe(`The owner's site now knows you as alex <${EMAIL}>.`);
    await step('10-verified');
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

  it('lets a logged-in buyer join the affiliate program, then shows the main code and links with their URLs and stats; a new link joins them', async () => {
    const panel = page.locator('#affiliate');
    await expect.poll(() => panel.getByRole('button', { name: 'Join' }).count()).toBe(1);
    await step('10a-affiliate-join');
    await panel.getByLabel('Your code').fill('alex_ex');
    await panel.getByRole('button', { name: 'Join' }).click();
    await expect.poll(() => panel.textContent()).toContain('Your code alex_ex');
    // The main code is the first link: its URL and its stats.
    expect(await panel.locator('table.links tr').nth(1).textContent()).toContain('alex_ex');
    await panel.getByLabel('Link name').fill('Stream');
    await panel.getByLabel('Link code').fill('alex_stream');
    await panel.getByRole('button', { name: 'Add link' }).click();
    const row = panel.locator('table.links tr', { hasText: 'Stream' });
    await expect.poll(() => row.textContent()).toContain('alex_stream');
    expect(await row.locator('code').textContent()).toMatch(/^https?:\/\/\S+alex_stream/);
    await step('10b-affiliate');

    // A withdrawal needs payout details first; the page has the form, and says why a request is refused.
    expect(await panel.textContent()).toContain('Save where to pay you before your first withdrawal.');
    await panel.getByLabel('Withdraw').fill('5');
    await panel.getByRole('button', { name: 'Request withdrawal' }).click();
    await expect.poll(() => panel.locator('.error').textContent()).toContain('Save withdraw_settings');
    await panel.getByLabel('Full name').fill('Alex Example');
    await panel.getByLabel('PIX key type').selectOption('EMAIL');
    await panel.getByLabel('PIX key', { exact: true }).fill(EMAIL);
    await panel.getByLabel('CPF or CNPJ').fill('123.456.789-09');
    await panel.getByRole('button', { name: 'Save payout details' }).click();
    await expect.poll(() => panel.textContent()).not.toContain('Save where to pay you');
    expect(await panel.getByLabel('PIX key', { exact: true }).inputValue()).toBe(EMAIL);
    await panel.getByLabel('Withdraw').fill('5');
    await panel.getByRole('button', { name: 'Request withdrawal' }).click();
    await expect.poll(() => panel.locator('.error').textContent()).toMatch(/amount (is larger than the balance|must be at least)/);
    await step('10c-affiliate-payout');
  });

  it('logs out and forgets everything of the last buyer', async () => {
    await card('VIP rank').getByRole('button', { name: 'Add to cart' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Alex Last');
    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => page.locator('#orders').textContent()).toContain('Log in to see your orders.');
    expect(await page.locator('#cart').textContent()).toContain('Your cart is empty.');
    expect(await page.locator('#checkout .success').count()).toBe(0);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('');
    expect(await page.getByLabel('In-game nick').inputValue()).toBe('');
    expect(await page.locator('#basket-count').textContent()).toBe('0');
    // The option the last buyer chose on a card is gone too (the screenshot showed it kept).
    await expect.poll(() => card('VIP rank').getByLabel('Game server').inputValue()).toBe('');
    expect(await page.locator('body').textContent()).not.toContain('alex');
    await step('11-logged-out');
  });

  it('enters by a ?ref= link: the visit is counted once per visitor and the code rides with the quote and the checkout', async () => {
    const sent: { url: string; body: string | null }[] = [];
    const listener = (request: { url: () => string; postData: () => string | null }) => sent.push({ url: request.url(), body: request.postData() });
    page.on('request', listener);
    await page.goto(`${inject('storeUrl')}/?ref=ana_games`);
    await expect.poll(() => page.locator('article.package').count()).toBe(2);
    await page.reload();
    await expect.poll(() => page.locator('article.package').count()).toBe(2);
    expect(sent.filter((request) => request.url.endsWith('/webstore/affiliate/visit'))).toHaveLength(1);
    await card('VIP rank').getByRole('button', { name: 'Add to cart' }).click();
    await expect.poll(() => sent.some((request) => request.url.endsWith('/webstore/cart/quote') && JSON.parse(request.body!).ref_code === 'ana_games')).toBe(true);
    page.off('request', listener);
    await page.getByRole('button', { name: 'Remove VIP rank' }).click();
  });

  it("a guest pays through an affiliate's link; the affiliate logs in and sees the referred order in the link's stats", async () => {
    const checkouts = requestsTo(page, '/webstore/checkout');
    await page.goto(`${inject('storeUrl')}/?ref=alex_stream`);
    await expect.poll(() => page.locator('article.package').count()).toBe(2);
    await card('VIP rank').getByRole('button', { name: 'Add to cart' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Sam');
    await page.getByLabel('In-game nick').fill('sam');
    await page.locator('#checkout').getByLabel('E-mail').fill('sam@example.com');
    await page.getByRole('button', { name: `Place order (${money(9.99)})` }).click();
    await testGatewayPage(page);
    expect(JSON.parse(checkouts.at(-1)!.body!)).toMatchObject({ ref_code: 'alex_stream', gateway: 'TEST', client_email: 'sam@example.com' });
    await payOnTestGateway(page, 'Pay');
    await expect.poll(() => page.locator('#payment-status').textContent()).toBe('Payment received: your order is paid.');
    // A guest holds no token for the order's detail: the page says where to follow it.
    expect(await page.locator('#payment').textContent()).toContain('Log in with the e-mail you ordered with to follow the delivery');
    await step('12-guest-paid');
    await page.getByRole('button', { name: 'Continue shopping' }).click();
    await logIn(EMAIL);
    const row = page.locator('#affiliate table.links tr', { hasText: 'alex_stream' });
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('1');
    expect(await row.locator('td').nth(3).textContent()).toBe(money(9.99));
    await step('12a-affiliate-referred');
    await page.getByRole('button', { name: 'Log out' }).click();
  });

  it('an affiliate with a balance requests a withdrawal: the statement shows it and the balance drops', async () => {
    // The demo buyer's code brought four approved orders (infra/local/seed.ts), and its payout details are saved.
    await logIn('buyer@demo.localhost');
    const panel = page.locator('#affiliate');
    await expect.poll(() => panel.textContent()).toContain('Your code ana_games');
    const balance = Number(/balance R\$(\d+\.\d{2})/.exec((await panel.textContent())!)![1]);
    expect(balance).toBeGreaterThan(0);
    await panel.getByLabel('Withdraw').fill(String(balance));
    await panel.getByRole('button', { name: 'Request withdrawal' }).click();
    await expect.poll(() => panel.locator('.statement').textContent()).toContain(`Withdrawal requested · ${money(balance)}`);
    expect(await panel.textContent()).toContain(`balance ${money(0)}`);
    expect(await panel.locator('.error').count()).toBe(0);
    await step('12b-affiliate-withdrawal');
    await page.getByRole('button', { name: 'Log out' }).click();
  });

  it('at 390 px: a sticky basket with its count opens the basket as a drawer', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(inject('storeUrl'));
    await expect.poll(() => phone.locator('article.package').count()).toBe(2);
    expect(await phone.locator('#cart').isVisible()).toBe(false);
    await step('12-phone-catalog', phone);
    await phone.locator('article.package').first().getByRole('button', { name: 'Add to cart' }).click();
    await expect.poll(() => phone.locator('#basket-count').textContent()).toBe('1');
    await phone.evaluate(() => {
      const inPage = globalThis as unknown as { scrollTo: (x: number, y: number) => void; document: { body: { scrollHeight: number } } };
      inPage.scrollTo(0, inPage.document.body.scrollHeight);
    });
    // Sticky: the basket button stays on screen however far the buyer scrolled.
    const box = await phone.getByRole('button', { name: 'Basket, 1 item' }).boundingBox();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y).toBeLessThan(100);
    await phone.getByRole('button', { name: 'Basket, 1 item' }).click();
    await expect.poll(() => phone.locator('#cart').isVisible()).toBe(true);
    await expect.poll(() => phone.locator('#cart .total').textContent()).toMatch(/R\$/);
    await step('13-phone-drawer', phone);
    await phone.getByRole('button', { name: 'Close basket' }).click();
    await expect.poll(() => phone.locator('#cart').isVisible()).toBe(false);
    await phone.close();
  });

  it('at 390 px: the PIX screen and the return page fit the phone, the drawer gives way to them', async () => {
    const phone = await context.newPage();
    const pageWidth = () => phone.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
    try {
      await phone.setViewportSize({ width: 390, height: 844 });
      // The qrImage helper draws in a page: this one, on the store's origin.
      await phone.goto(inject('storeUrl'));
      // A code that expires 12 seconds after the checkout (Mercado Pago's shortest is 30 minutes: stubbed here),
      // so the screen says so and offers a new one.
      await stubPix(phone, 12_000);
      await phone.reload();
      await expect.poll(() => phone.locator('article.package').count()).toBe(2);
      await phone.locator('article.package').first().getByRole('button', { name: 'Add to cart' }).click();
      await phone.getByRole('button', { name: 'Basket, 1 item' }).click();
      await phone.getByLabel('Name', { exact: true }).fill('Robin');
      await phone.getByLabel('In-game nick').fill('robin');
      await phone.locator('#checkout').getByLabel('E-mail').fill('robin@example.com');
      await phone.getByRole('radio', { name: 'PIX' }).check();
      const place = phone.getByRole('button', { name: `Place order (${money(9.99)})` });
      await expect.poll(() => place.isEnabled()).toBe(true);
      await place.click();
      const qr = phone.getByRole('img', { name: `PIX QR code to pay ${money(9.99)}` });
      await expect.poll(() => qr.isVisible()).toBe(true);
      expect(await phone.locator('#drawer').isVisible()).toBe(false);
      const box = await qr.boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
      expect(await pageWidth()).toBe(390);
      await step('13a-phone-pix', phone);
      await expect.poll(() => phone.locator('#payment').textContent(), { timeout: 30_000 }).toContain('This PIX code expired before it was paid. Pay again for a new code:');
      expect(await phone.locator('#payment-status').textContent()).toBe('Waiting for your payment. This page checks every 5 seconds.');
      expect(await phone.getByRole('button', { name: 'Pay again' }).isVisible()).toBe(true);
      expect(await phone.getByRole('img', { name: /PIX QR code/ }).count()).toBe(0);
      await phone.getByRole('button', { name: 'Close', exact: true }).click();
      await unstubPix(phone);

      // Back from a provider's page with the payment not made: the return page offers to pay again.
      await phone.reload();
      await expect.poll(() => phone.locator('article.package').count()).toBe(2);
      await phone.locator('article.package').first().getByRole('button', { name: 'Add to cart' }).click();
      await phone.getByRole('button', { name: 'Basket, 1 item' }).click();
      await phone.getByLabel('Name', { exact: true }).fill('Robin');
      await phone.getByLabel('In-game nick').fill('robin');
      await phone.locator('#checkout').getByLabel('E-mail').fill('robin@example.com');
      await expect.poll(() => place.isEnabled()).toBe(true);
      await place.click();
      await testGatewayPage(phone);
      await payOnTestGateway(phone, 'Fail the payment');
      await expect.poll(() => phone.locator('#payment-status').textContent()).toBe('Waiting for your payment. This page checks every 5 seconds.');
      expect(await phone.getByRole('button', { name: 'Pay again' }).isVisible()).toBe(true);
      expect(await pageWidth()).toBe(390);
      await step('13b-phone-return', phone);
      await phone.getByRole('button', { name: 'Close', exact: true }).click();
    } finally {
      await phone.close();
    }
  });

  it('requires the terms box when the store has terms, with a link to them', async () => {
    const operator = demoOperator();
    const patch = (terms_url: string | null) => fetch(`${operator.url}/app/store`, { method: 'PATCH', headers: operator.headers, body: JSON.stringify({ terms_url }) });
    expect((await patch('https://demo.example.com/terms')).status).toBe(200);
    try {
      await page.goto(inject('storeUrl'));
      await expect.poll(() => page.locator('article.package').count()).toBe(2);
      await card('VIP rank').getByRole('button', { name: 'Add to cart' }).click();
      await expect.poll(() => page.locator('#cart .hint').first().textContent()).toBe('Accept the terms of sale to see your total and order.');
      expect(await page.getByRole('link', { name: 'terms of sale' }).getAttribute('href')).toBe('https://demo.example.com/terms');
      expect(await page.getByRole('button', { name: 'Place order' }).isDisabled()).toBe(true);
      await step('14-terms-required');
      await page.getByRole('checkbox', { name: /I accept the terms of sale/ }).check();
      await expect.poll(() => page.locator('#cart .total').textContent()).toBe(money(9.99));
      await step('15-terms-accepted');
    } finally {
      expect((await patch(null)).status).toBe(200);
    }
  });

  it('says "this store does not exist" on a domain that is no store\'s', async () => {
    const port = new URL(inject('storeUrl')).port;
    await page.goto(`http://nowhere.localhost:${port}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('This store does not exist');
    expect(await page.locator('body').textContent()).not.toContain('Could not reach');
    await step('16-store-missing');
    expect(pageErrors).toEqual([]);
  });
});

const THEME_HOST = 'https://cdn.fresh.example';
const LOGO = `${THEME_HOST}/logo.png`;
const BANNER = `${THEME_HOST}/banner.png`;

describe('a store with nothing for sale yet', () => {
  it('shows its name and its look, and says that nothing is for sale yet', async () => {
    // A second store, made as an operator makes one: the admin command line, against this stack's table.
    const admin = execFileSync(process.execPath, ['--import', 'tsx', 'infra/admin.ts', 'store', 'create', '--name', 'Fresh Store', '--domain', 'fresh.localhost'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        TABLE_NAME: inject('tableName'),
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
      },
    });
    const { api_token } = JSON.parse(admin) as { api_token: string };
    const store = await fetch(`${demoOperator().url}/app/store`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${api_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ theme: { primary_color: '#7c3aed', logo: LOGO, banner: BANNER }, currency: 'USD' }),
    });
    expect(store.status).toBe(200);

    // The store's images live on its own https host: served here (this machine is offline), as its CDN would.
    const image = Buffer.from(await qrImage(page), 'base64');
    await page.route(`${THEME_HOST}/**`, (route) => route.fulfill({ contentType: 'image/png', body: image }));
    const port = new URL(inject('storeUrl')).port;
    await page.goto(`http://fresh.localhost:${port}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Fresh Store');
    await expect.poll(() => page.locator('#catalog').textContent()).toBe('This store has nothing for sale yet. Come back soon!');
    // No category holds a package: no category navigation; no payment account: no payment choice.
    expect(await page.locator('#categories button').count()).toBe(0);
    expect(await page.getByRole('group', { name: 'Payment method' }).count()).toBe(0);
    // The store's colour, with text on it that stays readable (axe checks the contrast).
    expect(
      await page
        .locator('#basket-toggle')
        .evaluate((button) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { backgroundColor: string } }).getComputedStyle(button).backgroundColor),
    ).toBe('rgb(124, 58, 237)');
    await expect.poll(() => page.locator('#store-logo').evaluate((logo) => (logo as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    expect(await page.locator('#store-logo').getAttribute('src')).toBe(LOGO);
    expect(await page.locator('#store-banner').isVisible()).toBe(true);
    expect(await page.locator('#store-banner').evaluate((banner) => (banner as unknown as { style: { backgroundImage: string } }).style.backgroundImage)).toBe(`url("${BANNER}")`);
    await step('17-empty-store');
    await page.unroute(`${THEME_HOST}/**`);
    expect(pageErrors).toEqual([]);
  });
});

/**
 * Cumulative Layout Shift as Chrome's web-vitals define it: layout shifts not caused by the
 * buyer's own input (within 500 ms), grouped in session windows (at most 5 s, gaps under 1 s),
 * the largest window's sum. "Good" is at most 0.1.
 */
function cumulativeLayoutShift(shifts: { at: number; value: number; input: boolean }[]): number {
  let largest = 0;
  let windowSum = 0;
  let windowStart = -Infinity;
  let last = -Infinity;
  for (const shift of shifts.filter((candidate) => !candidate.input)) {
    if (shift.at - last >= 1_000 || shift.at - windowStart >= 5_000) {
      windowSum = 0;
      windowStart = shift.at;
    }
    windowSum += shift.value;
    last = shift.at;
    largest = Math.max(largest, windowSum);
  }
  return largest;
}

describe('layout shift', () => {
  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    it(`at ${width} px: the page arrives, and a package is added while its price is slow to come, with no layout shift`, async () => {
      const target = await context.newPage();
      try {
        await target.setViewportSize({ width, height });
        // Chromium's own account of every layout shift, from before the page's first byte.
        await target.addInitScript(() => {
          const inPage = globalThis as unknown as {
            shifts: unknown[];
            PerformanceObserver: new (callback: (list: { getEntries: () => unknown[] }) => void) => { observe: (options: object) => void };
          };
          inPage.shifts = [];
          new inPage.PerformanceObserver((list) => {
            for (const entry of list.getEntries() as { startTime: number; value: number; hadRecentInput: boolean }[])
              inPage.shifts.push({ at: entry.startTime, value: entry.value, input: entry.hadRecentInput });
          }).observe({ type: 'layout-shift', buffered: true });
        });
        // The price answers late (past the 500 ms in which a shift counts as the buyer's own doing).
        await target.route('**/v1/webstore/cart/quote', async (route) => {
          await new Promise((done) => setTimeout(done, 1_200));
          await route.continue();
        });
        await target.goto(inject('storeUrl'));
        await target.locator('body:not(.loading)').waitFor();
        await expect
          .poll(() => target.locator('article.package img').evaluateAll((images) => images.every((image) => (image as unknown as { complete: boolean }).complete)))
          .toBe(true);
        await target.waitForTimeout(1_000);
        const arrival = cumulativeLayoutShift(await target.evaluate(() => (globalThis as unknown as { shifts: { at: number; value: number; input: boolean }[] }).shifts));
        await target.locator('article.package').first().getByRole('button', { name: 'Add to cart' }).click();
        await expect.poll(() => target.locator('#basket-count').textContent()).toBe('1');
        // The quote's answer, and a second more for whatever it moves.
        await expect.poll(() => target.locator('#cart .total').count(), { timeout: 10_000 }).toBe(1);
        await target.waitForTimeout(1_000);
        const shifts = await target.evaluate(() => (globalThis as unknown as { shifts: { at: number; value: number; input: boolean }[] }).shifts);
        const total = cumulativeLayoutShift(shifts);
        console.log(
          `CLS at ${width} px: ${arrival.toFixed(4)} on arrival, ${total.toFixed(4)} with a late price (${shifts.length} layout shifts, ${shifts.filter((shift) => shift.input).length} right after input)`,
        );
        expect(total).toBeLessThanOrEqual(0.02);
      } finally {
        await target.close();
      }
    });
  }

  it("keeps the page's own code and style small", async () => {
    // Fetched by the browser (Node does not resolve *.localhost names), from a tab of its own: the
    // next tests watch the shared tab's requests, and the catalog's images would still be loading there.
    const target = await context.newPage();
    await target.goto(inject('storeUrl'));
    const [script, style] = await Promise.all(
      ['/storefront.js', '/storefront.css'].map(async (path) => Buffer.from(await target.evaluate(async (url) => (await fetch(url)).text(), path))),
    );
    await target.close();
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    console.log(
      `storefront.js ${kb(script!.length)} (${kb(gzipSync(script!).length)} gzipped), storefront.css ${kb(style!.length)} (${kb(gzipSync(style!).length)} gzipped); no framework, no dependency`,
    );
    expect(gzipSync(script!).length + gzipSync(style!).length).toBeLessThan(30 * 1024);
  });
});

describe('the API reference', () => {
  it('renders every operation of the route table with Swagger UI, loading nothing but its own origin, within its CSP', async () => {
    const origin = `http://127.0.0.1:${inject('apiPort')}`;
    const requested: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    await page.addInitScript({ content: FIRST_OPERATION_PAINTED });
    const response = await page.goto(`${origin}/docs`);
    expect(response!.headers()['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY);

    const operations = routeEntries().filter(([, spec]) => spec.method !== 'OPTIONS');
    await page.locator('.opblock').first().waitFor();
    // Measured, not asserted (timings are the benchmarks' business: npm run bench:docs).
    console.log(`/docs: first operation painted ${await page.evaluate<number>(FIRST_OPERATION_PAINTED_AT)} ms after navigation started (load ${loadavg()[0]!.toFixed(1)})`);
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
    expect(documented.filter((entry) => entry.split(' ')[1]!.startsWith('/')).sort()).toEqual(
      operations.map(([name, spec]) => `${spec.method} ${spec.path} ${operationIdOf(name)}`).sort(),
    );
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

  it("is a reference without Try it out nor an Authorize dialog where the API is not the page's origin", async () => {
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
