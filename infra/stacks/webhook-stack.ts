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
import type { DataExports } from '#infra/stacks/data-stack.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';

export interface WebhookStackProps extends StageStackProps {
  functionsDir: string;
  data: DataExports;
}

/** The entities whose changes can be events (lib/domain/webhook.ts `eventsOf`) or ask for a redelivery: the router is invoked for nothing else. */
const ROUTED_ENTITIES = ['ORDER', 'COMMAND', 'affiliate_transaction', 'CHAT_MESSAGE', 'WEBHOOK_REDELIVERY'];
/** The receiver's 10 s, the table calls around it, and room to spare. */
const SENDER_TIMEOUT = Duration.seconds(30);

/**
 * Webhook delivery on AWS's own parts: the table's stream -> the router Lambda (filtered to the
 * entities that matter) -> an SQS queue -> the sender Lambda, which re-queues its own retries
 * (SQS delays at most 15 minutes; longer waits hop, lib/queue/sqs.ts). A stream batch that keeps
 * failing and a message that keeps failing both end in one dead-letter queue, whose first
 * message raises an alarm on an SNS topic (subscribe the on-call address to it).
 */
export class StoreWebhookStack extends Stack {
  readonly queue: sqs.Queue;
  readonly deadLetters: sqs.Queue;
  readonly router: EndpointFunction;
  readonly sender: EndpointFunction;
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: WebhookStackProps) {
    super(scope, id, props);
    const { data } = props;
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    this.queue = new sqs.Queue(this, 'Deliveries', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's advice: six times the consumer's timeout, so a message is not handed out again while it is being sent.
      visibilityTimeout: Duration.seconds(SENDER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 5 },
    });

    const background = (name: string, description: string, timeout?: Duration) =>
      new EndpointFunction(this, name === 'webhook-router' ? 'Router' : 'Sender', {
        codeDir: bundleDirOf(props.functionsDir, name),
        description,
        logRemovalPolicy: removalPolicyOf(props.stage),
        timeout,
        environment: { TABLE_NAME: data.tableName, WEBHOOK_QUEUE_URL: this.queue.queueUrl },
      });
    this.router = background('webhook-router', 'Webhook router: table stream -> events and delivery tasks');
    this.sender = background('webhook-sender', 'Webhook sender: one signed POST per queue message', SENDER_TIMEOUT);

    // Table actions as lib/db/webhook.ts and its neighbours send them; no index, no Scan.
    const tableActions = (role: iam.IRole, actions: string[]) =>
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: actions.map((action) => `dynamodb:${action}`), resources: [data.tableArn] }));
    tableActions(this.router.role, ['GetItem', 'BatchGetItem', 'Query', 'PutItem']);
    tableActions(this.sender.role, ['BatchGetItem', 'PutItem', 'UpdateItem']);
    this.queue.grantSendMessages(this.router.role);
    this.queue.grantSendMessages(this.sender.role);

    this.router.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'], resources: [data.tableStreamArn] }),
    );
    this.router.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    Validations.of(this.router).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'dynamodb:ListStreams has no resource-level permission; the stream itself is read only through its own ARN.',
    });
    new lambda.EventSourceMapping(this, 'TableStream', {
      target: this.router.function,
      eventSourceArn: data.tableStreamArn,
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(0),
      // A failing batch is halved until the bad record stands alone; the router's writes are idempotent, so retries repeat nothing.
      bisectBatchOnError: true,
      retryAttempts: 10,
      onFailure: new SqsDlq(this.deadLetters),
      filters: [lambda.FilterCriteria.filter({ dynamodb: { NewImage: { entity: { S: lambda.FilterRule.or(...ROUTED_ENTITIES) } } } })],
    });
    this.sender.function.addEventSource(new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true }));

    this.alarmTopic = new sns.Topic(this, 'Alarms', { displayName: `${this.stackName} alarms`, enforceSSL: true });
    Validations.of(this.alarmTopic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason: 'Carries only alarm state changes (no data); CloudWatch cannot publish to a topic under the AWS managed key, and a customer key for alarms alone is not worth its cost.',
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
}
