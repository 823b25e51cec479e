import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface FunctionGroupAlarmsProps {
  /** The group's name in the request metrics (FUNCTION_GROUP, lib/http/request-log.ts). */
  group: string;
  functions: lambda.IFunction[];
  /** Namespace of the request metrics (METRICS_NAMESPACE); none for a group that serves no request (the scheduled jobs): errors and throttles only. */
  metricsNamespace?: string;
  topic: sns.ITopic;
}

const PERIOD = Duration.minutes(5);
/** A 5xx is a bug or a dependency down: more than 1% of a group's requests in 5 minutes is worth a look. */
export const SERVER_ERROR_PERCENT = 1;
/** Warm requests take tens of ms and a cold start under a second at 1024 MB: a p99 over 2 s for 15 minutes is not cold starts. */
export const P99_LATENCY_MS = 2000;
const P99_LATENCY_PERIODS = 3;
/** CloudWatch's hard limit of metrics in one alarm's math expression. */
export const METRICS_PER_ALARM = 10;

/**
 * The alarms of one group of functions (an area stack, the jobs stack), all notifying the stage's
 * topic, in state ALARM and back to OK:
 * - 5xx rate and p99 latency, from the request metrics every request writes (EMF), for a group
 *   that serves requests;
 * - Lambda errors (crashes, timeouts, a failed init: nothing the handler answered) and throttles
 *   (concurrency exhausted), summed over the group's functions, at most 10 a sum: a group
 *   of 11 to 20 functions has two of each.
 */
export class FunctionGroupAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly props: FunctionGroupAlarmsProps,
  ) {
    super(scope, id);
    const { group, metricsNamespace } = props;
    if (metricsNamespace) this.requestAlarms(group, metricsNamespace);
    this.sumOverFunctions('Errors', 'function errors (crash, timeout, failed init)', (fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' }));
    this.sumOverFunctions('Throttles', 'throttled invocations (concurrency exhausted)', (fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }));
  }

  private requestAlarms(group: string, metricsNamespace: string): void {
    const requests = (dimensions: Record<string, string>) =>
      new cloudwatch.Metric({ namespace: metricsNamespace, metricName: 'requests', dimensionsMap: { function_group: group, ...dimensions }, statistic: 'Sum', period: PERIOD });
    this.alarm('ServerErrorRate', {
      alarmDescription: `More than ${SERVER_ERROR_PERCENT}% of the ${group} requests answered 5xx in 5 minutes`,
      metric: new cloudwatch.MathExpression({
        expression: '100 * FILL(serverErrors, 0) / all',
        usingMetrics: { serverErrors: requests({ status_class: '5xx' }), all: requests({}) },
        period: PERIOD,
        label: `${group} 5xx %`,
      }),
      threshold: SERVER_ERROR_PERCENT,
      evaluationPeriods: 1,
    });
    this.alarm('LatencyP99', {
      alarmDescription: `p99 latency of the ${group} requests over ${P99_LATENCY_MS} ms for ${P99_LATENCY_PERIODS * 5} minutes`,
      metric: new cloudwatch.Metric({ namespace: metricsNamespace, metricName: 'latency_ms', dimensionsMap: { function_group: group }, statistic: 'p99', period: PERIOD }),
      threshold: P99_LATENCY_MS,
      evaluationPeriods: P99_LATENCY_PERIODS,
    });
  }

  private sumOverFunctions(name: string, what: string, metricOf: (fn: lambda.IFunction) => cloudwatch.IMetric): void {
    const { functions, group } = this.props;
    for (let start = 0; start < functions.length; start += METRICS_PER_ALARM) {
      const chunk = functions.slice(start, start + METRICS_PER_ALARM);
      const usingMetrics = Object.fromEntries(chunk.map((fn, index) => [`f${index}`, metricOf(fn)]));
      const part = functions.length > METRICS_PER_ALARM ? ` (functions ${start + 1}-${start + chunk.length})` : '';
      this.alarm(`${name}${start / METRICS_PER_ALARM + 1}`, {
        alarmDescription: `Lambda ${what} in the ${group} group${part}`,
        metric: new cloudwatch.MathExpression({ expression: `SUM([${Object.keys(usingMetrics).join(',')}])`, usingMetrics, period: PERIOD, label: `${group} ${name}` }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
  }

  private alarm(id: string, props: Omit<cloudwatch.AlarmProps, 'treatMissingData'>): void {
    // No requests is no evidence of a problem.
    const alarm = new cloudwatch.Alarm(this, id, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, ...props });
    alarm.addAlarmAction(new actions.SnsAction(this.props.topic));
    alarm.addOkAction(new actions.SnsAction(this.props.topic));
    this.alarms.push(alarm);
  }
}

/** How many alarms a group of `functionCount` functions gets: 5xx rate and p99 (a group serving requests), and errors and throttles per 10 functions. */
export const alarmCountOf = (functionCount: number, servesRequests = true) => (servesRequests ? 2 : 0) + 2 * Math.ceil(functionCount / METRICS_PER_ALARM);
