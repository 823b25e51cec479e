import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, operationIdOf } from '#lib/openapi.ts';
import { dereferenced } from '../support/openapi.ts';
import type { CredentialKind, RouteSpec } from '#lib/http/route.ts';
import { routeEntries, routes } from '#lib/routes/index.ts';
import { buyerLogin, sessionLogin, uniqueEmail } from '../support/buyer.ts';
import { call, newStore, type ApiResponse } from '../support/client.ts';

/**
 * Property-based fuzz of every route of the route table, driven by the OpenAPI document the
 * project serves (lib/openapi.ts): each case sends a request with the credential the route takes
 * (operator token, API key of the right scope, buyer token, session cookie, store domain), a path
 * whose ids are sometimes the fuzzing store's own resources (so the handler gets past the 404),
 * a query and a body generated from the operation's schemas (valid-ish) or hostile (wrong types,
 * huge strings, 4-byte and control characters, lone surrogates, unknown fields, deep nesting, bad
 * JSON, wrong content types). Every answer must be below 500, every 4xx in the error envelope,
 * and no answer may carry a stack trace or internal detail.
 *
 * FUZZ_RUNS cases per route (default 50), FUZZ_SEED to replay a run (printed at the start; a
 * failure also prints fast-check's own seed and path for that route).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 50);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
console.log(`fuzz: ${RUNS} cases per route, FUZZ_SEED=${SEED}`);

type JsonSchema = Record<string, any>;
const document = dereferenced(buildOpenApiDocument(routes as Record<string, RouteSpec>));
const operationOf = (route: RouteSpec) => (document.paths as Record<string, Record<string, any>>)[route.path]?.[route.method.toLowerCase()];

/** Stack frames, file paths, exception classes and AWS error names: what no answer may show. */
const INTERNAL_DETAIL = [
  /\bat [^\s()]+ \([^)]*:\d+:\d+\)/,
  /\bat (file:|node:|\/)\S*:\d+/,
  /\/work\/|node_modules|\.ts:\d+|\.js:\d+/,
  /\b(TypeError|ReferenceError|RangeError|SyntaxError|AggregateError)\b/,
  /\b\w+Exception\b/,
  /\b(ValidationError|ConditionalCheckFailed|TransactionConflict|ProvisionedThroughputExceeded|ThrottlingError)\b/,
  /\$metadata|httpStatusCode|CancellationReasons/,
];

// ---------------------------------------------------------------- values from JSON Schema

/** Strings that break things: 4-byte characters, control characters, lone surrogates, huge, quotes, markup. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('😀'.repeat(3000), '€'.repeat(70_000), '\u0000\u0001\u001f', '\uD800', '\uDFFF x', '"\\\'<script>', '%00%2F..%2F', '{client_name}{a}{b}', ' ', ''),
  fc.integer({ min: 1, max: 300_000 }).map((length) => 'x'.repeat(length)),
);

/** What a URL carries: the same, short enough for a request line (API Gateway and node refuse longer ones themselves). */
const hostileShortString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('😀'.repeat(200), '€'.repeat(300), '\u0000\u0001\u001f', '\uD800', '"\\\'<script>', '%00%2F..%2F', '{client_name}', ' ', ''),
  fc.integer({ min: 1, max: 2000 }).map((length) => 'x'.repeat(length)),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1e308, -1e-308, 2 ** 53 + 1, 1.5, -0, [], {}, [null], { '': null }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
);

function fromSchema(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return hostileValue;
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((option) => fromSchema(option, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.pattern) {
        try {
          return fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length <= (schema.maxLength ?? 10_000));
        } catch {
          return hostileString;
        }
      }
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'uri') return fc.webUrl();
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
      return fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '_', ' ', '€', '😀', 'é'), minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 60, 300) });
    }
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -10, -1e6), max: Math.min(schema.maximum ?? 1e6, 1e9) });
    case 'number':
      return fc.double({ min: Math.max(schema.minimum ?? -1e6, -1e9), max: Math.min(schema.maximum ?? 1e6, 1e9), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(schema.items, depth + 1), { maxLength: Math.min(schema.maxItems ?? 5, 6) });
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      if (Object.keys(properties).length === 0) {
        return fc.dictionary(fc.string({ maxLength: 10 }), fromSchema(schema.additionalProperties, depth + 1), { maxKeys: 4 });
      }
      const entries = Object.entries(properties).map(
        ([name, property]) => [name, required.has(name) ? fromSchema(property, depth + 1) : fc.option(fromSchema(property, depth + 1), { nil: undefined })] as const,
      );
      return fc.record(Object.fromEntries(entries));
    }
    default:
      return hostileValue;
  }
}

