/**
 * A store's own page, built only on the public and buyer routes of store-api. Served on the
 * store's domain (http://demo.localhost:3000 on the local stack); it calls the API on another
 * origin, which CORS allows for the store's own domain (extensions section 8).
 *
 * Read top to bottom: the API helpers, the catalog (categories, a package view), the cart and its
 * live quote, login, checkout, my orders, and "verify my account" (the handoff to the store
 * owner's backend). Plain DOM, no framework: the page's whole code is this file.
 */

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)!.content;
const API_URL = meta('store-api-url');
const OWNER_BACKEND_URL = meta('owner-backend-url');
/** The page lives on the store's domain, so its host is what `x-store-domain` names. */
const STORE_DOMAIN = location.hostname;
/** sessionStorage, not localStorage: the buyer token dies with the tab and is never in the page's code. */
const TOKEN_KEY = 'buyer_token';
/** The affiliate code the buyer came in with (`?ref=`): kept for the tab, sent with the quote and the checkout. */
const REF_KEY = 'ref_code';
/** localStorage: a visit is counted once per visitor and code, across tabs. */
const VISITED_KEY = (code: string) => `visited:${code.toLowerCase()}`;

// ---- API helpers ---------------------------------------------------------------------------

interface Problem {
  message: string;
  code?: string;
  field?: string;
}

/** Whatever went wrong, as the list of messages the API gave (or why nothing came back). */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problems: Problem[],
  ) {
    super(problems.map((problem) => problem.message).join('; '));
  }
}

async function call<T>(url: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch {
    // fetch tells a page nothing more: a refused CORS preflight and a dead server look the same.
    throw new ApiError(0, [
      { message: `Could not reach ${new URL(url).origin} (server down, or the call was refused by CORS)`, code: (await reachable(url)) ? 'REFUSED_BY_CORS' : 'UNREACHABLE' },
    ]);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.ok) return body as T;
  throw new ApiError(response.status, problemsOf(response, body));
}

/**
 * Whether the server answers at all: a `no-cors` request resolves (opaquely) whenever it does. The
 * API allows the page's calls from every store's own domain, so a server that answers but refused
 * them means this domain is no store's.
 */
async function reachable(url: string): Promise<boolean> {
  try {
    await fetch(new URL(url).origin, { mode: 'no-cors' });
    return true;
  } catch {
    return false;
  }
}

/** The envelope `{errors: [...]}` of every route; the handoff route answers `{error: CODE}`. */
function problemsOf(response: Response, body: unknown): Problem[] {
  const answer = body as { errors?: Problem[]; error?: string; request_id?: string } | undefined;
  const retry = response.headers.get('retry-after');
  const suffix = [answer?.request_id && `request ${answer.request_id}`, retry && `retry in ${retry} s`].filter(Boolean).join(', ');
  const problems = answer?.errors?.length ? answer.errors : [{ message: answer?.error ?? `HTTP ${response.status}`, code: answer?.error }];
  return suffix ? problems.map((problem) => ({ ...problem, message: `${problem.message} (${suffix})` })) : problems;
}

/**
 * One Idempotency-Key per distinct POST (path and body) until it gets a final answer. Sending the
 * same body again after a fault (a 503, a 409 while the first still runs, no answer at all) reuses
 * it, so the API runs it once: a checkout whose answer was lost is answered with the order it
 * placed, never a second one. The login routes take no key (the API ignores one there).
 */
const unansweredKeys = new Map<string, string>();
const randomKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');

/** A /v1/webstore call. The buyer token goes only to the routes that take it. */
function webstore<T>(method: string, path: string, options: { body?: unknown; auth?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { 'x-store-domain': STORE_DOMAIN };
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (options.auth && token) headers.authorization = `Bearer ${token}`;
  const request = `${method} ${path} ${body ?? ''}`;
  const keyed = method === 'POST' && !path.startsWith('/auth/');
  if (keyed) {
    if (!unansweredKeys.has(request)) unansweredKeys.set(request, randomKey());
    headers['idempotency-key'] = unansweredKeys.get(request)!;
  }
  const answered = <R>(value: R) => {
    unansweredKeys.delete(request);
    return value;
  };
  return call<T>(`${API_URL}/webstore${path}`, { method, headers, body }).then(answered, (error: unknown) => {
    // A final refusal forgets the key; a fault (5xx, 409, no answer) keeps it for the same request sent again.
    if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 409) answered(undefined);
    // An expired or revoked token: forget it, so the page offers the login again.
    if (options.auth && error instanceof ApiError && error.status === 401) signedOut();
    throw error;
  });
}

/** A call on the store's own domain (this page's origin): the session cookie goes along by itself. */
const storeDomain = <T>(method: string, path: string, body?: unknown) =>
  call<T>(path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

// ---- DOM helpers: text is always set as text, so nothing from the API is ever parsed as HTML ----

type Child = Node | string | number | false | null | undefined;

/** Conditional content reads `condition && h(...)`: false, null and undefined are skipped. */
const nodes = (children: Child[]) =>
  children.filter((child) => child !== false && child !== null && child !== undefined).map((child) => (typeof child === 'number' ? String(child) : child));

function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = Object.assign(document.createElement(tag), props);
  element.append(...nodes(children));
  return element;
}

const section = (id: string) => document.getElementById(id)!;
/**
 * Redraws a section. Fields made once (the checkout's, the coupon, the terms box) come back in their
 * rows made once, and taking a node out of the document takes its focus away: a buyer typing in the
 * nick when a quote comes back would lose the next keystrokes. So the focused element, when the
 * redraw keeps it, gets its focus and caret back at once, before any keystroke. (A field must never be
 * put into a new element before the redraw: that takes it out of the document earlier, unseen here.)
 */
function fill(id: string, ...children: Child[]) {
  const target = section(id);
  const focused = document.activeElement;
  const kept = focused instanceof HTMLElement && focused !== target && target.contains(focused) ? focused : null;
  const text = kept instanceof HTMLInputElement || kept instanceof HTMLTextAreaElement ? kept : null;
  // Inputs without a caret (email, number, checkbox) answer null here.
  const caret =
    text && text.selectionStart !== null && text.selectionEnd !== null
      ? { start: text.selectionStart, end: text.selectionEnd, direction: text.selectionDirection ?? undefined }
      : null;
  target.replaceChildren(...nodes(children));
  if (!kept?.isConnected || document.activeElement === kept) return;
  kept.focus({ preventScroll: true });
  if (text && caret) text.setSelectionRange(caret.start, caret.end, caret.direction);
}
/** Prices in the store's currency, written the buyer's way (their browser's locale). Set by loadStore. */
let currencyFormat = new Intl.NumberFormat(navigator.language, { style: 'currency', currency: 'BRL' });
const money = (amount: number) => currencyFormat.format(amount);

/** Statuses in words, for buyers (the API's enum words are for programs). */
const ORDER_STATUS: Record<string, string> = {
  PENDING: 'Awaiting payment',
  APPROVED: 'Paid',
  CANCELED: 'Canceled',
  REFUNDED: 'Refunded',
  CHARGEBACK: 'Charged back',
};
const DELIVERY_STATUS: Record<string, string> = {
  PENDING: 'Waiting to be delivered',
  DONE: 'Delivered',
  FAILED: 'Failed, will be retried',
  DEAD: 'Could not be delivered: contact the store',
  CANCELED: 'Canceled',
};
const words = (table: Record<string, string>, status: string) => table[status] ?? status;

