/**
 * A store's own page, built only on the public and buyer routes of store-api. Served on the
 * store's domain (http://demo.localhost:3000 on the local stack); it calls the API on another
 * origin, which CORS allows for the store's own domain (extensions section 8).
 *
 * Read top to bottom: the API helpers, the catalog, the cart and its live quote, login,
 * checkout, my orders, and "verify my account" (the handoff to the store owner's backend).
 */

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)!.content;
const API_URL = meta('store-api-url');
const OWNER_BACKEND_URL = meta('owner-backend-url');
/** The page lives on the store's domain, so its host is what `x-store-domain` names. */
const STORE_DOMAIN = location.hostname;
/** sessionStorage, not localStorage: the buyer token dies with the tab and is never in the page's code. */
const TOKEN_KEY = 'buyer_token';

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
    throw new ApiError(0, [{ message: `Could not reach ${new URL(url).origin} (server down, or the call was refused by CORS)` }]);
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

/** The envelope `{errors: [...]}` of every route; the handoff route answers `{error: CODE}`. */
function problemsOf(response: Response, body: unknown): Problem[] {
  const answer = body as { errors?: Problem[]; error?: string; request_id?: string } | undefined;
  const retry = response.headers.get('retry-after');
  const suffix = [answer?.request_id && `request ${answer.request_id}`, retry && `retry in ${retry} s`].filter(Boolean).join(', ');
  const problems = answer?.errors?.length ? answer.errors : [{ message: answer?.error ?? `HTTP ${response.status}`, code: answer?.error }];
  return suffix ? problems.map((problem) => ({ ...problem, message: `${problem.message} (${suffix})` })) : problems;
}

/** A /v1/webstore call. The buyer token goes only to the routes that take it. */
/**
 * One Idempotency-Key per distinct POST (path and body) until it gets a final answer. Sending the
 * same body again after a fault (a 503, a 409 while the first still runs, no answer at all) reuses
 * it, so the API runs it once: a checkout whose answer was lost is answered with the order it
 * placed, never a second one. The login routes take no key (the API ignores one there).
 */
const unansweredKeys = new Map<string, string>();
const randomKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');

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
const nodes = (children: Child[]) => children.filter((child) => child !== false && child !== null && child !== undefined).map((child) => (typeof child === 'number' ? String(child) : child));

function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = Object.assign(document.createElement(tag), props);
  element.append(...nodes(children));
  return element;
}

const section = (id: string) => document.getElementById(id)!;
const fill = (id: string, ...children: Child[]) => section(id).replaceChildren(...nodes(children));
const money = (amount: number) => `$${amount.toFixed(2)}`;

