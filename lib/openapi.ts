import { type ConversionConfig, toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import type { GenericSchema } from 'valibot';
import type { ErrorCode } from '#lib/errors.ts';
import { takesIdempotencyKey, type RouteSpec } from '#lib/http/route.ts';
import * as affiliateSchemas from '#lib/schemas/affiliate.ts';
import * as buyerSchemas from '#lib/schemas/buyer.ts';
import * as categorySchemas from '#lib/schemas/category.ts';
import * as chatSchemas from '#lib/schemas/chat.ts';
import * as checkoutSchemas from '#lib/schemas/checkout.ts';
import * as commandSchemas from '#lib/schemas/command.ts';
import * as commonSchemas from '#lib/schemas/common.ts';
import * as deliverySchemas from '#lib/schemas/delivery.ts';
import { EXAMPLE_INTEGER, EXAMPLE_NULLS, EXAMPLE_TIMESTAMP, EXAMPLE_VALUES, EXAMPLE_VALUES_IN } from '#lib/schemas/examples.ts';
import * as discountSchemas from '#lib/schemas/discount.ts';
import * as handoffSchemas from '#lib/schemas/handoff.ts';
import * as imageSchemas from '#lib/schemas/image.ts';
import * as noteSchemas from '#lib/schemas/note.ts';
import * as orderSchemas from '#lib/schemas/order.ts';
import * as packageSchemas from '#lib/schemas/package.ts';
import * as paymentSchemas from '#lib/schemas/payment.ts';
import * as promoSchemas from '#lib/schemas/promo.ts';
import * as serverSchemas from '#lib/schemas/server.ts';
import * as storeSchemas from '#lib/schemas/store.ts';
import * as storefrontSchemas from '#lib/schemas/storefront.ts';
import * as tagSchemas from '#lib/schemas/tag.ts';
import * as variableSchemas from '#lib/schemas/variable.ts';
import * as webhookSchemas from '#lib/schemas/webhook.ts';

/**
 * The OpenAPI 3.1 document, generated from the route table and its valibot schemas, so the
 * document cannot drift from what the handlers validate.
 */
type JsonSchema = Record<string, unknown>;

const SCHEMA_MODULES = [
  affiliateSchemas,
  buyerSchemas,
  categorySchemas,
  chatSchemas,
  checkoutSchemas,
  commandSchemas,
  commonSchemas,
  deliverySchemas,
  discountSchemas,
  handoffSchemas,
  imageSchemas,
  noteSchemas,
  orderSchemas,
  packageSchemas,
  paymentSchemas,
  promoSchemas,
  serverSchemas,
  storeSchemas,
  storefrontSchemas,
  tagSchemas,
  variableSchemas,
  webhookSchemas,
];

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * The named component schemas: every object schema lib/schemas exports, under its export's name
 * (`tagResource` -> `TagResource`). Request bodies (`...Body`) are converted as input, the rest
 * as output, so a name means one shape. Query and path schemas become parameters instead.
 */
function namedSchemas(): { input: Record<string, GenericSchema>; output: Record<string, GenericSchema> } {
  const input: Record<string, GenericSchema> = {};
  const output: Record<string, GenericSchema> = {};
  for (const module of SCHEMA_MODULES) {
    for (const [name, value] of Object.entries(module)) {
      const schema = value as { kind?: string; type?: string };
      if (schema?.kind !== 'schema' || (schema.type !== 'object' && schema.type !== 'strict_object')) continue;
      if (/Query$|Params$/.test(name)) continue;
      (/Body$/.test(name) ? input : output)[pascal(name)] = value as GenericSchema;
    }
  }
  return { input, output };
}
const NAMED = namedSchemas();

const toComponentRef = ({ referenceId }: { referenceId: string }) => `#/components/schemas/${referenceId}`;
const conversion = (typeMode: 'input' | 'output'): ConversionConfig => ({
  target: 'draft-2020-12',
  typeMode,
  errorMode: 'ignore',
  definitions: NAMED[typeMode],
  overrideRef: toComponentRef,
});

/**
 * Ids, id lists and counts are integers: the resource schemas declare them `v.number()` (they
 * shape answers, never validate input), so the document says what the values are by their names.
 */
const INTEGER_NAMES = /^(id|ids|.+_id|.+_ids|total|per_page|current_page|last_page|page|limit|page_size|quantity|attempt|attempts|tries|.+_count|count|position|sort_order)$/;
function integersByName(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const item of schema) integersByName(item);
    return;
  }
  const node = schema as JsonSchema;
  const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, property] of Object.entries(properties)) {
    if (!INTEGER_NAMES.test(name)) continue;
    // `total` counts a page's items beside `per_page`; elsewhere (an order's, a line's) it is money.
    if (name === 'total' && !('per_page' in properties)) continue;
    for (const candidate of [property, property.items as JsonSchema | undefined, ...((property.anyOf as JsonSchema[] | undefined) ?? [])]) {
      if (candidate?.type === 'number') candidate.type = 'integer';
    }
  }
  for (const value of Object.values(node)) integersByName(value);
}

