import { wallClockMs } from '#lib/clock.ts';
import middy, { type MiddlewareObj } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { parse, type GenericSchema, type InferOutput } from 'valibot';
import { isSizeRefusal, isTransactionThrottled } from '#lib/db/errors.ts';
import { withRequestEffects } from '#lib/db/request-effects.ts';
import { authenticate, type AuthFor, credentialUseNoted } from '#lib/http/auth.ts';
import { cors } from '#lib/http/cors.ts';
import { idempotency } from '#lib/http/idempotency.ts';
import { HttpError, tooLarge, unavailable } from '#lib/errors.ts';
import { multipartFileBody } from '#lib/http/multipart.ts';
import { BASE_HEADERS, jsonResponse, Reply } from '#lib/http/reply.ts';
import type { RouteSpec } from '#lib/http/route.ts';
import { checkQueryNames, parsePart } from '#lib/http/validate.ts';
import { withRequestLog } from '#lib/http/request-log.ts';
import type { MultipartFileBody } from '#lib/schemas/common.ts';

type Out<S> = S extends GenericSchema ? InferOutput<S> : undefined;
type BodyOf<B> = B extends 'multipart' ? MultipartFileBody : Out<B>;

export interface HandlerRequest<R extends RouteSpec> {
  params: Out<R['params']>;
  query: Out<R['query']>;
  body: BodyOf<R['body']>;
  auth: AuthFor<R['credential']>;
  event: APIGatewayProxyEventV2;
  requestId: string;
}

/** What the middlewares leave on the event for the handler. */
interface PreparedEvent extends APIGatewayProxyEventV2 {
  auth?: unknown;
  input?: { params: unknown; query: unknown; body: unknown };
}

type Request = middy.Request<PreparedEvent, APIGatewayProxyResultV2, Error, Context>;

const requestIdOf = (request: Request) => request.event.requestContext?.requestId ?? request.context.awsRequestId ?? 'unknown';

/** Errors from the AWS SDK that mean a dependency is down or throttling: 503, try again. */
function isDependencyUnavailable(error: Error & { $metadata?: { httpStatusCode?: number }; code?: string }): boolean {
  // A request of ours that DynamoDB refuses is a bug to fix, not an outage to retry, whatever status
  // carries it (DynamoDB Local answers some, e.g. a Limit past 32 bits, with HTTP 500): a 500 with the request id.
  if (error.name === 'ValidationException') return false;
  const transient = [
    'ProvisionedThroughputExceededException',
    'ThrottlingException',
    'RequestLimitExceeded',
    'ServiceUnavailable',
    'TimeoutError',
    'InternalServerError',
    // The request's time ran out (lib/db/request-effects.ts `boundRequestTime`).
    'RequestDeadlineExceeded',
  ];
  return (
    transient.includes(error.name) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'].includes(error.code ?? '') ||
    (error.$metadata?.httpStatusCode ?? 0) >= 500 ||
    // A throttled transaction is cancelled with a 400, not thrown as a throttling error.
    isTransactionThrottled(error)
  );
}

