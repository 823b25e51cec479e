import { type ConversionConfig, toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import type { GenericSchema } from 'valibot';
import { takesIdempotencyKey, type RouteSpec } from '#lib/http/route.ts';
import * as affiliateSchemas from '#lib/schemas/affiliate.ts';
import * as buyerSchemas from '#lib/schemas/buyer.ts';
import * as categorySchemas from '#lib/schemas/category.ts';
import * as chatSchemas from '#lib/schemas/chat.ts';
import * as checkoutSchemas from '#lib/schemas/checkout.ts';
import * as commandSchemas from '#lib/schemas/command.ts';
import * as commonSchemas from '#lib/schemas/common.ts';
import * as deliverySchemas from '#lib/schemas/delivery.ts';
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
  for (const [name, property] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    if (!INTEGER_NAMES.test(name)) continue;
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

function errorResponses(route: RouteSpec): Record<string, unknown> {
  const schema = route.errorStyle === 'single' ? 'SingleError' : 'ErrorEnvelope';
  const errorResponse = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  });
  const responses: Record<string, unknown> = {};
  if (route.credential !== 'public' && route.credential !== 'storeHost' && route.credential !== 'buyerStore') {
    responses['401'] = errorResponse('Credential missing, unknown, expired or revoked');
  }
  if (route.credential === 'operator' || route.credential === 'apiKey') responses['403'] = errorResponse('Credential valid but not allowed here');
  const findsStoreByDomain = ['buyer', 'buyerStore', 'buyerOptional', 'session', 'storeHost'].includes(route.credential);
  if (route.params || findsStoreByDomain) responses['404'] = errorResponse(findsStoreByDomain ? 'Unknown store domain, or not found in this store' : 'Not found in this store');
  // Every route refuses a query parameter it does not take (lib/http/validate.ts checkQueryNames).
  const badRequest = [
    route.query
      ? 'Malformed query, or a query parameter it does not take or sent twice (INVALID_QUERY; `field` names it)'
      : 'Any query parameter: this endpoint takes none (INVALID_QUERY; `field` names it)',
  ];
  if (route.body) badRequest.push(route.body === 'multipart' ? 'Malformed multipart body (INVALID_MULTIPART)' : 'Body is not valid JSON or not an object');
  if (takesIdempotencyKey(route)) badRequest.push('Idempotency-Key longer than 255 characters');
  responses['400'] = errorResponse(badRequest.join('; '));
  if (route.body === 'multipart') responses['413'] = errorResponse('File larger than its limit');
  else if (route.access === 'write')
    responses['413'] = errorResponse(
      'The write would exceed what DynamoDB stores in one item (400 KB) or one transaction (4 MB) (TOO_LARGE); bodies are bounded (`x-maxBytes`) so that this should not happen',
    );
  if (route.body) responses['415'] = errorResponse('Unsupported content type');
  // A query value that is well formed but out of range (limit=101, status=DONE) is a 422 like a body's.
  if (route.body || route.query) responses['422'] = errorResponse('Input breaks a rule; `field` names it');
  if (takesIdempotencyKey(route)) {
    const answerLost = route.rerunsAfterLostAnswer ? '' : '; carried out by an earlier request whose answer was lost in a fault, not run again (IDEMPOTENCY_ANSWER_LOST)';
    responses['409'] = errorResponse(`A request with this Idempotency-Key is still running (IDEMPOTENCY_KEY_IN_USE)${answerLost}; or a uniqueness conflict`);
    responses['422'] ??= errorResponse('Idempotency-Key used with another body (IDEMPOTENCY_KEY_REUSED)');
  }
  responses['500'] = errorResponse('Unexpected fault; carries only a request id');
  if (route.access !== 'none') responses['503'] = errorResponse('The database is throttling or unreachable; retry after Retry-After');
  return responses;
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
      const example = route.example?.[part]?.[name];
      list.push({
        name,
        in: location,
        required: location === 'path' || required.has(name),
        schema: entries[name] ? queryValueSchema(entries[name], property) : property,
        ...(example !== undefined && !example.includes('{{') ? { example: /^\d+$/.test(example) ? Number(example) : example } : {}),
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

/** An example with placeholders (`{{order_internal_id}}`) is the sample event's, not the reader's. */
const concrete = (value: unknown) => value !== undefined && !JSON.stringify(value).includes('{{');

/**
 * The events under OpenAPI 3.1 `webhooks`: the body a receiver gets, `data` being the resource
 * as its route answers it (lib/flows/webhook-router.ts `dataOf`).
 */
function webhooks(): Record<string, unknown> {
  const dataOf: Record<webhookSchemas.WebhookEventType, GenericSchema> = {
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
  return Object.fromEntries(
    webhookSchemas.WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: operationIdOf(`on-${type.replace(/[._]/g, '-')}`),
          summary: `The ${type} event`,
          description: 'Signed with X-Store-Signature and the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); answer 2xx within 10 s.',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'created_at', 'store_id', 'data'],
                  properties: {
                    id: { type: 'string', example: 'evt_0f8e4c2a9b7d4e1f8a6c3b5d7e9f1a2b' },
                    type: { const: type },
                    created_at: { type: 'string', format: 'date-time' },
                    store_id: { type: 'integer' },
                    data: schemaOf(dataOf[type], 'output'),
                  },
                },
              },
            },
          },
          responses: { '204': { description: 'Received (any 2xx)' } },
        },
      },
    ]),
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
      const example = route.example?.body;
      operation.requestBody = {
        required: route.bodyOptional !== true,
        content: { 'application/json': { schema: schemaOf(route.body, 'input'), ...(concrete(example) ? { example } : {}) } },
      };
    }
    if (route.api === 'store') {
      operation.servers = [{ url: 'https://{store_domain}', description: "The store's own domain", variables: { store_domain: { default: 'demo.localhost' } } }];
    }
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'store-api', version: '1.0.0', description: 'Store administration and storefront API. Paths include the version segment /v1.' },
    servers: [{ url: '/', description: 'The API host; every path begins with /v1' }],
    paths,
    webhooks: webhooks(),
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
