import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { notesCredentialUse, ROUTE_TIMEOUT_SECONDS, takesIdempotencyKey, writesCountPartitions, type RouteSpec } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';
import { BASE_HEADERS, JSON_CONTENT_TYPE } from '#lib/http/reply.ts';
import type { ErrorCode } from '#lib/errors.ts';
import { injectDynamoDbFaults, parseFaults, withDynamoDbFaults } from '#infra/local/dynamodb-faults.ts';
import { enforceRouteAccess, routeAccess } from '#infra/local/route-access.ts';
import { staticPage } from '#infra/local/pages.ts';
import { watchSourceTrees } from '#infra/local/source-watch.ts';

/**
 * The local stand-in for the two HTTP APIs: it matches a request against the same route
 * table the CDK stack deploys, builds the API Gateway payload 2.0 event, and runs the
 * function's handler in this process. Requests to 127.0.0.1/localhost go to the /v1 API; any
 * other Host is a store's own domain (`demo.localhost:3000`).
 */
const API_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** HTTP API refuses bodies over 10 MB. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  name: string;
  spec: RouteSpec;
  pattern: RegExp;
  params: string[];
}

function compile(name: string, spec: RouteSpec): CompiledRoute {
  const params: string[] = [];
  const source = spec.path
    .split('/')
    .map((segment) => {
      const variable = /^\{(.+?)(\+?)\}$/.exec(segment);
      if (!variable) return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      params.push(variable[1]!);
      // `{proxy+}` is API Gateway's greedy variable: the rest of the path, slashes included.
      return variable[2] ? '(.+)' : '([^/]+)';
    })
    .join('/');
  return { name, spec, pattern: new RegExp(`^${source}$`), params };
}

const compiled = routeEntries().map(([name, spec]) => compile(name, spec));

export function matchRoute(api: 'api' | 'store', method: string, path: string) {
  const candidates = compiled
    .filter((route) => route.spec.api === api && route.spec.method === method)
    .map((route) => ({ route, match: route.pattern.exec(path) }))
    .filter((entry) => entry.match !== null)
    // The most specific route wins, as on API Gateway: fewer path variables first.
    .sort((a, b) => a.route.params.length - b.route.params.length);
  const first = candidates[0];
  if (!first?.match) return undefined;
  const pathParameters = Object.fromEntries(first.route.params.map((name, index) => [name, decodePathSegment(first.match![index + 1]!)]));
  return { route: first.route, pathParameters };
}

/** A malformed escape (`/tag/%E0`) is handed on as sent: decodeURIComponent would throw and end the whole process. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Bodies HTTP APIs hand to Lambda as text; every other body, including one without a
 * Content-Type and `application/x-www-form-urlencoded`, arrives base64-encoded.
 */
const TEXT_CONTENT = /^(text\/[^;]*|application\/(json|xml|javascript))\s*(;|$)/i;