export function toHttpError(error: Error): HttpError | undefined {
  if (error instanceof HttpError) return error;
  const middyError = error as Error & { statusCode?: number; cause?: { package?: string } };
  if (middyError.cause?.package === '@middy/http-json-body-parser') {
    return middyError.message === 'Unsupported Media Type'
      ? new HttpError(415, { message: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' })
      : new HttpError(400, { message: 'Request body is not valid JSON', code: 'INVALID_JSON' });
  }
  if (isSizeRefusal(error)) return tooLarge();
  return isDependencyUnavailable(error) ? unavailable() : undefined;
}

/**
 * The one error middleware, first in the chain so that its onError runs last. Known errors
 * become the envelope; anything else is logged as structured JSON with the request id and
 * answered 500 with that id only.
 */
function errorEnvelope(route: RouteSpec): MiddlewareObj<PreparedEvent, APIGatewayProxyResultV2> {
  return {
    onError: async (request) => {
      const error = request.error ?? new Error('unknown');
      const requestId = requestIdOf(request as Request);
      const known = toHttpError(error);
      // A size refusal is answered 413, and logged too: the schemas' byte bounds should have made it a 422.
      const sizeRefusal = !(error instanceof HttpError) && known?.code === 'TOO_LARGE';
      if (!known || known.status >= 500 || sizeRefusal) {
        console.error(
          JSON.stringify({
            level: sizeRefusal ? 'warn' : 'error',
            request_id: requestId,
            route: `${route.method} ${route.path}`,
            error: { name: error.name, message: error.message, stack: error.stack },
          }),
        );
      }
      const status = known?.status ?? 500;
      const details = known?.details ?? [{ message: 'Internal server error', code: 'INTERNAL_ERROR' }];
      const headers = { 'x-request-id': requestId, ...known?.headers };
      const body =
        route.errorStyle === 'single'
          ? { error: known?.code ?? 'INTERNAL_ERROR', ...(status >= 500 ? { request_id: requestId } : {}) }
          : { errors: details, ...(status >= 500 ? { request_id: requestId } : {}) };
      request.response = jsonResponse(status, body, headers);
    },
  };
}

/** The credential, before everything else; its "last used" write (lib/http/auth.ts `noteUse`), if any, waited for at the end. */
function credentialCheck(route: RouteSpec): MiddlewareObj<PreparedEvent, APIGatewayProxyResultV2> {
  return {
    before: async (request) => {
      request.event.auth = await authenticate(route, request.event);
    },
    after: (request) => credentialUseNoted(request.event),
    onError: (request) => credentialUseNoted(request.event),
  };
}

function inputValidation(route: RouteSpec): MiddlewareObj<PreparedEvent, APIGatewayProxyResultV2> {
  return {
    before: async (request) => {
      const { event } = request;
      // A browser's preflight carries the query of the request it precedes: that request's route judges it.
      if (route.method !== 'OPTIONS') checkQueryNames(route.query, event);
      event.input = {
        params: route.params ? parsePart('params', route.params, event.pathParameters ?? {}) : undefined,
        query: route.query ? parsePart('query', route.query, event.queryStringParameters ?? {}) : undefined,
        body: route.body && route.body !== 'multipart' ? parsePart('body', route.body, event.body) : undefined,
      };
    },
  };
}

/** A route whose body may be left out: no body (or an empty one) reads as `{}`, any other is parsed as JSON as usual. */
function optionalJsonBody(): MiddlewareObj<PreparedEvent, APIGatewayProxyResultV2> {
  const parser = httpJsonBodyParser();
  return {
    before: async (request) => {
      const { body } = request.event;
      if (body === undefined || body === null || body === '') {
        (request.event as { body: unknown }).body = {};
        return;
      }
      // biome-ignore lint/suspicious/noExplicitAny: middy's parser is typed for its own event shape
      await parser.before?.(request as any);
    },
  };
}

/** The one `file` part of a multipart body becomes the handler's `body` (415, 400, 422 otherwise). */
function multipartFile(): MiddlewareObj<PreparedEvent, APIGatewayProxyResultV2> {
  return {
    before: async (request) => {
      // inputValidation, earlier in the stack, has set the input and left the body to this middleware.
      request.event.input!.body = multipartFileBody(request.event);
    },
  };
}

/**
 * The handler stack every function uses: errors -> credential -> [idempotency key] -> JSON body ->
 * validation, or for a multipart route errors -> credential -> [idempotency key] -> validation ->
 * file. The credential comes first so that an unauthenticated caller learns nothing about the input rules; a multipart body is
 * read after the path, so that an upload to a path naming no resource is a 404 whatever it sends.
 * The function returns a value (200 JSON) or a Reply.
 */
export function defineHandler<const R extends RouteSpec>(route: R, fn: (request: HandlerRequest<R>) => Promise<unknown>) {
  const stack = middy<PreparedEvent, APIGatewayProxyResultV2>();
  // Before the error envelope, so that its after and onError hooks run last, on the final response.
  const corsHeaders = cors(route);
  if (corsHeaders) stack.use(corsHeaders);
  // Outside the error envelope (it keeps the final answer), inside CORS (a replay gets the caller's own headers).
  const idempotencyKey = idempotency(route);
  if (idempotencyKey) stack.use(idempotencyKey.record);
  stack.use(errorEnvelope(route)).use(credentialCheck(route));
  // After the credential (keys are scoped to its store), before the body is read (a kept 400/422 is replayed too).
  if (idempotencyKey) stack.use(idempotencyKey.claim);
  if (route.body && route.body !== 'multipart') stack.use(route.bodyOptional ? optionalJsonBody() : httpJsonBodyParser());
  stack.use(inputValidation(route));
  if (route.body === 'multipart') stack.use(multipartFile());
  const handler = stack.handler(async (event, context) => {
    const input = event.input ?? { params: undefined, query: undefined, body: undefined };
    const result = await fn({
      params: input.params,
      query: input.query,
      body: input.body,
      auth: event.auth,
      event,
      requestId: event.requestContext?.requestId ?? context.awsRequestId,
    } as HandlerRequest<R>);
    if (result instanceof Reply) {
      if (result.status === 204) {
        return { statusCode: 204, headers: { ...BASE_HEADERS, ...result.headers }, ...(result.cookies.length > 0 ? { cookies: result.cookies } : {}), body: '' };
      }
      if (result.raw) return { statusCode: result.status, headers: { ...BASE_HEADERS, ...result.headers }, body: String(result.body) };
      return jsonResponse(result.status, result.body, result.headers, result.cookies);
    }
    // The response schema fixes the field order and drops anything internal; a mismatch is a bug (500).
    return jsonResponse(route.status ?? 200, route.response ? parse(route.response, result) : result);
  });
  // Each request records what it holds and writes (lib/db/request-effects.ts: read by the key's
  // middleware), and its DynamoDB time ends before the function's, so that it still answers.
  return withRequestLog(route, (event, context) => withRequestEffects(() => handler(event, context), answerDeadline(context)));
}

/** Time kept at the end of the function's to send the answer once DynamoDB gave up. */
const ANSWER_MARGIN_MS = 300;

/** When the request must have its answer ready (epoch ms): the function's remaining time less the margin; none when the runtime gives no time. */
function answerDeadline(context: Context | undefined): number | undefined {
  if (typeof context?.getRemainingTimeInMillis !== 'function') return undefined;
  // Real time, as the DynamoDB client measures it (lib/clock.ts may be set to another time in tests).
  return wallClockMs() + context.getRemainingTimeInMillis() - ANSWER_MARGIN_MS;
}
