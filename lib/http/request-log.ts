import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { wallClockMs } from '#lib/clock.ts';
import { config } from '#lib/config.ts';
import { countingDynamoDbCalls } from '#lib/db/call-count.ts';
import type { RouteSpec } from '#lib/http/route.ts';

/**
 * One JSON line per request, which is also its metrics: CloudWatch reads the line's `_aws` block
 * (embedded metric format, EMF) and publishes `requests` and `latency_ms` from it, so a request
 * costs one write to stdout and no call. Only what identifies the request and its outcome goes
 * in: never a header, a body or a query string (they may carry tokens, codes or handoffs).
 *
 * Written straight to stdout: Lambda wraps what goes through `console` in its own JSON record
 * (loggingFormat JSON), where CloudWatch would no longer find `_aws` at the top level.
 */
export interface RequestOutcome {
  requestId: string;
  /** The route key, `GET /v1/app/tag`. */
  route: string;
  /** Known once the credential has named the store; absent for public routes and refused credentials. */
  storeId?: number;
  status: number;
  latencyMs: number;
  dynamodbCalls: number;
}

/** Where the metrics go: the stage's namespace and the function's group (its area stack), which the alarms watch. */
export interface MetricsTarget {
  namespace: string;
  functionGroup: string;
}

export const statusClassOf = (status: number) => `${Math.floor(status / 100)}xx`;

export function requestLogLine(outcome: RequestOutcome, metrics: MetricsTarget, timestamp: number): string {
  return JSON.stringify({
    level: 'INFO',
    message: 'request',
    request_id: outcome.requestId,
    route: outcome.route,
    ...(outcome.storeId !== undefined && { store_id: outcome.storeId }),
    status: outcome.status,
    status_class: statusClassOf(outcome.status),
    function_group: metrics.functionGroup,
    latency_ms: outcome.latencyMs,
    dynamodb_calls: outcome.dynamodbCalls,
    requests: 1,
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        // Counts by route (what the dashboards break down) and by group (what the 5xx-rate alarm divides).
        {
          Namespace: metrics.namespace,
          Dimensions: [['route', 'status_class'], ['function_group', 'status_class'], ['function_group']],
          Metrics: [{ Name: 'requests', Unit: 'Count' }],
        },
        // Latency by group only: a per-route latency series would cost a custom metric each, and the
        // log line already holds every request's latency for a per-route query.
        { Namespace: metrics.namespace, Dimensions: [['function_group']], Metrics: [{ Name: 'latency_ms', Unit: 'Milliseconds' }] },
      ],
    },
  });
}

type HttpHandler<E extends APIGatewayProxyEventV2> = (event: E, context: Context) => Promise<APIGatewayProxyResultV2>;

/**
 * Wraps a route's handler so that each request writes its line. Only where the stack sets
 * METRICS_NAMESPACE (every function on AWS): the local stack prints its own access line, and
 * tests stay quiet.
 */
export function withRequestLog<E extends APIGatewayProxyEventV2>(route: RouteSpec, handler: HttpHandler<E>): HttpHandler<E> {
  const namespace = config.metricsNamespace;
  if (!namespace) return handler;
  const metrics = { namespace, functionGroup: config.functionGroup };
  const routeKey = `${route.method} ${route.path}`;
  return (event, context) =>
    countingDynamoDbCalls(async (count) => {
      const started = performance.now();
      // A throw past the error envelope reaches API Gateway as a 500: logged as one.
      let status = 500;
      try {
        const response = await handler(event, context);
        status = typeof response === 'object' ? (response.statusCode ?? 200) : 200;
        return response;
      } finally {
        const outcome: RequestOutcome = {
          requestId: event.requestContext?.requestId ?? context.awsRequestId,
          route: routeKey,
          storeId: (event as { auth?: { storeId?: number } }).auth?.storeId,
          status,
          latencyMs: Math.round(performance.now() - started),
          dynamodbCalls: count.calls,
        };
        process.stdout.write(`${requestLogLine(outcome, metrics, wallClockMs())}\n`);
      }
    });
}