/** A valid-ish body mutated: a field given a hostile value, a field dropped, an unknown field added. */
function mutated(body: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(body, fc.nat(), hostileValue, fc.constantFrom('drop', 'replace', 'unknown')).map(([value, pick, hostile, how]) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return hostile;
    const copy = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const key = keys[pick % Math.max(keys.length, 1)];
    if (how === 'unknown' || key === undefined) copy[`unknown_${pick % 100}`] = hostile;
    else if (how === 'drop') delete copy[key];
    else copy[key] = hostile;
    return copy;
  });
}

const deeplyNested = fc.integer({ min: 10, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`);
const deepObject = fc.integer({ min: 10, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
const badJson = fc.oneof(
  fc.constantFrom('', '{', '{"a":}', 'null', '[]', '"text"', '1', 'true', '{"a":1}{"b":2}', '\u0000', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'),
  fc.string({ unit: 'binary', maxLength: 50 }),
  deeplyNested,
  deepObject,
);
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json-patch+json',
  'APPLICATION/JSON',
  '',
];

/** The raw body and Content-Type of one case. */
function bodyArbitrary(route: RouteSpec, operation: any): fc.Arbitrary<{ raw?: string; contentType?: string }> {
  const schema = operation?.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined;
  const valid = fromSchema(schema ?? { type: 'object' });
  const json = (value: fc.Arbitrary<unknown>) => value.map((v) => ({ raw: JSON.stringify(v) ?? 'null', contentType: 'application/json' }));
  const options = [
    { weight: route.body ? 4 : 1, arbitrary: json(valid) },
    { weight: 3, arbitrary: json(mutated(valid)) },
    { weight: 1, arbitrary: json(hostileValue) },
    { weight: 1, arbitrary: badJson.map((raw) => ({ raw, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.oneof(
            json(valid),
            badJson.map((raw) => ({ raw })),
          ),
          fc.constantFrom(...CONTENT_TYPES),
        )
        .map(([body, contentType]) => ({ raw: body.raw, contentType })),
    },
    { weight: route.body ? 0 : 2, arbitrary: fc.constant({}) },
  ];
  if (route.body === 'multipart') {
    options.push({
      weight: 3,
      arbitrary: fc
        .tuple(fc.string({ maxLength: 20 }), fc.constantFrom('a.png', 'a.svg', 'x', '../../etc/passwd', 'a.PNG'), fc.constantFrom('\x89PNG\r\n\x1a\n', '<svg></svg>', ''))
        .map(([content, filename, magic]) => ({
          raw: `--b\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n${magic}${content}\r\n--b--\r\n`,
          contentType: 'multipart/form-data; boundary=b',
        })),
    });
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------- the fuzzing store

/** Real ids of the fuzzing store, by path parameter name. */
type Ids = Record<string, string[]>;
interface Credentials {
  domain: string;
  token: string;
  identifyKey: string;
  deliveryKey: string;
  buyerToken: string;
  sessionCookie: string;
  logoutCookie: string;
}

let ids: Ids = {};
let credentials: Credentials;
/** PATCH /app/store may move the fuzzing store to another domain: it fuzzes a store of its own. */
let storeUpdateToken: string;

const idOf = (res: ApiResponse, what: string) => {
  if (res.status !== 200) throw new Error(`fixture ${what}: ${res.status} ${res.text}`);
  return String(res.body.id);
};

async function fuzzingStore() {
  const store = await newStore('Fuzz store');
  const buyerEmail = uniqueEmail('fuzz');
  const buyer = await buyerLogin(store.domain, buyerEmail);
  const session = await sessionLogin(store.domain, buyerEmail);
  const logoutSession = await sessionLogin(store.domain);
  const tag = idOf(await store.post('/v1/app/tag', { name: 'Sale', color: '#ef4444' }), 'tag');
  const category = idOf(await store.post('/v1/app/category', { name: 'Ranks' }), 'category');
  const server = idOf(await store.post('/v1/app/server', { name: 'Survival' }), 'server');
  const deliveryKey = (await store.post(`/v1/app/server/${server}/key`)).body.key as string;
  const packageId = idOf(
    await store.post('/v1/app/package', {
      name: 'VIP',
      price: 10,
      category_id: Number(category),
      tags: [Number(tag)],
      commands: [{ command: 'give {client_identifier} vip' }, { command: 'say {nick}', servers: [Number(server)] }],
    }),
    'package',
  );
  const promo = idOf(
    await store.post('/v1/app/promo', {
      name: 'Promo',
      type: 'PROGRESSIVE',
      condition_mode: 'QUANTITY',
      starts_at: '2020-01-01T00:00:00Z',
      targets: [{ type: 'STORE' }],
      tiers: [{ min_amount: 2, reward_type: 'PERCENTAGE', reward_value: 10 }],
    }),
    'promo',
  );
  const discount = await store.post('/v1/app/discount', { coupon: 'FUZZ10', type: 'PERCENTAGE', value: 10 });
  const variable = idOf(await store.post('/v1/app/variable', { name: 'nick', type: 'TEXT', description: 'Nick' }), 'variable');
  const webhook = idOf(await store.post('/v1/app/webhook', { url: 'http://127.0.0.1:9/hook', events: ['order.created'], enabled: false }), 'webhook');
  await buyer.post('/v1/webstore/affiliate/join', { ref_code: 'fuzzref' });
  const link = await buyer.post('/v1/webstore/affiliate/link', { name: 'Link', ref_code: 'fuzzlink' });
  const orders: ApiResponse[] = [];
  for (let i = 0; i < 3; i++) {
    orders.push(
      await store.post('/v1/app/order', {
        client_identifier: 'steve',
        client_email: buyerEmail,
        client_name: 'Steve',
        packages: [{ package_id: Number(packageId), quantity: 1 }],
        variables: [{ name: 'nick', value: 'Steve' }],
        ref_code: 'fuzzref',
      }),
    );
  }
  const orderIds = orders.map((order) => idOf(order, 'order'));
  await store.post(`/v1/app/order/${orderIds[0]}/approve`);
  const note = await store.post(`/v1/app/order/${orderIds[0]}/note`, { content: 'Note' });
  await store.post(`/v1/app/order/${orders[0]!.body.internal_id}/chat/messages`, { message: 'Hello' });
  const commands = await store.get('/v1/app/command');
  const affiliates = await store.get('/v1/app/affiliate');
  await buyer.patch('/v1/webstore/affiliate/me', { withdraw_settings: { full_name: 'Ana Souza', pix_key: 'ana@example.com', pix_key_type: 'EMAIL', cpf_cnpj: '123.456.789-09' } });
  const withdrawal = await buyer.post('/v1/webstore/affiliate/withdraw', { amount: 0.1 });
  const withdrawals = await store.get('/v1/app/affiliate/withdrawal');
  const deliveries = await store.get(`/v1/app/webhook/${webhook}/delivery`);
  const list = (value: unknown) =>
    [value]
      .flat()
      .filter((entry) => entry !== undefined && entry !== null)
      .map(String);
  ids = {
    tagId: [tag],
    categoryId: [category],
    packageId: [packageId],
    promoId: [promo],
    discountId: list(discount.body?.id),
    variableId: [variable],
    serverId: [server],
    webhookId: [webhook],
    orderId: orderIds,
    internalId: orders.map((order) => String(order.body.internal_id)),
    noteId: list(note.body?.id),
    commandId: list((commands.body?.data ?? commands.body ?? []).map?.((command: { id: number }) => command.id)),
    affiliateId: list((affiliates.body?.data ?? []).map((affiliate: { id: number }) => affiliate.id)),
    linkId: list(link.body?.id),
    transactionId: list([withdrawal.body?.id, ...(withdrawals.body?.data ?? []).map((entry: { id: number }) => entry.id)]),
    deliveryId: list((deliveries.body?.data ?? []).map((delivery: { id: number }) => delivery.id)),
    code: ['FUZZ10', 'fuzz10'],
    proxy: ['package', 'cart/quote', 'a/b/c'],
  };
  credentials = {
    domain: store.domain,
    token: store.token,
    identifyKey: store.identifyKey,
    deliveryKey,
    buyerToken: buyer.token,
    sessionCookie: session.cookie,
    logoutCookie: logoutSession.cookie,
  };
  storeUpdateToken = (await newStore('Fuzz store, its settings fuzzed')).token;
}

// ---------------------------------------------------------------- requests

function credentialHeaders(name: string, route: RouteSpec): { headers: Record<string, string>; host?: string } {
  const kind: CredentialKind = route.credential;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const domain = { 'x-store-domain': credentials.domain };
  switch (kind) {
    case 'operator':
      return { headers: bearer(name === 'store-update' ? storeUpdateToken : credentials.token) };
    case 'apiKey':
      return { headers: bearer(route.scope === 'delivery' ? credentials.deliveryKey : credentials.identifyKey) };
    case 'buyer':
    case 'buyerOptional':
      return { headers: { ...domain, ...bearer(credentials.buyerToken) } };
    case 'buyerStore':
      return { headers: domain };
    case 'session':
    case 'storeHost':
      return { headers: { cookie: name === 'auth-store-logout' ? credentials.logoutCookie : credentials.sessionCookie }, host: credentials.domain };
    case 'public':
      return { headers: { origin: `http://${credentials.domain}`, 'access-control-request-method': 'POST', 'x-store-domain': credentials.domain } };
  }
}