/** Component schemas gathered while converting (each conversion hands back the definitions it used). */
const components: Record<string, JsonSchema> = {};

function schemaOf(schema: GenericSchema, typeMode: 'input' | 'output'): JsonSchema {
  const json = toJsonSchema(schema, conversion(typeMode)) as JsonSchema;
  delete json.$schema;
  integersByName(json);
  Object.assign(components, json.$defs as Record<string, JsonSchema> | undefined);
  delete json.$defs;
  return json;
}

/**
 * An example of a value of `schema`, composed from what the document already says: a schema's own
 * `examples` (valibot `v.examples`), a `const`, a default, an enum's member; else, for a leaf, the
 * demo store's value for its property name (lib/schemas/examples.ts), a timestamp for `*_at` and
 * `format: date-time`. References are followed into the components, so a resource reads the same
 * in every answer that carries it. test/unit/openapi-examples.test.ts parses each example with the
 * route's own valibot schema.
 */
function exampleOf(schema: JsonSchema | undefined, name?: string, owners: readonly string[] = [], depth = 0): unknown {
  if (!schema || depth > 16) return undefined;
  if (typeof schema.$ref === 'string') {
    const component = schema.$ref.slice('#/components/schemas/'.length);
    return exampleOf(components[component], name, [component, ...owners], depth + 1);
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (schema.default !== undefined && schema.default !== null) return schema.default;
  const owned = owners.map((owner) => EXAMPLE_VALUES_IN[owner]?.[name ?? '']).find((value) => value !== undefined);
  const named = name === undefined ? undefined : owned !== undefined ? owned : EXAMPLE_VALUES[name];
  if (Array.isArray(schema.enum)) return schema.enum.includes(named) ? named : schema.enum[0];
  const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (options) {
    const nonNull = options.find((option) => option.type !== 'null');
    const nullable = options.some((option) => option.type === 'null');
    if (!nonNull || (nullable && (named === null || (named === undefined && name !== undefined && EXAMPLE_NULLS.has(name))))) return null;
    return exampleOf(nonNull, name, owners, depth + 1);
  }
  switch (schema.type) {
    case 'object': {
      const inside = name === undefined ? owners : [name, ...owners];
      const properties = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
      if (properties.length === 0 && typeof schema.additionalProperties === 'object')
        return { server: exampleOf(schema.additionalProperties as JsonSchema, 'value', inside, depth + 1) };
      return Object.fromEntries(properties.map(([property, value]) => [property, exampleOf(value, property, inside, depth + 1)]));
    }
    case 'array': {
      const item = exampleOf(schema.items as JsonSchema | undefined, name, name === undefined ? owners : [name, ...owners], depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'string': {
      if (schema.format === 'date-time' || name?.endsWith('_at')) return EXAMPLE_TIMESTAMP;
      if (schema.format === 'email') return EXAMPLE_VALUES.email;
      if (schema.format === 'uri') return EXAMPLE_VALUES.url;
      // A pattern (an id in a path, a timestamp in a query) takes the first candidate it accepts.
      const candidates = [named, String(EXAMPLE_INTEGER), EXAMPLE_TIMESTAMP].filter((candidate) => typeof candidate === 'string');
      if (typeof schema.pattern === 'string') return candidates.find((candidate) => new RegExp(schema.pattern as string, 'u').test(candidate)) ?? name;
      return typeof named === 'string' ? named : (name ?? 'text');
    }
    case 'null':
      return null;
    case 'integer':
      return typeof named === 'number' && Number.isInteger(named) ? named : Math.max(EXAMPLE_INTEGER, Number(schema.minimum ?? EXAMPLE_INTEGER));
    case 'number':
      return typeof named === 'number' ? named : Math.max(EXAMPLE_INTEGER, Number(schema.minimum ?? EXAMPLE_INTEGER));
    case 'boolean':
      return typeof named === 'boolean' ? named : true;
    default:
      return undefined;
  }
}

/** Every parameter, request body and answer of the document given an example where it has none (see `exampleOf`). */
interface DocumentOperation {
  parameters?: JsonSchema[];
  requestBody?: { content: Record<string, JsonSchema> };
  responses?: Record<string, { content?: Record<string, JsonSchema> }>;
}
function addExamples(paths: Record<string, Record<string, unknown>>, hooks: Record<string, unknown>): void {
  const operations = [...Object.values(paths), ...Object.values(hooks)].flatMap((item) => Object.values(item as Record<string, DocumentOperation>));
  for (const operation of operations) {
    for (const parameter of operation.parameters ?? []) parameter.example ??= exampleOf(parameter.schema as JsonSchema, parameter.name as string);
    const mediaTypes = [
      ...Object.values(operation.requestBody?.content ?? {}),
      ...Object.values(operation.responses ?? {}).flatMap((answer) => Object.values(answer.content ?? {})),
    ];
    for (const media of mediaTypes) {
      if (media.example === undefined && media.schema && Object.keys(media.schema).length > 0) media.example = exampleOf(media.schema as JsonSchema);
    }
  }
}

/** A query value's type as the client passes it: a digits-only string carried to a number is an integer. */
function queryValueSchema(valibot: GenericSchema, json: JsonSchema): JsonSchema {
  const optional = valibot as { type: string; wrapped?: GenericSchema; default?: unknown };
  const inner = (optional.type === 'optional' ? optional.wrapped : valibot) as { pipe?: { type: string; requirement?: unknown }[] };
  const pipe = inner.pipe ?? [];
  if (!pipe.some((action) => action.type === 'digits') || !pipe.some((action) => action.type === 'transform')) return json;
  const bound = (type: string) => pipe.find((action) => action.type === type)?.requirement as number | undefined;
  const maximum = bound('max_value');
  return {
    type: 'integer',
    minimum: bound('min_value') ?? 0,
    ...(maximum !== undefined && maximum < Number.MAX_SAFE_INTEGER ? { maximum } : {}),
    ...(json.default !== undefined ? { default: Number(json.default) } : {}),
  };
}

/** `x-store-domain` is a header parameter of the buyer routes (a typed client passes it per call), not a credential. */
const SECURITY: Record<RouteSpec['credential'], Record<string, string[]>[]> = {
  operator: [{ apiToken: [] }],
  apiKey: [{ apiKey: [] }],
  buyer: [{ buyerToken: [] }],
  buyerStore: [],
  buyerOptional: [{}, { buyerToken: [] }],
  session: [{ sessionCookie: [] }],
  storeHost: [],
  public: [],
};

/** What each error status answers most often, as an example (lib/errors.ts and lib/http/ write them). */
const ERROR_EXAMPLES: Record<string, { message: string; code: ErrorCode; field?: string }> = {
  '400': { message: 'Unknown query parameter', code: 'INVALID_QUERY', field: 'sort' },
  '401': { message: 'Unknown or revoked credential', code: 'UNAUTHENTICATED' },
  '403': { message: 'This API key lacks the scope customers:identify', code: 'INSUFFICIENT_SCOPE' },
  '404': { message: 'Resource not found', code: 'NOT_FOUND' },
  '409': { message: 'A request with this Idempotency-Key is still running', code: 'IDEMPOTENCY_KEY_IN_USE' },
  '413': { message: 'The write exceeds what one DynamoDB item holds', code: 'TOO_LARGE' },
  '415': { message: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' },
  '422': { message: 'name must be at most 50 characters', code: 'VALIDATION_FAILED', field: 'name' },
  '500': { message: 'Internal error', code: 'INTERNAL_ERROR' },
  '503': { message: 'The database is busy; retry after Retry-After', code: 'UNAVAILABLE' },
};
const EXAMPLE_REQUEST_ID = '3f1c2b7a-9d4e-4f1a-8b6c-2e5d7a9f1c3b';

function errorResponses(route: RouteSpec): Record<string, unknown> {
  const schema = route.errorStyle === 'single' ? 'SingleError' : 'ErrorEnvelope';
  const exampleFor = (status: string) => {
    const { message, code, field } = ERROR_EXAMPLES[status]!;
    if (route.errorStyle === 'single') return { error: status === '401' ? 'HANDOFF_INVALID' : code };
    if (status === '500') return { errors: [{ message }], request_id: EXAMPLE_REQUEST_ID };
    return { errors: [{ message, code, ...(field ? { field } : {}) }] };
  };
  /** Each error status's description, made into its response (schema and example) at the end. */
  const responses: Record<string, string> = {};
  if (route.credential !== 'public' && route.credential !== 'storeHost' && route.credential !== 'buyerStore') {
    responses['401'] = 'Credential missing, unknown, expired or revoked';
  }
  if (route.credential === 'operator' || route.credential === 'apiKey') responses['403'] = 'Credential valid but not allowed here';
  const findsStoreByDomain = ['buyer', 'buyerStore', 'buyerOptional', 'session', 'storeHost'].includes(route.credential);
  if (route.params || findsStoreByDomain) responses['404'] = findsStoreByDomain ? 'Unknown store domain, or not found in this store' : 'Not found in this store';
  // Every route refuses a query parameter it does not take (lib/http/validate.ts checkQueryNames).
  const badRequest = [
    route.query
      ? 'Malformed query, or a query parameter it does not take or sent twice (INVALID_QUERY; `field` names it)'
      : 'Any query parameter: this endpoint takes none (INVALID_QUERY; `field` names it)',
  ];
  if (route.body) badRequest.push(route.body === 'multipart' ? 'Malformed multipart body (INVALID_MULTIPART)' : 'Body is not valid JSON or not an object');
  if (takesIdempotencyKey(route)) badRequest.push('Idempotency-Key longer than 255 characters');
  responses['400'] = badRequest.join('; ');
  if (route.body === 'multipart') responses['413'] = 'File larger than its limit';
  else if (route.access === 'write')
    responses['413'] =
      'The write would exceed what DynamoDB stores in one item (400 KB) or one transaction (4 MB) (TOO_LARGE); bodies are bounded (`x-maxBytes`) so that this should not happen';
  if (route.body) responses['415'] = 'Unsupported content type';
  // A query value that is well formed but out of range (limit=101, status=DONE) is a 422 like a body's.
  if (route.body || route.query) responses['422'] = 'Input breaks a rule; `field` names it';
  if (takesIdempotencyKey(route)) {
    const answerLost = route.rerunsAfterLostAnswer ? '' : '; carried out by an earlier request whose answer was lost in a fault, not run again (IDEMPOTENCY_ANSWER_LOST)';
    responses['409'] = `A request with this Idempotency-Key is still running (IDEMPOTENCY_KEY_IN_USE)${answerLost}; or a uniqueness conflict`;
    responses['422'] ??= 'Idempotency-Key used with another body (IDEMPOTENCY_KEY_REUSED)';
  }
  responses['500'] = 'Unexpected fault; carries only a request id';
  if (route.access !== 'none') responses['503'] = 'The database is throttling or unreachable; retry after Retry-After';
  return Object.fromEntries(
    Object.entries(responses).map(([status, description]) => [
      status,
      { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, example: exampleFor(status) } } },
    ]),
  );
}

function parameters(route: RouteSpec): unknown[] {
  const list: unknown[] = [];
  for (const [part, location] of [
    ['params', 'path'],
    ['query', 'query'],
  ] as const) {
    const schema = route[part];
    if (!schema) continue;
    const json = schemaOf(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    const entries = (schema as unknown as { entries?: Record<string, GenericSchema> }).entries ?? {};
    for (const [name, property] of Object.entries(properties)) {
      const example = withPlaceholdersFilled(route.example?.[part]?.[name]);
      list.push({
        name,
        in: location,
        required: location === 'path' || required.has(name),
        schema: entries[name] ? queryValueSchema(entries[name], property) : property,
        ...(example !== undefined ? { example: /^\d+$/.test(example) ? Number(example) : example } : {}),
      });
    }
  }
  if (['buyer', 'buyerStore', 'buyerOptional'].includes(route.credential)) {
    list.push({
      name: 'x-store-domain',
      in: 'header',
      required: true,
      schema: { type: 'string' },
      example: 'demo.localhost',
      description: "The store's domain: it names the store the call is about",
    });
  }
  if (takesIdempotencyKey(route)) {
    list.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      description:
        'Scoped to the caller (the store, the buyer, or a guest and its client_email) and the routed path. The first answer (< 500) is kept 24 hours and replayed to a repeat with the same body (header Idempotent-Replayed: true); another body: 422 IDEMPOTENCY_KEY_REUSED; while the first runs: 409. Send one on every POST, and the same key and body again after a 5xx, a 409 or no answer: a request whose effect landed is never run twice',
    });
  }
  return list;
}

/** A function name as a method name: `package-image-put` -> `packageImagePut`. */
export const operationIdOf = (name: string) => name.replace(/-([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());

/**
 * The sample events' placeholders (`{{login_code}}`, filled from the running stack by
 * infra/local/invoke-event.ts) as a reader sees them: values of the same forms. A value that is
 * one placeholder takes the value's type, as there.
 */
const PLACEHOLDER_EXAMPLES: Record<string, string | number> = {
  login_code: '482913',
  handoff: EXAMPLE_VALUES.handoff as string,
  image_upload_key: EXAMPLE_VALUES.key as string,
  lease_id: EXAMPLE_VALUES.lease_id as string,
  leased_command_id: EXAMPLE_INTEGER,
  order_internal_id: EXAMPLE_VALUES.internal_id as string,
  store_domain: EXAMPLE_VALUES.domain as string,
  payment_order_id: EXAMPLE_INTEGER,
  payment_id: EXAMPLE_VALUES.payment_id as string,
  test_notify_key: EXAMPLE_VALUES.notify_key as string,
  test_charge_ref: `tst_${EXAMPLE_VALUES.payment_id}`,
};
/** The example with its placeholders filled; undefined when one has no value here (then `exampleOf` composes one). */
function withPlaceholdersFilled<T>(example: T): T | undefined {
  if (example === undefined) return example;
  let unknown = false;
  const placeholderValue = (name: string) => {
    if (!(name in PLACEHOLDER_EXAMPLES)) unknown = true;
    return PLACEHOLDER_EXAMPLES[name] ?? '';
  };
  const text = JSON.stringify(example)
    .replace(/"\{\{(\w+)\}\}"/g, (_whole, name: string) => JSON.stringify(placeholderValue(name)))
    .replace(/\{\{(\w+)\}\}/g, (_whole, name: string) => String(placeholderValue(name)));
  return unknown ? undefined : (JSON.parse(text) as T);
}

/** Each event's `data`: the resource as its route answers it (lib/flows/webhook-router.ts `dataOf`). */
export const EVENT_DATA: Record<webhookSchemas.WebhookEventType, GenericSchema> = {
  'order.created': orderSchemas.orderResource,
  'order.approved': orderSchemas.orderResource,
  'order.canceled': orderSchemas.orderResource,
  'order.refunded': orderSchemas.orderResource,
  'order.chargeback': orderSchemas.orderResource,
  'order.delivered': orderSchemas.orderResource,
  'command.failed': commandSchemas.commandResource,
  'command.dead': commandSchemas.commandResource,
  'affiliate.withdrawal_requested': v.object({ ...affiliateSchemas.affiliateTransaction.entries, affiliate_id: v.number() }),
  'chat.message_created': v.object({ ...chatSchemas.chatMessageResource.entries, order_id: v.number() }),
  'payment.created': paymentSchemas.paymentResource,
  'payment.failed': paymentSchemas.paymentResource,
  'payment.expired': paymentSchemas.paymentResource,
  'payment.attention': paymentSchemas.paymentResource,
};

/**
 * The events under OpenAPI 3.1 `webhooks`: the body a receiver gets. Its example reads its `data`
 * by the event's type, so a resource named inline (a chat message with its order_id) still takes
 * the values its own resource would (lib/schemas/examples.ts `EXAMPLE_VALUES_IN`).
 */
function webhooks(): Record<string, unknown> {
  const eventBody = (type: webhookSchemas.WebhookEventType): JsonSchema => ({
    type: 'object',
    required: ['id', 'type', 'created_at', 'store_id', 'data'],
    properties: {
      id: { type: 'string', examples: [EXAMPLE_VALUES.event_id] },
      type: { const: type },
      created_at: { type: 'string', format: 'date-time' },
      store_id: { type: 'integer' },
      data: schemaOf(EVENT_DATA[type], 'output'),
    },
  });
  return Object.fromEntries(
    webhookSchemas.WEBHOOK_EVENT_TYPES.map((type) => {
      const schema = eventBody(type);
      const operation = {
        operationId: operationIdOf(`on-${type.replace(/[._]/g, '-')}`),
        summary: `The ${type} event`,
        description: 'Signed with X-Store-Signature and the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); answer 2xx within 10 s.',
        requestBody: { required: true, content: { 'application/json': { schema, example: exampleOf(schema, undefined, [type]) } } },
        responses: { '204': { description: 'Received (any 2xx)' } },
      };
      return [type, { post: operation }];
    }),
  );
}

export function buildOpenApiDocument(routes: Record<string, RouteSpec>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(routes)) {
    // A preflight is the browser's side of CORS, not an operation a client calls.
    if (route.method === 'OPTIONS') continue;
    const operation: Record<string, unknown> = {
      operationId: operationIdOf(name),
      summary: route.summary,
      tags: [route.tag],
      security: SECURITY[route.credential],
      parameters: parameters(route),
      responses: {
        [String(route.status ?? 200)]:
          route.status === 204
            ? { description: 'Done' }
            : { description: 'Success', content: { 'application/json': { schema: route.response ? schemaOf(route.response, 'output') : {} } } },
        ...errorResponses(route),
      },
    };
    if (route.body === 'multipart') {
      operation.requestBody = {
        required: true,
        content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } } },
      };
    } else if (route.body) {
      const example = withPlaceholdersFilled(route.example?.body);
      operation.requestBody = {
        required: route.bodyOptional !== true,
        content: { 'application/json': { schema: schemaOf(route.body, 'input'), ...(example !== undefined ? { example } : {}) } },
      };
    }
    if (route.api === 'store') {
      operation.servers = [{ url: 'https://{store_domain}', description: "The store's own domain", variables: { store_domain: { default: 'demo.localhost' } } }];
    }
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  const hooks = webhooks();
  addExamples(paths, hooks);
  return {
    openapi: '3.1.0',
    info: { title: 'store-api', version: '1.0.0', description: 'Store administration and storefront API. Paths include the version segment /v1.' },
    servers: [{ url: '/', description: 'The API host; every path begins with /v1' }],
    paths,
    webhooks: hooks,
    components: {
      securitySchemes: {
        apiToken: { type: 'http', scheme: 'bearer', description: 'Operator API token (`npm run admin -- token create`)' },
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key with a scope such as customers:identify' },
        buyerToken: { type: 'http', scheme: 'bearer', description: 'Buyer access token from POST /v1/webstore/auth/verify' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'store_session', description: "Session cookie on the store's own domain" },
      },
      schemas: {
        ...Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
        SingleError: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string', description: 'An error code such as CUSTOMER_UNAUTHENTICATED or RATE_LIMITED' } },
        },
        ErrorEnvelope: {
          type: 'object',
          required: ['errors'],
          properties: {
            errors: {
              type: 'array',
              items: {
                type: 'object',
                required: ['message'],
                properties: { message: { type: 'string' }, code: { type: 'string' }, field: { type: 'string' } },
              },
            },
            request_id: { type: 'string' },
          },
        },
      },
    },
  };
}
