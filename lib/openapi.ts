import { toJsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { takesIdempotencyKey, type RouteSpec } from '#lib/http/route.ts';

/**
 * The OpenAPI 3.1 document, generated from the route table and its valibot schemas, so the
 * document cannot drift from what the handlers validate.
 */
type JsonSchema = Record<string, unknown>;

function schemaOf(schema: GenericSchema, typeMode: 'input' | 'output'): JsonSchema {
  const json = toJsonSchema(schema, { target: 'draft-2020-12', typeMode, errorMode: 'ignore' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const SECURITY: Record<RouteSpec['credential'], Record<string, string[]>[]> = {
  operator: [{ apiToken: [] }],
  apiKey: [{ apiKey: [] }],
  buyer: [{ buyerToken: [], storeDomain: [] }],
  buyerStore: [{ storeDomain: [] }],
  buyerOptional: [{ storeDomain: [] }, { buyerToken: [], storeDomain: [] }],
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
    route.query ? 'Malformed query, or a query parameter it does not take or sent twice (INVALID_QUERY; `field` names it)' : 'Any query parameter: this endpoint takes none (INVALID_QUERY; `field` names it)',
  ];
  if (route.body) badRequest.push(route.body === 'multipart' ? 'Malformed multipart body (INVALID_MULTIPART)' : 'Body is not valid JSON or not an object');
  if (takesIdempotencyKey(route)) badRequest.push('Idempotency-Key longer than 255 characters');
  responses['400'] = errorResponse(badRequest.join('; '));
  if (route.body === 'multipart') responses['413'] = errorResponse('File larger than its limit');
  else if (route.access === 'write') responses['413'] = errorResponse('The write would exceed what DynamoDB stores in one item (400 KB) or one transaction (4 MB) (TOO_LARGE); bodies are bounded (`x-maxBytes`) so that this should not happen');
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
  for (const [part, location] of [['params', 'path'], ['query', 'query']] as const) {
    const schema = route[part];
    if (!schema) continue;
    const json = schemaOf(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries(properties)) {
      list.push({ name, in: location, required: location === 'path' || required.has(name), schema: property });
    }
  }
  if (takesIdempotencyKey(route)) {
    list.push({
      name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Scoped to the caller (the store, the buyer, or a guest and its client_email) and the routed path. The first answer (< 500) is kept 24 hours and replayed to a repeat with the same body (header Idempotent-Replayed: true); another body: 422 IDEMPOTENCY_KEY_REUSED; while the first runs: 409. Send one on every POST, and the same key and body again after a 5xx, a 409 or no answer: a request whose effect landed is never run twice',
    });
  }
  return list;
}

export function buildOpenApiDocument(routes: Record<string, RouteSpec>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(routes)) {
    // A preflight is the browser's side of CORS, not an operation a client calls.
    if (route.method === 'OPTIONS') continue;
    const operation: Record<string, unknown> = {
      operationId: name,
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
      operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
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
    components: {
      securitySchemes: {
        apiToken: { type: 'http', scheme: 'bearer', description: 'Operator API token (`npm run admin -- token create`)' },
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key with a scope such as customers:identify' },
        buyerToken: { type: 'http', scheme: 'bearer', description: 'Buyer access token from POST /v1/webstore/auth/verify' },
        storeDomain: { type: 'apiKey', in: 'header', name: 'x-store-domain', description: "The store's domain" },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'store_session', description: "Session cookie on the store's own domain" },
      },
      schemas: {
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