/** A path parameter: a real id of the fuzzing store, a value of its schema, or something hostile. */
function paramArbitrary(name: string, schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const real = ids[name.replace(/\+$/, '')] ?? [];
  const hostile = fc.oneof(
    hostileShortString,
    fc.constantFrom('0', '-1', '1.5', '1e3', '99999999999999999999', ...RAW_SEGMENTS, 'null', ' 1', '😀', 'x'.repeat(3000), '9'.repeat(16)),
  );
  return fc.oneof(
    { weight: real.length > 0 ? 5 : 0, arbitrary: real.length > 0 ? fc.constantFrom(...real) : fc.constant('1') },
    { weight: 3, arbitrary: fromSchema(schema ?? { type: 'string' }).map(String) },
    { weight: 2, arbitrary: hostile },
  );
}

/** Sent as written: malformed escapes, encoded slashes and extra segments. */
const RAW_SEGMENTS = new Set(['..', '%2F', '%E0%A4%A', '%00', 'cart/quote', 'a/b/c']);
/** Encoded as a client would (a lone surrogate, which cannot be encoded, sent as its replacement character). */
const encodeSegment = (value: string) => encodeURIComponent(value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));

function queryArbitrary(operation: any): fc.Arbitrary<string> {
  const parameters = ((operation?.parameters ?? []) as { name: string; in: string; schema: JsonSchema }[]).filter((parameter) => parameter.in === 'query');
  const known = parameters.map((parameter) =>
    fc.option(fc.tuple(fc.constant(parameter.name), fc.oneof({ weight: 3, arbitrary: fromSchema(parameter.schema).map(String) }, { weight: 1, arbitrary: hostileShortString })), {
      nil: undefined,
    }),
  );
  const extra = fc.option(fc.tuple(fc.constantFrom('unknown', 'page', 'limit', 'page_cursor', '__proto__', 'a[b]', ''), hostileShortString), { nil: undefined });
  return fc.tuple(fc.tuple(...known, extra), fc.constantFrom('', '&page=1&page=2', '&%ZZ=1', '&page=%E0', '&limit')).map(([pairs, tail]) => {
    const parts = (pairs as ([string, string] | undefined)[])
      .filter((pair): pair is [string, string] => pair !== undefined)
      .map(([name, value]) => `${encodeSegment(name)}=${encodeSegment(value)}`);
    const query = parts.join('&') + tail;
    return query ? `?${query.replace(/^&/, '')}` : '';
  });
}