export function buildEvent(
  request: { method: string; url: URL; headers: Record<string, string>; body: Buffer; sourceIp: string },
  spec: RouteSpec,
  pathParameters: Record<string, string>,
): APIGatewayProxyEventV2 {
  const query: Record<string, string> = {};
  for (const [name, value] of request.url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const isText = TEXT_CONTENT.test(request.headers['content-type'] ?? '');
  const now = Date.now();
  const { cookie, ...headers } = request.headers;
  return {
    version: '2.0',
    routeKey: `${spec.method} ${spec.path}`,
    rawPath: request.url.pathname,
    rawQueryString: request.url.search.replace(/^\?/, ''),
    ...(cookie
      ? {
          cookies: cookie
            .split(';')
            .map((c) => c.trim())
            .filter(Boolean),
        }
      : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: spec.api,
      domainName: (request.headers.host ?? '').replace(/:\d+$/, ''),
      domainPrefix: (request.headers.host ?? '').split('.')[0] ?? '',
      http: { method: request.method, path: request.url.pathname, protocol: 'HTTP/1.1', sourceIp: request.sourceIp, userAgent: request.headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: `${spec.method} ${spec.path}`,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    ...(request.body.length > 0 ? { body: isText ? request.body.toString('utf8') : request.body.toString('base64') } : {}),
    isBase64Encoded: request.body.length > 0 && !isText,
  };
}

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Reload without a restart. ESM keeps a module for good once imported, so a changed source is
 * imported again under a new URL: every change under functions/ or lib/ starts a new generation,
 * and the next request imports its handler as `functions/<name>.ts?generation=N`. The loader hook
 * (reload-hooks.mjs) hands the same query on to every functions/ and lib/ module that file
 * imports, so the whole graph below the handler is fresh; node_modules stay loaded once.
 * Generation 0 is the plain URL, the very modules the rest of the process (and the tests) import.
 */
const SOURCE_DIRS = ['functions', 'lib'];
let generation = 0;

const sourceUrl = (path: string) => {
  const url = pathToFileURL(join(process.cwd(), path));
  if (generation > 0) url.search = `generation=${generation}`;
  return url.href;
};

interface Runtime {
  handler: LambdaHandler;
  /** lib/clock.ts of the handler's generation: x-local-now must pin the clock the handler reads. */
  atTime: typeof import('#lib/clock.ts').atTime;
  /** lib/db/call-count.ts of the handler's generation: the count its DynamoDB client adds to. */
  countingDynamoDbCalls: typeof import('#lib/db/call-count.ts').countingDynamoDbCalls;
}
const runtimes = new Map<string, Promise<Runtime>>();

async function importRuntime(name: string): Promise<Runtime> {
  const [functionModule, clock, client, callCount] = await Promise.all([
    import(sourceUrl(`functions/${name}.ts`)),
    import(sourceUrl('lib/clock.ts')) as Promise<typeof import('#lib/clock.ts')>,
    import(sourceUrl('lib/db/client.ts')) as Promise<typeof import('#lib/db/client.ts')>,
    import(sourceUrl('lib/db/call-count.ts')) as Promise<typeof import('#lib/db/call-count.ts')>,
  ]);
  // The handler's generation has its own DynamoDB client: police its calls too, and let a test fault them.
  enforceRouteAccess(client.db);
  injectDynamoDbFaults(client.db);
  return { handler: functionModule.handler as LambdaHandler, atTime: clock.atTime, countingDynamoDbCalls: callCount.countingDynamoDbCalls };
}

/** Imports `functions/<name>.ts` on first use, as a cold start would. */
function loadRuntime(name: string): Promise<Runtime> {
  const key = `${name}@${generation}`;
  let loaded = runtimes.get(key);
  if (!loaded) {
    loaded = importRuntime(name);
    // A file saved half-way fails to import: the next request tries again instead of keeping the failure.
    loaded.catch(() => runtimes.delete(key));
    runtimes.set(key, loaded);
  }
  return loaded;
}

export const loadHandler = async (name: string) => (await loadRuntime(name)).handler;

/** npm start: watch the sources and move to a new generation on every change. Returns the stop function. */
export function watchSourcesForReload(): () => void {
  const roots = SOURCE_DIRS.map((dir) => pathToFileURL(join(process.cwd(), dir, '/')).href);
  register('./reload-hooks.mjs', { parentURL: import.meta.url, data: { roots } });
  // Directory by directory: a file replaced by a rename (sed -i, git checkout) is still seen (infra/local/source-watch.ts).
  return watchSourceTrees(
    SOURCE_DIRS.map((dir) => join(process.cwd(), dir)),
    () => {
      generation += 1;
      // Earlier generations are never asked for again: let them go.
      runtimes.clear();
    },
  );
}

/**
 * The context Lambda gives a handler. Its remaining time counts down from the route's budget on
 * AWS (`ROUTE_TIMEOUT_SECONDS`, from when the context is made), so the per-request deadline
 * (lib/http/handler.ts) fires locally as it would there: past it, a 503 with Retry-After.
 */
export function lambdaContext(name: string, requestId: string, budgetMs = ROUTE_TIMEOUT_SECONDS * 1000): Context {
  const endsAt = Date.now() + budgetMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, endsAt - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function send(response: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined;
  // Said explicitly, so that a HEAD (whose body node drops) tells the length its GET has.
  if (body) headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

const envelope = (status: number, message: string, code: ErrorCode): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'content-type': JSON_CONTENT_TYPE, ...BASE_HEADERS },
  body: JSON.stringify({ errors: [{ message, code }] }),
});

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * `x-local-now: <ISO timestamp>` runs the request at that time (lib/clock.ts), so tests of
 * timestamps and time windows need not sleep. Only this local server reads it; on AWS the header
 * means nothing.
 */
function pinnedTimeOf(headers: Record<string, string>): number | undefined {
  const value = headers['x-local-now'];
  const epochMs = value === undefined ? Number.NaN : Date.parse(value);
  return Number.isFinite(epochMs) ? epochMs : undefined;
}

interface LocalServerOptions {
  log?: boolean;
  /**
   * The demo webhook's receiver: `POST /local/webhook-inbox` on the API host appends each delivery
   * (event headers and body) to this file as one JSON line and answers 204, as the mail outbox
   * keeps e-mails. Absent: no inbox (404).
   */
  webhookInbox?: string;
}

export function createLocalServer(options: LocalServerOptions = {}): Server {
  const server = createServer((request, response) => {
    // A body cut off mid-way, a client gone before the answer: that request ends, never the server.
    answer(request, response, options).catch(() => response.destroy());
  });
  // Node closes an idle kept-alive connection after 5 s. A client whose event loop was held longer
  // (a test waiting on a CLI it spawned synchronously, a loaded machine) then sends its next request
  // on a socket already closed under it, and a POST or PATCH fails with "fetch failed" (not retried,
  // not idempotent). Two minutes leaves such a client its socket.
  server.keepAliveTimeout = 120_000;
  // Malformed HTTP (a bad request line, an oversized header): answer 400 when the socket still
  // takes it, as API Gateway would, and drop the connection.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

/** The demo store's webhook delivers here (infra/local/seed.ts). */
export const WEBHOOK_INBOX_PATH = '/local/webhook-inbox';
const INBOX_HEADERS = ['x-store-event', 'x-store-event-id', 'x-store-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

function receiveWebhook(file: string, headers: Record<string, string>, body: Buffer): APIGatewayProxyStructuredResultV2 {
  const received = Object.fromEntries(INBOX_HEADERS.filter((name) => headers[name] !== undefined).map((name) => [name, headers[name]]));
  appendFileSync(file, `${JSON.stringify({ received_at: new Date().toISOString(), headers: received, body: body.toString('utf8') })}\n`);
  return { statusCode: 204, headers: { ...BASE_HEADERS } };
}

async function answer(request: IncomingMessage, response: ServerResponse, options: LocalServerOptions): Promise<void> {
  const started = Date.now();
  const url = new URL(request.url ?? '/', 'http://local');
  const host = (request.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  const api = API_HOSTS.has(host) ? 'api' : 'store';
  // As in payload 2.0: lower-case names, repeated headers joined with commas. (node's `headers`
  // would keep only the first of two Authorization headers, which AWS joins into one that fails.)
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (values) headers[name] = values.join(name === 'cookie' ? '; ' : ',');
  }
  let result: APIGatewayProxyStructuredResultV2;
  const matched = matchRoute(api, request.method ?? 'GET', url.pathname);
  const body = await readBody(request);
  // The storefront example and /docs: static files outside the route table (infra/local/pages.ts).
  const staticResult = matched ? undefined : await staticPage(api, request.method ?? 'GET', url.pathname, request.headers.host ?? '');
  const inbox = api === 'api' && request.method === 'POST' && url.pathname === WEBHOOK_INBOX_PATH ? options.webhookInbox : undefined;
  if (staticResult) {
    result = staticResult;
  } else if (inbox && body) {
    result = receiveWebhook(inbox, headers, body);
  } else if (!matched) {
    result = envelope(404, 'No such route', 'ROUTE_NOT_FOUND');
  } else if (body === undefined) {
    result = envelope(413, 'Request body larger than 10 MB', 'PAYLOAD_TOO_LARGE');
  } else {
    const event = buildEvent(
      { method: request.method ?? 'GET', url, headers, body, sourceIp: request.socket.remoteAddress ?? '127.0.0.1' },
      matched.route.spec,
      matched.pathParameters,
    );
    try {
      const { handler, atTime, countingDynamoDbCalls } = await loadRuntime(matched.route.name);
      const grant = {
        access: matched.route.spec.access,
        idempotencyWrites: takesIdempotencyKey(matched.route.spec),
        listCountWrites: writesCountPartitions(matched.route.spec),
        credentialUseWrites: notesCredentialUse(matched.route.spec),
      };
      // x-local-dynamodb-fault: DynamoDB faults for this request (infra/local/dynamodb-faults.ts).
      const faults = parseFaults(headers['x-local-dynamodb-fault']);
      const invoke = () => routeAccess.run(grant, () => withDynamoDbFaults(faults, () => handler(event, lambdaContext(matched.route.name, event.requestContext.requestId))));
      const pinnedTime = pinnedTimeOf(headers);
      result = await countingDynamoDbCalls(async (count) => {
        const answered = await (pinnedTime === undefined ? invoke() : atTime(pinnedTime, invoke));
        return { ...answered, headers: { ...answered.headers, 'x-local-dynamodb-calls': String(count.calls) } };
      });
    } catch (error) {
      // The handler's own error middleware answers every error; reaching here is a crash of the runtime itself.
      console.error(JSON.stringify({ level: 'error', message: 'handler crashed', route: matched.route.name, error: String(error) }));
      result = envelope(502, 'Internal server error', 'BAD_GATEWAY');
    }
  }
  send(response, result);
  // Path only: query strings and bodies are never logged (they may carry codes or handoffs), nor a notify key.
  if (options.log) console.log(`${request.method} ${host}${loggedPath(url.pathname)} ${result.statusCode} ${Date.now() - started}ms`);
}

/** A path as the access line shows it: a payment notify URL's key is a credential (it names the store's account), so it is hidden. */
export const loggedPath = (pathname: string) => pathname.replace(/^(\/v1\/payment\/notify\/[^/]+\/)[^/]+/, '$1***');