function errorBox(error: unknown): HTMLElement {
  const problems = error instanceof ApiError ? error.problems : [{ message: String(error) }];
  return h('ul', { className: 'error', role: 'alert' }, ...problems.map((problem) => h('li', {}, problem.message, problem.field && h('code', {}, ` ${problem.field}`))));
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

function packageCard(item: Package): HTMLElement {
  const inputs = item.fields.map(fieldInput);
  const quantity = h('input', { type: 'number', min: '1', value: '1', className: 'quantity', ariaLabel: 'Quantity' });
  const add = h('button', { disabled: !item.stock.available }, item.stock.available ? 'Add to cart' : 'Sold out');
  add.onclick = () => {
    const fields = Object.fromEntries(inputs.filter((input) => input.value !== '').map((input) => [input.name, input.value]));
    addToCart(item, Math.max(1, Number(quantity.value) || 1), fields);
    // The card is ready for the next add; the cart holds what was added.
    quantity.value = '1';
  };
  const stock = item.stock.quantity === null ? 'In stock' : item.stock.available ? `${item.stock.quantity} left` : 'Sold out';
  return h(
    'article',
    { className: 'package' },
    item.image ? h('img', { src: item.image, alt: item.name }) : h('div', { className: 'no-image' }),
    h('h3', {}, item.name),
    h('p', { className: 'tags' }, ...item.tags.map((tag) => Object.assign(h('span', { className: 'tag' }, tag.name), { style: `background:${tag.color}` }))),
    h('p', {}, item.description),
    h('p', { className: 'price' }, money(item.price), h('span', { className: 'stock' }, stock)),
    ...item.fields.map((field, index) => h('label', {}, field.description || field.name, inputs[index]!)),
    h('div', { className: 'row' }, quantity, add),
  );
}

function rewardText(tier: { reward_type: string; reward_value: number }): string {
  return tier.reward_type === 'PERCENTAGE' ? `${tier.reward_value}% off` : tier.reward_type === 'VALUE' ? `${money(tier.reward_value)} off` : 'free';
}

async function loadStore() {
  try {
    // Page mode lists: limit up to 1,000 covers a demo catalog in one call.
    const [store, packages, promoPage] = await Promise.all([
      webstore<{ store: { name: string } }>('GET', ''),
      webstore<{ data: Package[] }>('GET', '/package?limit=100'),
      webstore<{ data: Promo[] }>('GET', '/promo?limit=100'),
    ]);
    document.title = store.store.name;
    section('store-name').textContent = store.store.name;
    promos = promoPage.data;
    fill('promos',
      ...promos.map((promo) => h('p', { className: 'promo' }, `${promo.name}: `, promo.tiers.map((tier) => `${promo.condition_mode === 'QUANTITY' ? `${tier.min_amount}+ items` : `${money(tier.min_amount)}+`} ${rewardText(tier)}`).join(', '))),
    );
    fill('catalog', ...packages.data.map(packageCard));
  } catch (error) {
    section('store-error').hidden = false;
    section('store-error').replaceChildren(errorBox(error));
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
  items: { package_id: number; name: string; quantity: number; unit_price: number; options_price: number; subtotal: number; promo_discount: number; promo_id: number | null; coupon_discount: number; total: number }[];
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
const couponInput = h('input', { placeholder: 'Coupon', ariaLabel: 'Coupon' });
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
  void refreshQuote();
}

const cartBody = () => ({
  cart: cart.map(({ package_id, quantity, fields }) => ({ package_id, quantity, fields })),
  ...(coupon ? { coupon } : {}),
});

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
      void refreshQuote();
    };
    const promoName = promos.find((promo) => promo.id === priced?.promo_id)?.name ?? 'Promo';
    return h(
      'li',
      {},
      h('div', { className: 'row' }, h('span', {}, `${line.quantity} × ${line.name}`), priced && h('strong', {}, money(priced.total)), remove),
      Object.keys(line.fields).length > 0 && h('small', {}, Object.entries(line.fields).map(([name, value]) => `${name}: ${value}`).join(', ')),
      priced && priced.options_price > 0 && h('small', {}, `options +${money(priced.options_price)} each`),
      priced && priced.promo_discount > 0 && h('small', { className: 'discount' }, `${promoName} −${money(priced.promo_discount)}`),
      priced && priced.coupon_discount > 0 && h('small', { className: 'discount' }, `Coupon −${money(priced.coupon_discount)}`),
    );
  });
  const apply = h('button', {}, 'Apply');
  apply.onclick = () => {
    coupon = couponInput.value.trim();
    void refreshQuote();
  };
  fill('cart',
    h('h2', {}, 'Cart'),
    cart.length === 0 ? h('p', { className: 'muted' }, 'Your cart is empty.') : h('ul', { className: 'lines' }, ...lines),
    h('div', { className: 'row' }, couponInput, apply),
    couponError !== null && errorBox(couponError),
    quote && h(
      'dl',
      { className: 'totals' },
      h('dt', {}, 'Subtotal'), h('dd', {}, money(quote.subtotal)),
      quote.promo_discount > 0 && h('dt', {}, 'Promos'), quote.promo_discount > 0 && h('dd', { className: 'discount' }, `−${money(quote.promo_discount)}`),
      quote.coupon && h('dt', {}, `Coupon ${quote.coupon}`), quote.coupon && h('dd', { className: 'discount' }, `−${money(quote.coupon_discount)}`),
      h('dt', {}, 'Total'), h('dd', { className: 'total' }, money(quote.total)),
    ),
    ...(quote?.next_tiers ?? []).map((tier) => h('p', { className: 'hint' }, nextTierHint(tier))),
    quoteError !== null && errorBox(quoteError),
  );
}

// ---- Login ------------------------------------------------------------------------------------

interface Customer {
  email: string;
  name: string;
}
let customer: Customer | null = null;

function signedOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  customer = null;
  // The next buyer on this tab never sees the last one's orders, not even for a moment.
  orders = [];
  opened = null;
  renderAccount();
  renderCheckout();
  renderOrders();
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
  const email = h('input', { type: 'email', placeholder: 'you@example.com', ariaLabel: 'E-mail', name: 'email' });
  const code = h('input', { inputMode: 'numeric', placeholder: '6-digit code', ariaLabel: 'Code', name: 'code', maxLength: 6 });
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
    await Promise.all([refreshQuote(), loadOrders()]);
  });
  fill('account',
    h('h2', {}, 'Log in'),
    h('p', { className: 'muted' }, 'We e-mail you a code. On the local stack, the code is in .local/outbox.jsonl.'),
    h('div', { className: 'row' }, email, send),
    h('div', { className: 'row' }, code, verify),
    slot,
  );
}

// ---- Checkout ---------------------------------------------------------------------------------

let placed: { order_id: string; status: string; total: number } | null = null;