interface Case {
  path: string;
  body: { raw?: string; contentType?: string };
  withCredential: boolean;
  idempotencyKey?: string;
}

function caseArbitrary(route: RouteSpec): fc.Arbitrary<Case> {
  const operation = operationOf(route);
  const pathParameters = ((operation?.parameters ?? []) as { name: string; in: string; schema: JsonSchema }[]).filter((parameter) => parameter.in === 'path');
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const params = fc.tuple(...names.map((param) => paramArbitrary(param, pathParameters.find((parameter) => parameter.name === param)?.schema)));
  const path = fc.tuple(params, queryArbitrary(operation)).map(([values, query]) => {
    let index = 0;
    const base = route.path.replace(/^\{store_url\}/, '').replace(/\{[^}]+\}/g, () => {
      const value = values[index++]!;
      return RAW_SEGMENTS.has(value) ? value : encodeSegment(value);
    });
    return base + query;
  });
  return fc.record({
    path,
    body: bodyArbitrary(route, operation),
    // Most cases carry the right credential; some none, so the credential checks are fuzzed too.
    withCredential: fc.nat(9).map((n) => n > 0),
    idempotencyKey: fc.option(fc.oneof(fc.stringMatching(/^[ -~]{1,40}$/), fc.constant('k'.repeat(300))), { nil: undefined }),
  });
}

