import { CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { bundleDirOf, EndpointFunction } from '#infra/constructs/endpoint-function.ts';
import { ROUTE_TIMEOUT_SECONDS } from '#lib/http/route.ts';
import type { DataExports } from '#infra/stacks/data-stack.ts';
import { toPascalCase } from '#infra/stacks/area-stack.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';
import { tableAccessStatement } from '#infra/stacks/table-grant.ts';
import { consumers, isStreamSource, queues, type ConsumerSpec, type QueueName, type TableStreamSource } from '#lib/routes/consumers.ts';

/** EndpointFunction's timeout unless said, in seconds. */
const DEFAULT_TIMEOUT_SECONDS = ROUTE_TIMEOUT_SECONDS;

/** Lambda filter criteria passing a stream record only when its new image's `entity` is listed (infra/local/webhooks.ts applies the same test). */
export const streamEntityFilter = (entities: readonly string[]) => lambda.FilterCriteria.filter({ dynamodb: { NewImage: { entity: { S: lambda.FilterRule.or(...entities) } } } });

export interface WebhookStackProps extends StageStackProps {
  functionsDir: string;
  data: DataExports;
  /** The consumer table (lib/routes/consumers.ts), keyed by function name. */
  consumers?: Readonly<Record<string, ConsumerSpec>>;
}

/**
 * Construct ids: those the router and sender had before the consumer table, which a new id would
 * replace on the next deploy (the function, and the stream mapping with a replay of the stream
 * from its start); `<Name>` and `<Name>TableStream` for any other consumer.
 */
const LEGACY_IDS: Readonly<Record<string, { function: string; stream?: string }>> = {
  'webhook-router': { function: 'Router', stream: 'TableStream' },
  'webhook-sender': { function: 'Sender' },
};
const idsOf = (name: string) => ({ function: toPascalCase(name), stream: `${toPascalCase(name)}TableStream`, ...LEGACY_IDS[name] });

/**
 * The consumers of lib/routes/consumers.ts on AWS's own parts: today webhook delivery, the table's
 * stream -> the router Lambda (filtered to the entities its entry lists) -> an SQS queue -> the
 * sender Lambda, which re-queues its own retries (SQS delays at most 15 minutes; longer waits hop,
 * lib/queue/sqs.ts). Each consumer's grants (its table access, its stream or queue, the queues it
 * sends to) and its event source come from its entry. A stream batch that keeps failing and a
 * message that keeps failing both end in one dead-letter queue, whose first message raises an
 * alarm on an SNS topic (subscribe the on-call address to it).
 */
export class StoreWebhookStack extends Stack {
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly deadLetters: sqs.Queue;
  readonly functions = new Map<string, EndpointFunction>();
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: WebhookStackProps) {
    super(scope, id, props);
    const { data } = props;
    const consumerTable: [string, ConsumerSpec][] = Object.entries(props.consumers ?? consumers);
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    const timeoutOf = (spec: ConsumerSpec) => Duration.seconds(spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS);
    const queueOf = (name: QueueName, constructId: string) => {
      const readers = consumerTable.filter(([, spec]) => !isStreamSource(spec.source) && spec.source.queue === name);
      const longest = Math.max(DEFAULT_TIMEOUT_SECONDS, ...readers.map(([, spec]) => timeoutOf(spec).toSeconds()));
      return new sqs.Queue(this, constructId, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // SQS's advice: six times the consumer's timeout, so a message is not handed out again while it is being processed.
        visibilityTimeout: Duration.seconds(longest * 6),
        deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 5 },
      });
    };
    this.queues = { 'webhook-deliveries': queueOf('webhook-deliveries', 'Deliveries') };

    for (const [name, spec] of consumerTable) {
      const consumer = new EndpointFunction(this, idsOf(name).function, {
        codeDir: bundleDirOf(props.functionsDir, name),
        description: spec.summary.slice(0, 256),
        logRemovalPolicy: removalPolicyOf(props.stage),
        timeout: spec.timeoutSeconds === undefined ? undefined : timeoutOf(spec),
        environment: {
          TABLE_NAME: data.tableName,
          ...Object.fromEntries(spec.sendsTo.map((queue) => [queues[queue].urlVariable, this.queues[queue].queueUrl])),
        },
      });
      const tableAccess = tableAccessStatement(spec.access, data.tableArn);
      if (tableAccess) consumer.role.addToPrincipalPolicy(tableAccess);
      for (const queue of spec.sendsTo) this.queues[queue].grantSendMessages(consumer.role);
      if (isStreamSource(spec.source)) this.readTableStream(idsOf(name).stream, consumer, spec.source, data);
      else consumer.function.addEventSource(new SqsEventSource(this.queues[spec.source.queue], { batchSize: 10, reportBatchItemFailures: true }));
      this.functions.set(name, consumer);
    }

    this.alarmTopic = new sns.Topic(this, 'Alarms', { displayName: `${this.stackName} alarms`, enforceSSL: true });
    Validations.of(this.alarmTopic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Carries only alarm state changes (no data); CloudWatch cannot publish to a topic under the AWS managed key, and a customer key for alarms alone is not worth its cost.',
    });
    const alarm = new cloudwatch.Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: 'Webhook deliveries or stream batches failed for good: read the dead-letter queue',
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));

    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'Subscribe to be told when webhook deliveries fail for good' });
  }

  /** Lambda's event source mapping on the table's stream, with the entry's entity filter, and the stream read grants it needs. */
  private readTableStream(mappingId: string, consumer: EndpointFunction, source: TableStreamSource, data: DataExports): void {
    consumer.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], resources: [data.tableStreamArn] }),
    );
    consumer.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    Validations.of(consumer).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'dynamodb:ListStreams has no resource-level permission; the stream itself is read only through its own ARN.',
    });
    new lambda.EventSourceMapping(this, mappingId, {
      target: consumer.function,
      eventSourceArn: data.tableStreamArn,
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(0),
      // A failing batch is halved until the bad record stands alone; the consumer's writes are idempotent, so retries repeat nothing.
      bisectBatchOnError: true,
      retryAttempts: 10,
      onFailure: new SqsDlq(this.deadLetters),
      filters: [streamEntityFilter(source.entities)],
    });
  }
}