/** An input with a visible label (its accessible name), made once per field. */
const labelled = (text: string, input: HTMLElement) => h('label', { className: 'field' }, h('span', {}, text), input);

function errorBox(error: unknown): HTMLElement {
  const problems = error instanceof ApiError ? error.problems : [{ message: String(error) }];
  // The alert role on a wrapper: on the list itself it would hide the list's items from assistive technology.
  return h(
    'div',
    { className: 'error', role: 'alert' },
    h('ul', {}, ...problems.map((problem) => h('li', {}, problem.message, problem.field && h('code', {}, ` ${problem.field}`)))),
  );
}

/** Runs an action from a button: shows its error under the button's form, and never twice at once. */
function action(button: HTMLButtonElement, errorSlot: HTMLElement, run: () => Promise<void>) {
  button.onclick = async (event) => {
    event.preventDefault();
    button.disabled = true;
    errorSlot.replaceChildren();
    try {
      await run();
    } catch (error) {
      errorSlot.replaceChildren(errorBox(error));
    } finally {
      button.disabled = false;
    }
  };
}

// ---- Catalog --------------------------------------------------------------------------------

interface Field {
  id: number;
  name: string;
  description: string;
  type: 'SELECT' | 'NUMBER' | 'TEXT' | 'GAME';
  required: boolean;
  options: { id: number; name: string; value: string; price: number | null }[];
}
interface Package {
  id: number;
  name: string;
  description: string;
  price: number;
  image: string | null;
  tags: { id: number; name: string; color: string }[];
  stock: { quantity: number | null; available: boolean };
  fields: Field[];
}
interface Promo {
  id: number;
  name: string;
  condition_mode: 'QUANTITY' | 'VALUE';
  tiers: { min_amount: number; reward_type: 'PERCENTAGE' | 'VALUE' | 'FREE'; reward_value: number }[];
}

let promos: Promo[] = [];

function fieldInput(field: Field): HTMLSelectElement | HTMLInputElement {
  if (field.type === 'SELECT') {
    const choices = field.options.map((option) => h('option', { value: option.value }, option.price ? `${option.name} (+${money(option.price)})` : option.name));
    return h('select', { name: field.name, required: field.required }, ...(field.required ? [] : [h('option', { value: '' }, '—')]), ...choices);
  }
  return h('input', { name: field.name, required: field.required, type: field.type === 'NUMBER' ? 'number' : 'text' });
}

interface Category {
  id: number;
  name: string;
  packages_count: number;
}
interface Store {
  name: string;
  currency: string;
  theme: { primary_color: string; logo: string | null; banner: string | null };
  terms_url: string | null;
}

let store: Store | null = null;
let categories: Category[] = [];
/** null: every category. */
let shownCategory: number | null = null;
let catalog: Package[] = [];

const stockText = (item: Package) => (item.stock.quantity === null ? 'In stock' : item.stock.available ? `${item.stock.quantity} left` : 'Sold out');

/** The options chosen on a card or in the package view go with this package's line only (its own `fields`). */
function optionInputs(item: Package, idPrefix: string) {
  const inputs = item.fields.map(fieldInput);
  const quantity = h('input', { type: 'number', min: '1', value: '1', className: 'quantity', name: 'quantity' });
  const add = h('button', { disabled: !item.stock.available }, item.stock.available ? 'Add to cart' : 'Sold out');
  const unchosen = inputs.map((input) => input.value);
  add.onclick = () => {
    const fields = Object.fromEntries(inputs.filter((input) => input.value !== '').map((input) => [input.name, input.value]));
    addToCart(item, Math.max(1, Number(quantity.value) || 1), fields);
    // The card is ready for the next add; the cart holds what was added. Reset in place, not redrawn:
    // a keyboard user's focus stays where it was (and comes back there from the package view).
    quantity.value = '1';
    inputs.forEach((input, index) => (input.value = unchosen[index]!));
    document.querySelector<HTMLDialogElement>('dialog.package-view')?.close();
  };
  inputs.forEach((input, index) => (input.id = `${idPrefix}-${item.id}-${index}`));
  return [
    ...item.fields.map((field, index) => labelled(`${field.description || field.name}${field.required ? ' (required)' : ''}`, inputs[index]!)),
    h('div', { className: 'row' }, labelled('Quantity', quantity), add),
  ];
}