async function send(name: string, route: RouteSpec, fuzz: Case): Promise<ApiResponse> {
  const { headers, host } = credentialHeaders(name, route);
  const sent: Record<string, string> = fuzz.withCredential ? { ...headers } : {};
  if (fuzz.idempotencyKey !== undefined && route.method === 'POST') sent['idempotency-key'] = fuzz.idempotencyKey;
  return call(route.method, fuzz.path, {
    raw: fuzz.body.raw,
    contentType: fuzz.body.contentType,
    headers: sent,
    host: host ?? (route.api === 'store' ? credentials.domain : undefined),
  });
}

/** The contract of every answer; a message naming what broke it. */
function brokenContract(route: RouteSpec, response: ApiResponse): string | undefined {
  if (response.status >= 500) return `answered ${response.status}`;
  const detail = INTERNAL_DETAIL.find((pattern) => pattern.test(response.text));
  if (detail) return `shows internal detail (${detail})`;
  if (response.status >= 400) {
    const body = response.body as Record<string, unknown> | undefined;
    if (route.errorStyle === 'single') {
      if (typeof body?.error !== 'string') return `${response.status} without {error: string}`;
    } else {
      const errors = body?.errors;
      const wellFormed =
        Array.isArray(errors) &&
        errors.length > 0 &&
        errors.every((error) => typeof error?.message === 'string' && ['undefined', 'string'].includes(typeof error.code) && ['undefined', 'string'].includes(typeof error.field));
      if (!wellFormed) return `${response.status} without the error envelope`;
    }
  }
  return undefined;
}

/** fast-check's report with long runs of one character cut, so that a failure stays readable. */
async function shortened(run: Promise<void>): Promise<void> {
  try {
    await run;
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? `\nGot: ${((error as Error).cause as Error).message}` : '';
    const message = `${(error as Error).message}${cause}`.replace(/(%[0-9A-F]{2}|[^%])\1{20,}/g, (whole, unit: string) => `${unit}…(${whole.length / unit.length} times)`);
    throw new Error(message.length > 4000 ? `${message.slice(0, 4000)}…` : message);
  }
}

const tally = { cases: 0, statuses: new Map<number, number>() };

describe('fuzz: every route of the route table', () => {
  beforeAll(fuzzingStore, 120_000);

  const entries = routeEntries();
  /** FUZZ_ROUTES=name,name: only these (while fixing a finding). */
  const only = process.env.FUZZ_ROUTES?.split(',');
  const fuzzed = only ? entries.filter(([name]) => only.includes(name)) : entries;
  it('covers every route of the table, each operation of the OpenAPI document among them', () => {
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((path) =>
      Object.values(path).map((operation) => operation.operationId),
    );
    expect(new Set(operations)).toEqual(new Set(entries.filter(([, route]) => route.method !== 'OPTIONS').map(([name]) => operationIdOf(name))));
  });

  describe.concurrent.each(fuzzed.map(([name, route], index) => ({ name, route, index })))('$name', ({ name, route, index }) => {
    it(`${route.method} ${route.path}: ${RUNS} cases, no 5xx, the envelope on every 4xx, no internal detail`, { timeout: 600_000 }, async () => {
      await shortened(
        fc.assert(
          fc.asyncProperty(caseArbitrary(route), async (fuzz) => {
            const response = await send(name, route as RouteSpec, fuzz);
            tally.cases += 1;
            tally.statuses.set(response.status, (tally.statuses.get(response.status) ?? 0) + 1);
            const broken = brokenContract(route as RouteSpec, response);
            if (broken) throw new Error(`${route.method} ${fuzz.path.slice(0, 300)} ${broken}: ${response.text.slice(0, 500)}`);
          }),
          { numRuns: RUNS, seed: SEED + index, endOnFailure: true },
        ),
      );
    });
  });

  it.sequential('tally', () => {
    console.log(`fuzz: ${entries.length} routes, ${tally.cases} cases, statuses ${JSON.stringify(Object.fromEntries([...tally.statuses].sort(([a], [b]) => a - b)))}`);
  });
});