/** Made once: the form is re-rendered whenever the quote changes, and must keep what the buyer typed. */
const checkoutForm = {
  name: h('input', { placeholder: 'Your name', ariaLabel: 'Name', name: 'client_name' }),
  nick: h('input', { placeholder: 'In-game nick', ariaLabel: 'In-game nick', name: 'client_identifier' }),
  // A guest checks out with an e-mail; a logged-in buyer's order takes the e-mail of the token.
  email: h('input', { type: 'email', placeholder: 'E-mail', ariaLabel: 'E-mail', name: 'client_email' }),
  terms: h('input', { type: 'checkbox', name: 'terms' }),
  errors: h('div'),
};

function renderCheckout() {
  const { name, nick, email, terms, errors } = checkoutForm;
  if (customer && !name.value) name.value = customer.name;
  const buy = h('button', { disabled: quote === null }, quote ? `Place order (${money(quote.total)})` : 'Place order');
  action(buy, errors, async () => {
    // The quote_id keeps the prices the buyer saw, as long as the cart is the quoted one.
    const order = await webstore<{ order_id: string; status: string; total: number }>('POST', '/checkout', {
      auth: true,
      body: { ...cartBody(), quote_id: quote?.quote_id, client_name: name.value, client_identifier: nick.value, ...(customer ? {} : { client_email: email.value }), terms: terms.checked },
    });
    placed = order;
    // The coupon was used by this order; the next cart starts without it.
    cart = [];
    coupon = '';
    couponInput.value = '';
    await Promise.all([refreshQuote(), loadOrders()]);
  });
  fill(
    'checkout',
    h('h2', {}, 'Checkout'),
    placed && h('p', { className: 'success' }, `Order ${placed.order_id} placed (${placed.status}, ${money(placed.total)}). Unpaid orders are canceled after 30 minutes.`),
    name,
    nick,
    !customer && email,
    h('label', { className: 'check' }, terms, 'I accept the terms'),
    buy,
    errors,
  );
}

// ---- My orders --------------------------------------------------------------------------------

interface Order {
  internal_id: string;
  status: string;
  total: number;
  discount: number;
  created_at: string;
  packages: { name: string; quantity: number; total: number }[];
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

function orderDetail(order: Order): HTMLElement {
  return h(
    'div',
    { className: 'detail' },
    h('h3', {}, `Order ${order.internal_id}`),
    h('p', {}, `${order.status} · placed ${new Date(order.created_at).toLocaleString()} · total ${money(order.total)}`, order.discount > 0 && ` (you saved ${money(order.discount)})`),
    h('ul', {}, ...order.packages.map((line) => h('li', {}, `${line.quantity} × ${line.name}: ${money(line.total)}`))),
    order.deliveries?.length === 0 && h('p', { className: 'muted' }, 'Nothing delivered yet: delivery starts once the order is paid and approved.'),
    // `length &&` would render a 0 with no deliveries: the condition is a boolean.
    order.deliveries !== undefined && order.deliveries.length > 0 &&
      h(
        'table',
        {},
        h('tr', {}, h('th', {}, 'Delivery'), h('th', {}, 'Server'), h('th', {}, 'Status'), h('th', {}, 'Updated')),
        ...order.deliveries.map((delivery) =>
          h('tr', {}, h('td', {}, delivery.package_name), h('td', {}, delivery.server_name ?? 'waiting for a server'), h('td', {}, delivery.status), h('td', {}, new Date(delivery.updated_at).toLocaleString())),
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
    return h('tr', {}, h('td', {}, open), h('td', {}, new Date(order.created_at).toLocaleString()), h('td', {}, order.status), h('td', {}, money(order.total)));
  });
  fill('orders',
    h('h2', {}, 'My orders'),
    orders.length === 0 ? h('p', { className: 'muted' }, 'No orders yet.') : h('table', {}, h('tr', {}, h('th', {}, 'Order'), h('th', {}, 'Placed'), h('th', {}, 'Status'), h('th', {}, 'Total')), ...rows),
    opened && orderDetail(opened),
    ordersError !== null && errorBox(ordersError),
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
  const code = h('input', { inputMode: 'numeric', placeholder: '6-digit code', ariaLabel: 'Session code', name: 'session_code', maxLength: 6 });
  const confirm = h('button', {}, 'Confirm and verify');
  const errors = h('div');
  action(confirm, errors, async () => {
    await storeDomain('POST', '/auth/verify', { email: customer!.email, code: code.value });
    await verifyAccount(slot);
  });
  slot.replaceChildren(h('p', { className: 'muted' }, `We sent a new code to ${customer!.email} (local stack: .local/outbox.jsonl).`), h('div', { className: 'row' }, code, confirm), errors);
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

await restoreSession();
renderAccount();
renderCart();
renderCheckout();
await Promise.all([loadStore(), loadOrders()]);