/** Text on a colour the store chose: dark on light colours, white on dark ones, so it stays readable (WCAG AA). */
function textOn(color: string): string {
  if (!/^#[0-9a-f]{6}$/i.test(color)) return '#ffffff';
  const [r, g, b] = [1, 3, 5].map((index) => Number.parseInt(color.slice(index, index + 2), 16) / 255);
  const linear = (channel: number) => (channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4);
  const luminance = 0.2126 * linear(r!) + 0.7152 * linear(g!) + 0.0722 * linear(b!);
  // Where white and #111827 give the same contrast: above it, dark text contrasts more.
  return luminance > 0.18 ? '#111827' : '#ffffff';
}

const tagsOf = (item: Package) =>
  h(
    'p',
    { className: 'tags' },
    ...item.tags.map((tag) => Object.assign(h('span', { className: 'tag' }, tag.name), { style: `background:${tag.color};color:${textOn(tag.color)}` })),
  );

function packageCard(item: Package): HTMLElement {
  const details = h('button', { className: 'link details' }, 'Details');
  details.onclick = () => openPackage(item);
  return h(
    'article',
    { className: 'package' },
    // Width and height reserve the image's box: nothing moves when it loads.
    item.image ? h('img', { src: item.image, alt: '', width: 220, height: 220, loading: 'lazy' }) : h('div', { className: 'no-image' }),
    h('h3', {}, item.name),
    tagsOf(item),
    h('p', { className: 'price' }, money(item.price), h('span', { className: 'stock' }, stockText(item))),
    details,
    ...optionInputs(item, 'card'),
  );
}

/** The package view: its description, image, options, stock and tags, in a modal dialog (Escape closes it). */
function openPackage(item: Package) {
  document.querySelector('dialog.package-view')?.remove();
  const close = h('button', { className: 'link close', ariaLabel: 'Close' }, '✕');
  const dialog = h(
    'dialog',
    { className: 'package-view' },
    h('div', { className: 'row' }, h('h2', {}, item.name), close),
    item.image && h('img', { src: item.image, alt: item.name, width: 320, height: 320 }),
    tagsOf(item),
    h('p', { className: 'description' }, item.description || 'No description.'),
    h('p', { className: 'price' }, money(item.price), h('span', { className: 'stock' }, stockText(item))),
    ...optionInputs(item, 'view'),
  );
  dialog.setAttribute('aria-label', item.name);
  close.onclick = () => dialog.close();
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

function rewardText(tier: { reward_type: string; reward_value: number }): string {
  return tier.reward_type === 'PERCENTAGE' ? `${tier.reward_value}% off` : tier.reward_type === 'VALUE' ? `${money(tier.reward_value)} off` : 'free';
}

function renderCategories() {
  const tab = (label: string, id: number | null, count?: number) => {
    const button = h('button', { className: shownCategory === id ? 'tab current' : 'tab' }, label, count !== undefined && h('small', {}, ` ${count}`));
    button.setAttribute('aria-pressed', String(shownCategory === id));
    button.onclick = () => {
      shownCategory = id;
      renderCategories();
      void loadPackages();
    };
    return h('li', {}, button);
  };
  fill('categories', categories.length > 0 && h('ul', {}, tab('All', null), ...categories.map((category) => tab(category.name, category.id, category.packages_count))));
}

async function loadPackages() {
  const query = shownCategory === null ? '' : `&category_id=${shownCategory}`;
  try {
    catalog = (await webstore<{ data: Package[] }>('GET', `/package?limit=100${query}`)).data;
    fill('catalog', ...(catalog.length === 0 ? [h('p', { className: 'empty' }, 'This store has nothing for sale yet. Come back soon!')] : catalog.map(packageCard)));
  } catch (error) {
    fill('catalog', errorBox(error));
  }
}

/** The store's look: its colour (text on it stays readable), logo and banner. */
function applyTheme(theme: Store['theme']) {
  document.documentElement.style.setProperty('--accent', theme.primary_color);
  document.documentElement.style.setProperty('--on-accent', textOn(theme.primary_color));
  const logo = section('store-logo') as HTMLImageElement;
  logo.hidden = theme.logo === null;
  if (theme.logo) logo.src = theme.logo;
  const banner = section('store-banner');
  banner.hidden = theme.banner === null;
  if (theme.banner) banner.style.backgroundImage = `url("${encodeURI(theme.banner)}")`;
}

/** An unknown domain: the whole page says so, nothing else is offered. */
function storeMissing() {
  document.title = 'Store not found';
  document.body.replaceChildren(
    h(
      'main',
      { className: 'missing' },
      h('h1', {}, 'This store does not exist'),
      h('p', {}, `No store is set up at ${STORE_DOMAIN}. Check the address, or ask the store owner for the right link.`),
    ),
  );
}

async function loadStore() {
  try {
    // Page mode lists: limit up to 1,000 covers a demo catalog in one call.
    const [answer, categoryPage, promoPage, gatewayList] = await Promise.all([
      webstore<{ store: Store }>('GET', ''),
      webstore<{ data: Category[] }>('GET', '/category?limit=100'),
      webstore<{ data: Promo[] }>('GET', '/promo?limit=100'),
      webstore<GatewayChoice[]>('GET', '/gateway'),
    ]);
    gateways = gatewayList;
    store = answer.store;
    if (store.terms_url) termsLink.href = store.terms_url;
    currencyFormat = new Intl.NumberFormat(navigator.language, { style: 'currency', currency: store.currency });
    applyTheme(store.theme);
    document.title = store.name;
    section('store-name').textContent = store.name;
    categories = categoryPage.data;
    promos = promoPage.data;
    fill(
      'promos',
      ...promos.map((promo) =>
        h(
          'p',
          { className: 'promo' },
          `${promo.name}: `,
          promo.tiers.map((tier) => `${promo.condition_mode === 'QUANTITY' ? `${tier.min_amount}+ items` : `${money(tier.min_amount)}+`} ${rewardText(tier)}`).join(', '),
        ),
      ),
    );
    renderCategories();
    await loadPackages();
    renderCart();
    renderCheckout();
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.problems[0]?.code === 'REFUSED_BY_CORS')) return storeMissing();
    section('store-error').hidden = false;
    section('store-error').replaceChildren(errorBox(error));
  }
}

/** `?ref=<code>`: the visit is counted once per visitor, and the code rides with the quote and the checkout. */
async function recordReferral() {
  const code = new URLSearchParams(location.search).get('ref')?.trim();
  if (!code) return;
  sessionStorage.setItem(REF_KEY, code);
  if (localStorage.getItem(VISITED_KEY(code))) return;
  try {
    await webstore('POST', '/affiliate/visit', { body: { ref_code: code } });
    localStorage.setItem(VISITED_KEY(code), '1');
  } catch {
    // An unknown code credits nobody: it is not sent with the cart either.
    sessionStorage.removeItem(REF_KEY);
  }
}

// ---- Cart and its live quote ------------------------------------------------------------------

interface CartLine {
  package_id: number;
  name: string;
  quantity: number;
  fields: Record<string, string>;
}
interface Quote {
  quote_id: string;
  items: {
    package_id: number;
    name: string;
    quantity: number;
    unit_price: number;
    options_price: number;
    subtotal: number;
    promo_discount: number;
    promo_id: number | null;
    coupon_discount: number;
    total: number;
  }[];
  subtotal: number;
  promo_discount: number;
  coupon_discount: number;
  total: number;
  coupon: string | null;
  next_tiers: { promo_id: number; name: string; missing: number; reward_type: string; reward_value: number }[];
}

let cart: CartLine[] = [];
let coupon = '';
let quote: Quote | null = null;
/** Made once, so a code being typed survives the cart's re-render when a quote comes back. */
const couponInput = h('input', { id: 'coupon', name: 'coupon' });
/** Shown only when the store has terms; both the quote and the checkout need it checked then. */
const termsBox = h('input', { type: 'checkbox', name: 'terms', id: 'terms' });
termsBox.onchange = () => void refreshQuote();
/** The terms box with its label; its link is the store's `terms_url`, set by loadStore. */
const termsLink = h('a', { target: '_blank', rel: 'noopener' }, 'terms of sale');
const termsRow = h('p', { className: 'check' }, termsBox, h('label', { htmlFor: 'terms' }, 'I accept the ', termsLink, ' (required)'));
const applyCoupon = h('button', {}, 'Apply');
applyCoupon.onclick = () => {
  coupon = couponInput.value.trim();
  void refreshQuote();
};
/** The coupon field in its row, made once (see fill). */
const couponRow = h('div', { className: 'row' }, labelled('Coupon', couponInput), applyCoupon);
let quoteError: unknown = null;
/** Why the last coupon applied was refused; the cart is priced without it. */
let couponError: unknown = null;
/** Quotes can overtake each other; only the answer to the latest cart is shown. */
let quoteRound = 0;

/** A package appears once per cart (an API rule): adding it again adds to its quantity. */
function addToCart(item: Package, quantity: number, fields: Record<string, string>) {
  const line = cart.find((candidate) => candidate.package_id === item.id);
  if (line) Object.assign(line, { quantity: line.quantity + quantity, fields });
  else cart.push({ package_id: item.id, name: item.name, quantity, fields });
  renderBasketCount();
  void refreshQuote();
}

/** Each line carries its own options (`fields`): they price and deliver that package alone. */
const cartBody = () => ({
  cart: cart.map(({ package_id, quantity, fields }) => ({ package_id, quantity, fields })),
  ...(coupon ? { coupon } : {}),
  ...(sessionStorage.getItem(REF_KEY) ? { ref_code: sessionStorage.getItem(REF_KEY) } : {}),
  ...(store?.terms_url ? { terms: termsBox.checked } : {}),
});

function renderBasketCount() {
  const count = cart.reduce((sum, line) => sum + line.quantity, 0);
  section('basket-count').textContent = String(count);
  section('basket-toggle').setAttribute('aria-label', `Basket, ${count} item${count === 1 ? '' : 's'}`);
}

/** The option's name (as the buyer chose it) for a value of a line's fields. */
function optionText(packageId: number, name: string, value: string): string {
  const field = catalog.find((item) => item.id === packageId)?.fields.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
  return `${field?.description || name}: ${field?.options.find((option) => option.value === value)?.name ?? value}`;
}

/** The total a buyer sees is always the API's: prices, promos and the coupon are never computed here. */
async function refreshQuote(refusedCoupon: unknown = null) {
  const round = ++quoteRound;
  quote = null;
  quoteError = null;
  couponError = refusedCoupon;
  if (cart.length > 0) {
    try {
      const answer = await webstore<Quote>('POST', '/cart/quote', { body: { ...cartBody(), ...(customer ? { client_email: customer.email } : {}) } });
      if (round !== quoteRound) return;
      quote = answer;
    } catch (error) {
      if (round !== quoteRound) return;
      // A refused coupon drops the coupon, not the cart: the prices without it stay on screen (and
      // checkout possible), the reason beside the coupon field.
      if (coupon && error instanceof ApiError && error.problems.some((problem) => problem.field === 'coupon')) {
        coupon = '';
        return refreshQuote(error);
      }
      quoteError = error;
    }
  }
  renderCart();
  renderCheckout();
}

function nextTierHint(tier: Quote['next_tiers'][number]): string {
  const promo = promos.find((candidate) => candidate.id === tier.promo_id);
  const missing = promo?.condition_mode === 'VALUE' ? money(tier.missing) : `${tier.missing} more item${tier.missing === 1 ? '' : 's'}`;
  return `Add ${missing} for ${rewardText(tier)} (${tier.name})`;
}

function renderCart() {
  const lines = cart.map((line, index) => {
    const priced = quote?.items.find((item) => item.package_id === line.package_id);
    const remove = h('button', { className: 'link', ariaLabel: `Remove ${line.name}` }, '✕');
    remove.onclick = () => {
      cart.splice(index, 1);
      renderBasketCount();
      void refreshQuote();
    };
    const promoName = promos.find((promo) => promo.id === priced?.promo_id)?.name ?? 'Promo';
    return h(
      'li',
      {},
      h('div', { className: 'row' }, h('span', {}, `${line.quantity} × ${line.name}`), priced && h('strong', {}, money(priced.total)), remove),
      Object.keys(line.fields).length > 0 &&
        h(
          'small',
          { className: 'options' },
          Object.entries(line.fields)
            .map(([name, value]) => optionText(line.package_id, name, value))
            .join(', '),
        ),
      priced && priced.options_price > 0 && h('small', {}, `options +${money(priced.options_price)} each`),
      priced && priced.promo_discount > 0 && h('small', { className: 'discount' }, `${promoName} −${money(priced.promo_discount)}`),
      priced && priced.coupon_discount > 0 && h('small', { className: 'discount' }, `Coupon −${money(priced.coupon_discount)}`),
    );
  });
  const termsOnly = quoteError instanceof ApiError && quoteError.problems.every((problem) => problem.field === 'terms');
  fill(
    'cart',
    h('h2', {}, 'Cart'),
    cart.length === 0 ? h('p', { className: 'muted' }, 'Your cart is empty.') : h('ul', { className: 'lines' }, ...lines),
    couponRow,
    store?.terms_url && termsRow,
    termsOnly && cart.length > 0 && h('p', { className: 'hint' }, 'Accept the terms of sale to see your total and order.'),
    couponError !== null && errorBox(couponError),
    quote &&
      h(
        'dl',
        { className: 'totals' },
        h('dt', {}, 'Subtotal'),
        h('dd', {}, money(quote.subtotal)),
        quote.promo_discount > 0 && h('dt', {}, 'Promos'),
        quote.promo_discount > 0 && h('dd', { className: 'discount' }, `−${money(quote.promo_discount)}`),
        quote.coupon && h('dt', {}, `Coupon ${quote.coupon}`),
        quote.coupon && h('dd', { className: 'discount' }, `−${money(quote.coupon_discount)}`),
        h('dt', {}, 'Total'),
        h('dd', { className: 'total' }, money(quote.total)),
      ),
    ...(quote?.next_tiers ?? []).map((tier) => h('p', { className: 'hint' }, nextTierHint(tier))),
    quoteError !== null && !termsOnly && errorBox(quoteError),
  );
}

// ---- Login ------------------------------------------------------------------------------------

interface Customer {
  email: string;
  name: string;
}
let customer: Customer | null = null;

/** Logging out forgets everything of the last buyer on this tab: on a shared computer the next one sees none of it. */
function signedOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(REF_KEY);
  customer = null;
  placed = null;
  closePayment();
  cart = [];
  coupon = '';
  couponInput.value = '';
  termsBox.checked = false;
  for (const input of [checkoutForm.name, checkoutForm.nick, checkoutForm.email]) input.value = '';
  checkoutForm.errors.replaceChildren();
  renderBasketCount();
  void refreshQuote();
  // The next buyer on this tab never sees the last one's orders, not even for a moment.
  orders = [];
  opened = null;
  renderAccount();
  renderCheckout();
  renderOrders();
  // Their affiliate code, links, balance and statement too, and the options they chose on the cards (drawn afresh).
  fill('affiliate');
  if (store) void loadPackages();
}

/**
 * The buyer logs in once, with the API's e-mail code, for the bearer token every /v1/webstore
 * buyer route takes (checkout as the buyer, my orders). The store-domain session cookie is only
 * needed for the handoff, so it is asked for later, by "verify my account".
 */
function renderAccount() {
  const slot = h('div');
  if (customer) {
    const logout = h('button', { className: 'link' }, 'Log out');
    logout.onclick = signedOut;
    const verify = h('button', {}, 'Verify my account');
    action(verify, slot, () => verifyAccount(slot));
    fill(
      'account',
      h('h2', {}, 'Account'),
      h('p', {}, `Logged in as ${customer.email} `, logout),
      h('p', { className: 'muted' }, "“Verify my account” proves to the store owner's site who you are, without giving it a password or a token."),
      verify,
      slot,
    );
    return;
  }
  const email = h('input', { type: 'email', placeholder: 'you@example.com', name: 'email', autocomplete: 'email' });
  const code = h('input', { inputMode: 'numeric', placeholder: '6-digit code', name: 'code', maxLength: 6, autocomplete: 'one-time-code' });
  const send = h('button', {}, 'Send code');
  const verify = h('button', {}, 'Log in');
  action(send, slot, async () => {
    await webstore('POST', '/auth/login', { body: { email: email.value } });
    slot.replaceChildren(h('p', { className: 'muted' }, 'Code sent. On the local stack it is in .local/outbox.jsonl.'));
  });
  action(verify, slot, async () => {
    const answer = await webstore<{ access_token: string; customer: Customer }>('POST', '/auth/verify', { body: { email: email.value, code: code.value } });
    sessionStorage.setItem(TOKEN_KEY, answer.access_token);
    customer = answer.customer;
    renderAccount();
    // The whole page switches to the buyer at once; the quote and the orders follow when they come.
    renderCheckout();
    await Promise.all([refreshQuote(), loadOrders(), renderAffiliate()]);
  });
  fill(
    'account',
    h('h2', {}, 'Log in'),
    h('p', { className: 'muted' }, 'We e-mail you a code. On the local stack, the code is in .local/outbox.jsonl.'),
    h('div', { className: 'row' }, labelled('E-mail', email), send),
    h('div', { className: 'row' }, labelled('Code', code), verify),
    slot,
  );
}

// ---- Checkout ---------------------------------------------------------------------------------

/** An order placed without a payment method (a store with no gateway enabled): the operator approves it by hand. */
let placed: { order_id: string; status: string; total: number } | null = null;

/**
 * Made once, each in its label made once: the form is redrawn whenever the quote changes, and must
 * keep what the buyer typed and where they type it (see fill).
 */
const checkoutForm = {
  name: h('input', { name: 'client_name', autocomplete: 'name' }),
  nick: h('input', { name: 'client_identifier' }),
  // A guest checks out with an e-mail; a logged-in buyer's order takes the e-mail of the token.
  email: h('input', { type: 'email', name: 'client_email', autocomplete: 'email' }),
  errors: h('div'),
};
const checkoutLabels = {
  name: labelled('Name', checkoutForm.name),
  nick: labelled('In-game nick', checkoutForm.nick),
  email: labelled('E-mail', checkoutForm.email),
};

/** What a checkout with a gateway answers besides the order (section 13): the PIX fields, or the provider's page. */
type CheckoutAnswer = { order_id: string; status: string; total: number } & PaymentStart;

function renderCheckout() {
  const { name, nick, email, errors } = checkoutForm;
  if (customer && !name.value) name.value = customer.name;
  const buy = h('button', { disabled: quote === null }, quote ? `Place order (${money(quote.total)})` : 'Place order');
  action(buy, errors, async () => {
    const gateway = chosenGateway;
    // The quote_id keeps the prices the buyer saw, as long as the cart is the quoted one.
    const order = await webstore<CheckoutAnswer>('POST', '/checkout', {
      auth: true,
      body: {
        ...cartBody(),
        quote_id: quote?.quote_id,
        client_name: name.value,
        client_identifier: nick.value,
        ...(customer ? {} : { client_email: email.value }),
        // The provider sends the buyer back to this page, on this page's own origin (the API refuses any other).
        ...(gateway ? { gateway, return_url: RETURN_URL } : {}),
      },
    });
    // The coupon was used by this order; the next cart starts without it.
    cart = [];
    coupon = '';
    couponInput.value = '';
    termsBox.checked = false;
    renderBasketCount();
    // The stock the order took shows on the cards.
    void loadPackages();
    if (gateway) {
      placed = null;
      startPayment({ order_id: order.order_id, total: order.total, gateway }, order);
    } else placed = order;
    await Promise.all([refreshQuote(), loadOrders()]);
  });
  fill(
    'checkout',
    h('h2', {}, 'Checkout'),
    placed &&
      h(
        'p',
        { className: 'success', role: 'status' },
        `Order ${placed.order_id} placed (${words(ORDER_STATUS, placed.status)}, ${money(placed.total)}). Unpaid orders are canceled after 30 minutes.`,
      ),
    checkoutLabels.name,
    checkoutLabels.nick,
    !customer && checkoutLabels.email,
    gateways.length > 0 && gatewayPicker('gateway'),
    buy,
    errors,
  );
}

// ---- Payment (extensions section 13) ----------------------------------------------------------

interface GatewayChoice {
  gateway: string;
  display: string;
  name: string;
}
/** What a checkout or a new payment answers: the PIX code and its QR image, or the provider's page to send the buyer to. */
interface PaymentStart {
  pix_code?: string | null;
  qr_code?: string | null;
  checkout_url?: string | null;
  expires_at?: string | null;
  payment?: PaymentStart;
}
/**
 * The order being paid on this tab. Kept in sessionStorage: it survives the trip to the provider's
 * page and back (the return URL cannot name the order: it is sent before the order exists).
 */
interface Paying {
  order_id: string;
  total: number;
  gateway: string;
  pix: { code: string; qr: string; expires_at: string | null } | null;
  status: string;
  /** Back from the provider's page: the payment may have failed or been left, so paying again is offered. */
  returned: boolean;
}

const PAYING_KEY = 'paying_order';
const RETURN_URL = `${location.origin}/?payment=return`;
/** The official in-game client's rhythm: one status call every 5 seconds, until the order is settled. */
const POLL_MS = 5_000;
const SETTLED = new Set(['APPROVED', 'CANCELED', 'REFUNDED', 'CHARGEBACK']);
const PAYMENT_STATUS: Record<string, string> = {
  PENDING: 'Waiting for your payment. This page checks every 5 seconds.',
  APPROVED: 'Payment received: your order is paid.',
  CANCELED: 'This order was canceled: it was not paid within 30 minutes.',
  REFUNDED: 'This order was refunded.',
  CHARGEBACK: 'This order was charged back.',
};

let gateways: GatewayChoice[] = [];
let chosenGateway: string | null = null;
let paying: Paying | null = null;
/** The paid order with its deliveries (a logged-in buyer's; a guest's order is not readable without a token). */
let paidOrder: Order | null = null;
let paymentError: unknown = null;
let pollTimer: ReturnType<typeof setTimeout> | undefined;

/** The section's heading and live region are made once: a region must exist before its text changes for it to be announced. */
const paymentTitle = h('h2', { id: 'payment-title', tabIndex: -1 });
const paymentStatus = h('p', { role: 'status', className: 'status', id: 'payment-status' });
const paymentBody = h('div');
section('payment').append(paymentTitle, paymentStatus, paymentBody);

function gatewayPicker(name: string): HTMLElement {
  if (!gateways.some((choice) => choice.gateway === chosenGateway)) chosenGateway = gateways[0]?.gateway ?? null;
  return h(
    'fieldset',
    { className: 'gateways' },
    h('legend', {}, 'Payment method'),
    ...gateways.map((choice) => {
      const radio = h('input', { type: 'radio', name, value: choice.gateway, checked: choice.gateway === chosenGateway });
      radio.onchange = () => (chosenGateway = choice.gateway);
      return h('label', { className: 'choice' }, radio, ` ${choice.display}`);
    }),
  );
}

function startPayment(order: Pick<Paying, 'order_id' | 'total' | 'gateway'>, answer: PaymentStart) {
  // The checkout answers the PIX fields at its top level as the real system's clients read them; a new payment is the Payment itself.
  const start = { ...answer.payment, ...answer };
  const pix = start.pix_code && start.qr_code ? { code: start.pix_code, qr: start.qr_code, expires_at: start.expires_at ?? null } : null;
  paying = { ...order, pix, status: 'PENDING', returned: false };
  paidOrder = null;
  paymentError = null;
  sessionStorage.setItem(PAYING_KEY, JSON.stringify(paying));
  if (!pix && start.checkout_url) {
    // The provider's page (the TEST gateway's, Mercado Pago's): it sends the buyer back to RETURN_URL.
    location.assign(start.checkout_url);
    return;
  }
  showPayment();
  schedulePoll();
}

/** Brings the payment into view: on a phone the basket drawer closes over it; the heading takes the focus. */
function showPayment() {
  setDrawerOpen(false);
  renderPayment();
  paymentTitle.focus();
}

function schedulePoll(delay = POLL_MS) {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(() => void pollStatus(), delay);
}

async function pollStatus() {
  const current = paying;
  if (!current) return;
  try {
    const { status } = await webstore<{ status: string }>('GET', `/order_status/${encodeURIComponent(current.order_id)}`);
    if (paying !== current) return;
    paymentError = null;
    current.status = status;
    if (status === 'APPROVED' && customer) {
      paidOrder = await webstore<Order>('GET', `/order/${encodeURIComponent(current.order_id)}`, { auth: true });
      // "My orders" shows it paid too, its opened detail included.
      if (opened?.internal_id === paidOrder.internal_id) opened = paidOrder;
      void loadOrders();
    }
    if (SETTLED.has(status)) sessionStorage.removeItem(PAYING_KEY);
    else sessionStorage.setItem(PAYING_KEY, JSON.stringify(current));
  } catch (error) {
    if (paying !== current) return;
    paymentError = error;
    // An order this store does not know: nothing to wait for. Any other fault: the next poll tries again.
    if (error instanceof ApiError && error.status === 404) {
      sessionStorage.removeItem(PAYING_KEY);
      current.status = 'UNKNOWN';
    }
  }
  renderPayment();
  if (paying === current && current.status === 'PENDING') schedulePoll();
}

function closePayment() {
  clearTimeout(pollTimer);
  paying = null;
  paidOrder = null;
  paymentError = null;
  sessionStorage.removeItem(PAYING_KEY);
  renderPayment();
}

/** A new payment of the same order (section 13): after a failed, expired or abandoned one, or with another method. */
function payAgain(current: Paying): HTMLElement {
  const errors = h('div');
  const again = h('button', {}, 'Pay again');
  action(again, errors, async () => {
    const gateway = chosenGateway!;
    const payment = await webstore<PaymentStart>('POST', `/order/${encodeURIComponent(current.order_id)}/payment`, { body: { gateway, return_url: RETURN_URL } });
    startPayment({ order_id: current.order_id, total: current.total, gateway }, payment);
  });
  return h('div', { className: 'pay-again' }, gatewayPicker('repay_gateway'), again, errors);
}

function pixScreen(current: Paying, pix: NonNullable<Paying['pix']>): Child[] {
  const expires = pix.expires_at ? new Date(pix.expires_at) : null;
  if (expires && expires.getTime() <= Date.now()) {
    return [h('p', {}, 'This PIX code expired before it was paid. Pay again for a new code:'), payAgain(current)];
  }
  const code = h('textarea', { id: 'pix-code', readOnly: true, rows: 3, value: pix.code });
  const copied = h('span', { role: 'status', className: 'muted' });
  const copy = h('button', { type: 'button' }, 'Copy code');
  copy.onclick = async () => {
    try {
      await navigator.clipboard.writeText(pix.code);
      copied.textContent = 'Code copied.';
    } catch {
      // No clipboard access (an old browser, a page not served over https): the code is selected for the buyer to copy.
      code.select();
      copied.textContent = 'Select and copy the code above.';
    }
  };
  return [
    h(
      'div',
      { className: 'pix' },
      h('img', { src: `data:image/png;base64,${pix.qr}`, alt: `PIX QR code to pay ${money(current.total)}`, width: 240, height: 240 }),
      h(
        'div',
        {},
        h('p', {}, `Scan the QR code with your bank's app, or copy the PIX code and paste it there.`),
        h('label', { className: 'field', htmlFor: 'pix-code' }, h('span', {}, 'PIX code (copy and paste)')),
        code,
        h('div', { className: 'row' }, copy, copied),
        expires && h('p', { className: 'muted' }, `The code expires at ${expires.toLocaleString()}.`),
      ),
    ),
  ];
}

function renderPayment() {
  // Gone when the page says "this store does not exist".
  const payment = document.getElementById('payment');
  if (!payment) return;
  payment.hidden = paying === null;
  if (!paying) {
    paymentStatus.textContent = '';
    paymentBody.replaceChildren();
    return;
  }
  const current = paying;
  paymentTitle.textContent = `Order ${current.order_id} · ${money(current.total)}`;
  const statusText = current.status === 'UNKNOWN' ? 'This store does not know this order.' : words(PAYMENT_STATUS, current.status);
  // Set only when it changes, so a screen reader hears each status once, not every 5 seconds.
  if (paymentStatus.textContent !== statusText) paymentStatus.textContent = statusText;
  const done = h('button', { type: 'button', className: 'link' }, current.status === 'PENDING' ? 'Close' : 'Continue shopping');
  done.onclick = closePayment;
  const pending = current.status === 'PENDING';
  paymentBody.replaceChildren(
    ...nodes([
      pending && current.pix && !current.returned && h('div', {}, ...pixScreen(current, current.pix)),
      pending &&
        (current.returned || !current.pix) &&
        h('div', {}, h('p', {}, 'If you did not finish paying, or the payment failed or expired, you can pay again:'), payAgain(current)),
      current.status === 'APPROVED' && paidOrder && orderDetail(paidOrder, false),
      current.status === 'APPROVED' && !paidOrder && h('p', {}, 'Log in with the e-mail you ordered with to follow the delivery of your order in “My orders”.'),
      paymentError !== null && errorBox(paymentError),
      done,
    ]),
  );
}

/**
 * On load: back from the provider's page (`?payment=return`), or a reload while paying, shows the
 * order being paid and polls at once. Run once the catalog is in (the paid order's options are
 * named from it), before the page is drawn (the section would push the catalog down).
 */
async function resumePayment() {
  const params = new URLSearchParams(location.search);
  const returned = params.get('payment') === 'return';
  if (returned) {
    params.delete('payment');
    history.replaceState(null, '', `${location.pathname}${params.size > 0 ? `?${params}` : ''}`);
  }
  const saved = sessionStorage.getItem(PAYING_KEY);
  if (!saved) return;
  paying = { ...(JSON.parse(saved) as Paying), ...(returned ? { returned: true } : {}) };
  await pollStatus();
}

// ---- My orders --------------------------------------------------------------------------------

interface Order {
  internal_id: string;
  status: string;
  total: number;
  discount: number;
  created_at: string;
  client_identifier: string;
  coupon: string | null;
  coupon_discount: number;
  packages: { package_id: number; name: string; quantity: number; total: number; options_price: number; variables?: { name: string; value: string }[] }[];
  /** Present once the API delivers to game servers (section 9). */
  deliveries?: { package_name: string; server_name: string | null; status: string; updated_at: string }[];
}

let orders: Order[] = [];
let ordersError: unknown = null;
let opened: Order | null = null;

let ordersLoading = false;

async function loadOrders() {
  ordersError = null;
  if (customer) {
    ordersLoading = true;
    renderOrders();
    try {
      orders = (await webstore<{ data: Order[] }>('GET', '/order?page_size=20', { auth: true })).data;
    } catch (error) {
      ordersError = error;
    } finally {
      ordersLoading = false;
    }
  }
  renderOrders();
}

async function openOrder(id: string) {
  try {
    opened = await webstore<Order>('GET', `/order/${encodeURIComponent(id)}`, { auth: true });
    // The list row may predate a status change: show the same status as the detail.
    orders = orders.map((order) => (order.internal_id === id ? opened! : order));
  } catch (error) {
    ordersError = error;
  }
  renderOrders();
}

/** `titled`: false where a heading already names the order (the payment section's). */
function orderDetail(order: Order, titled = true): HTMLElement {
  return h(
    'div',
    { className: 'detail' },
    titled && h('h3', {}, `Order ${order.internal_id}`),
    h(
      'p',
      {},
      `${words(ORDER_STATUS, order.status)} · placed ${new Date(order.created_at).toLocaleString()} · total ${money(order.total)}`,
      order.discount > 0 && ` (you saved ${money(order.discount)})`,
    ),
    h('p', {}, `For ${order.client_identifier}`, order.coupon && ` · coupon ${order.coupon} (−${money(order.coupon_discount)})`),
    h(
      'ul',
      {},
      ...order.packages.map((line) =>
        h(
          'li',
          {},
          `${line.quantity} × ${line.name}: ${money(line.total)}`,
          (line.variables?.length ?? 0) > 0 &&
            h('small', { className: 'options' }, ` (${line.variables!.map((given) => optionText(line.package_id, given.name, given.value)).join(', ')})`),
        ),
      ),
    ),
    order.deliveries?.length === 0 && h('p', { className: 'muted' }, 'Nothing delivered yet: delivery starts once the order is paid and approved.'),
    // `length &&` would render a 0 with no deliveries: the condition is a boolean.
    order.deliveries !== undefined &&
      order.deliveries.length > 0 &&
      h(
        'table',
        {},
        h('tr', {}, h('th', {}, 'Delivery'), h('th', {}, 'Server'), h('th', {}, 'Status'), h('th', {}, 'Updated')),
        ...order.deliveries.map((delivery) =>
          h(
            'tr',
            {},
            h('td', {}, delivery.package_name),
            h('td', {}, delivery.server_name ?? (delivery.status === 'PENDING' ? 'any server, once one claims it' : '—')),
            h('td', {}, words(DELIVERY_STATUS, delivery.status)),
            h('td', {}, new Date(delivery.updated_at).toLocaleString()),
          ),
        ),
      ),
  );
}

function renderOrders() {
  if (!customer) {
    fill('orders', h('h2', {}, 'My orders'), h('p', { className: 'muted' }, 'Log in to see your orders.'));
    return;
  }
  if (ordersLoading && orders.length === 0) {
    fill('orders', h('h2', {}, 'My orders'), h('p', { className: 'muted' }, 'Loading your orders…'));
    return;
  }
  const rows = orders.map((order) => {
    const open = h('button', { className: 'link' }, order.internal_id);
    open.onclick = () => void openOrder(order.internal_id);
    return h(
      'tr',
      {},
      h('td', {}, open),
      h('td', {}, new Date(order.created_at).toLocaleString()),
      h('td', {}, words(ORDER_STATUS, order.status)),
      h('td', {}, money(order.total)),
    );
  });
  fill(
    'orders',
    h('h2', {}, 'My orders'),
    orders.length === 0
      ? h('p', { className: 'muted' }, 'No orders yet.')
      : h('table', {}, h('tr', {}, h('th', {}, 'Order'), h('th', {}, 'Placed'), h('th', {}, 'Status'), h('th', {}, 'Total')), ...rows),
    opened && orderDetail(opened),
    ordersError !== null && errorBox(ordersError),
  );
}

// ---- Affiliate panel --------------------------------------------------------------------------

interface AffiliateLink {
  id: number;
  name: string;
  ref_code: string;
  url: string;
  sales: number;
  revenue: number;
  d7_visits: number;
}
interface AffiliatePanel {
  status: string;
  ref_code: string;
  percent_commission: number;
  balance: number;
  min_withdraw: number | null;
  /** Where withdrawals are paid: empty strings until the affiliate saves them. */
  withdraw_settings: WithdrawSettings;
  stats: { total_sales: number; total_amount: number; d7_visits: number };
  links: AffiliateLink[];
}
interface WithdrawSettings {
  full_name: string;
  pix_key: string;
  pix_key_type: string;
  cpf_cnpj: string;
}
const PIX_KEY_TYPES: Record<string, string> = { CPF: 'CPF', CNPJ: 'CNPJ', EMAIL: 'E-mail', PHONE: 'Phone number', RANDOM: 'Random key' };

/** Where the store pays this affiliate's withdrawals (a PIX key and the holder's CPF or CNPJ): needed before the first withdrawal. */
function withdrawSettingsForm(saved: WithdrawSettings, errors: HTMLElement): HTMLElement {
  const fullName = h('input', { name: 'full_name', value: saved.full_name, autocomplete: 'name' });
  const keyType = h(
    'select',
    { name: 'pix_key_type' },
    ...Object.entries(PIX_KEY_TYPES).map(([value, text]) => h('option', { value, selected: value === saved.pix_key_type }, text)),
  );
  const key = h('input', { name: 'pix_key', value: saved.pix_key });
  const taxId = h('input', { name: 'cpf_cnpj', value: saved.cpf_cnpj, inputMode: 'numeric' });
  const save = h('button', {}, 'Save payout details');
  action(save, errors, async () => {
    const withdraw_settings = { full_name: fullName.value.trim(), pix_key_type: keyType.value, pix_key: key.value.trim(), cpf_cnpj: taxId.value.trim() };
    await webstore('PATCH', '/affiliate/me', { auth: true, body: { withdraw_settings } });
    await renderAffiliate();
  });
  return h(
    'div',
    { className: 'payout' },
    h('h3', {}, 'Payout details'),
    saved.pix_key === '' && h('p', { className: 'muted' }, 'Save where to pay you before your first withdrawal.'),
    h('div', { className: 'row wrap' }, labelled('Full name', fullName), labelled('PIX key type', keyType), labelled('PIX key', key), labelled('CPF or CNPJ', taxId)),
    save,
  );
}

interface AffiliateTransaction {
  id: number;
  operation: string;
  amount: number;
  created_at: string;
}
const OPERATION: Record<string, string> = {
  COMMISSION: 'Commission',
  COMMISSION_REVERSED: 'Commission reversed',
  WITHDRAW_PENDING: 'Withdrawal requested',
  WITHDRAW_PAID: 'Withdrawal paid',
  WITHDRAW_REJECTED: 'Withdrawal rejected',
};

/** A logged-in buyer's affiliate program: join with a code, then links with their URLs and stats, the statement, a withdrawal. */
async function renderAffiliate() {
  if (!customer) return fill('affiliate');
  const errors = h('div');
  let panel: AffiliatePanel;
  try {
    panel = await webstore<AffiliatePanel>('GET', '/affiliate/me', { auth: true });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) return fill('affiliate', h('h2', {}, 'Affiliate program'), errorBox(error));
    const code = h('input', { name: 'affiliate_code', id: 'affiliate-code' });
    const join = h('button', {}, 'Join');
    action(join, errors, async () => {
      await webstore('POST', '/affiliate/join', { auth: true, body: { ref_code: code.value.trim() } });
      await renderAffiliate();
    });
    return fill(
      'affiliate',
      h('h2', {}, 'Affiliate program'),
      h('p', { className: 'muted' }, 'Earn a commission on every order placed through your links.'),
      h('div', { className: 'row' }, labelled('Your code', code), join),
      errors,
    );
  }
  const statement = (await webstore<{ data: AffiliateTransaction[] }>('GET', '/affiliate/transactions', { auth: true })).data;
  const linkName = h('input', { name: 'link_name', id: 'link-name' });
  const linkCode = h('input', { name: 'link_code', id: 'link-code' });
  const addLink = h('button', {}, 'Add link');
  action(addLink, errors, async () => {
    await webstore('POST', '/affiliate/link', { auth: true, body: { name: linkName.value.trim(), ref_code: linkCode.value.trim() } });
    await renderAffiliate();
  });
  const amount = h('input', { type: 'number', min: '0.01', step: '0.01', name: 'withdraw_amount', id: 'withdraw-amount' });
  const withdraw = h('button', {}, 'Request withdrawal');
  action(withdraw, errors, async () => {
    await webstore('POST', '/affiliate/withdraw', { auth: true, body: { amount: Number(amount.value) } });
    await renderAffiliate();
  });
  fill(
    'affiliate',
    h('h2', {}, 'Affiliate program'),
    h('p', {}, `Your code ${panel.ref_code} · ${panel.percent_commission}% commission · balance ${money(panel.balance)}`, panel.status === 'blocked' && ' · blocked by the store'),
    h('p', { className: 'muted' }, `${panel.stats.total_sales} sales (${money(panel.stats.total_amount)}), ${panel.stats.d7_visits} visits in the last 7 days`),
    h(
      'table',
      { className: 'links' },
      h('tr', {}, h('th', {}, 'Link'), h('th', {}, 'URL'), h('th', {}, 'Sales'), h('th', {}, 'Revenue'), h('th', {}, 'Visits (7 days)')),
      ...panel.links.map((link) =>
        h('tr', {}, h('td', {}, link.name), h('td', {}, h('code', {}, link.url)), h('td', {}, link.sales), h('td', {}, money(link.revenue)), h('td', {}, link.d7_visits)),
      ),
    ),
    h('div', { className: 'row' }, labelled('Link name', linkName), labelled('Link code', linkCode), addLink),
    h('h3', {}, 'Statement'),
    statement.length === 0
      ? h('p', { className: 'muted' }, 'Nothing yet.')
      : h(
          'ul',
          { className: 'statement' },
          ...statement.map((entry) =>
            h('li', {}, `${new Date(entry.created_at).toLocaleDateString()} · ${OPERATION[entry.operation] ?? entry.operation} · ${money(entry.amount)}`),
          ),
        ),
    h('div', { className: 'row' }, labelled(`Withdraw${panel.min_withdraw ? ` (at least ${money(panel.min_withdraw)})` : ''}`, amount), withdraw),
    withdrawSettingsForm(panel.withdraw_settings, errors),
    errors,
  );
}

// ---- Verify my account: the handoff ------------------------------------------------------------

/**
 * GET /auth/handoff (same origin: the HttpOnly session cookie goes along) answers a single-use,
 * 60-second handoff; the owner's backend exchanges it with its identify key, which only it holds.
 * Without a session, the buyer first confirms an e-mail code on the store's domain, which sets
 * the cookie.
 */
async function verifyAccount(slot: HTMLElement) {
  let handoff: string;
  try {
    handoff = (await storeDomain<{ handoff: string }>('GET', '/auth/handoff')).handoff;
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
    await storeDomain('POST', '/auth/login', { email: customer!.email });
    return askSessionCode(slot);
  }
  const answer = await call<{ customer: { email: string; name: string } }>(`${OWNER_BACKEND_URL}/identify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ handoff }),
  });
  slot.replaceChildren(h('p', { className: 'success', id: 'verified' }, `The owner's site now knows you as ${answer.customer.name} <${answer.customer.email}>.`));
}

function askSessionCode(slot: HTMLElement) {
  const code = h('input', { inputMode: 'numeric', placeholder: '6-digit code', name: 'session_code', maxLength: 6, autocomplete: 'one-time-code' });
  const confirm = h('button', {}, 'Confirm and verify');
  const errors = h('div');
  action(confirm, errors, async () => {
    await storeDomain('POST', '/auth/verify', { email: customer!.email, code: code.value });
    await verifyAccount(slot);
  });
  slot.replaceChildren(
    h('p', { className: 'muted' }, `We sent a new code to ${customer!.email} (local stack: .local/outbox.jsonl).`),
    h('div', { className: 'row' }, labelled('Session code', code), confirm),
    errors,
  );
}

// ---- Start ------------------------------------------------------------------------------------

async function restoreSession() {
  if (!sessionStorage.getItem(TOKEN_KEY)) return;
  try {
    customer = await webstore<Customer>('GET', '/customer/me', { auth: true });
  } catch {
    // An expired token was dropped by webstore(); the login form is shown instead.
  }
}

function setDrawerOpen(open: boolean) {
  document.body.classList.toggle('drawer-open', open);
  section('basket-toggle').setAttribute('aria-expanded', String(open));
}

/** On narrow screens the basket is a drawer, opened by the sticky basket button; on wide ones the button brings the cart into view. */
function wireBasket() {
  section('basket-toggle').onclick = () => {
    if (matchMedia('(max-width: 800px)').matches) setDrawerOpen(!document.body.classList.contains('drawer-open'));
    else section('cart').scrollIntoView({ behavior: 'smooth' });
  };
  section('drawer-close').onclick = () => setDrawerOpen(false);
  section('drawer').addEventListener('keydown', (event) => event.key === 'Escape' && setDrawerOpen(false));
}

/**
 * The page is drawn once everything it shows on arrival has come (the store, its catalog, the
 * buyer's orders): until then it stays hidden (a notice says it is loading), so nothing moves
 * under the buyer's eyes or pointer as the answers arrive (no layout shift).
 */
function reveal() {
  document.body.classList.remove('loading');
  document.body.removeAttribute('aria-busy');
}

wireBasket();
// The session and the referral visit are independent: in parallel. The referral reads `?ref=` before resumePayment tidies the address.
await Promise.all([restoreSession(), recordReferral()]);
renderBasketCount();
renderAccount();
renderCart();
renderCheckout();
try {
  await Promise.all([loadStore(), loadOrders(), renderAffiliate()]);
  await resumePayment();
} finally {
  reveal();
}
