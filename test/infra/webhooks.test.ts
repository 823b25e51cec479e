import { rmSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumers, webhookStreamEntities } from '#lib/routes/consumers.ts';
import { routeEntries } from '#lib/routes/index.ts';
import type { StoreWebhookStack } from '#infra/stacks/webhook-stack.ts';
import { resourcesOf, stubBundles, synthesize } from './synthesize.ts';

/** Webhook delivery on AWS: the stream, the router, the queue and its dead letters, the sender, the alarm. */
let functionsDir: string;
let webhooks: Template;
let data: Template;
let synthesized: ReturnType<typeof synthesize>;
beforeAll(() => {
  functionsDir = stubBundles(routeEntries().map(([name]) => name));
  synthesized = synthesize({ functionsDir });
  webhooks = Template.fromStack(synthesized.stacks.webhooks);
  data = Template.fromStack(synthesized.stacks.data);
});
afterAll(() => rmSync(functionsDir, { recursive: true, force: true }));

type Statement = { Action: string | string[]; Resource: unknown };
const policyOf = (stack: StoreWebhookStack, name: string) => {
  const roleId = stack.getLogicalId(stack.functions.get(name)!.role.node.defaultChild as never);
  return Object.values(resourcesOf(Template.fromStack(stack), 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
};
const actionsOf = (name: string, stack = synthesized.stacks.webhooks) => [...new Set(policyOf(stack, name).flatMap((statement) => [statement.Action].flat()))].sort();
const tableActionsOf = (name: string, stack?: StoreWebhookStack) => actionsOf(name, stack).filter((action) => action.startsWith('dynamodb:'));
const streamMappingOf = (template: Template) =>
  Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping')).find((mapping) => mapping.Properties.StartingPosition === 'TRIM_HORIZON')!;
/** The entities a stream mapping's filter lets through. */
const filteredEntities = (template: Template): string[] =>
  (streamMappingOf(template).Properties.FilterCriteria.Filters as { Pattern: string }[]).flatMap((filter) => JSON.parse(filter.Pattern).dynamodb.NewImage.entity.S);

describe('webhook stack', () => {
  it('gives the table a stream of both images', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('runs the router on the stream, filtered to the entities that can be events, failures to the dead-letter queue', () => {
    const stream = streamMappingOf(webhooks);
    expect(stream.Properties.BisectBatchOnFunctionError).toBe(true);
    expect(JSON.stringify(stream.Properties.DestinationConfig.OnFailure)).toContain('DeadLetters');
    // Derived from the webhook rules' event -> entity list (lib/routes/consumers.ts), pinned here as deployed.
    expect(filteredEntities(webhooks)).toEqual(['ORDER', 'COMMAND', 'AFFILIATE_TRANSACTION', 'CHAT_MESSAGE', 'PAYMENT', 'WEBHOOK_REDELIVERY']);
    expect(filteredEntities(webhooks)).toEqual([...webhookStreamEntities]);
  });

  it('feeds the sender from an encrypted, TLS-only queue with a dead-letter queue, reporting failures per message', () => {
    webhooks.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() } });
    const sqsMapping = Object.values(resourcesOf(webhooks, 'AWS::Lambda::EventSourceMapping')).find((mapping) => !mapping.Properties.StartingPosition)!;
    expect(sqsMapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('raises an alarm to an SNS topic on the first dead letter', () => {
    webhooks.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [Match.objectLike({ Ref: Match.stringLikeRegexp('Alarms') })],
    });
    webhooks.resourceCountIs('AWS::SNS::Topic', 1);
  });

  it("grants the router and the sender their entry's table access, their stream or queue, and the queues they send to", () => {
    const writeActions = [
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ];
    const streamActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
    // The router files new event and task items (Put if absent) and changes nothing: reads and PutItem, no update, delete or transaction.
    const routerActions = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'];
    expect(tableActionsOf('webhook-router')).toEqual([...routerActions, ...streamActions].sort());
    expect(tableActionsOf('webhook-sender')).toEqual(writeActions);
    expect(actionsOf('webhook-router')).toContain('sqs:SendMessage');
    expect(actionsOf('webhook-router')).not.toContain('sqs:ReceiveMessage');
    expect(actionsOf('webhook-sender')).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage']));
    for (const name of ['webhook-router', 'webhook-sender'])
      expect(
        actionsOf(name).some((action) => /Scan|BatchWriteItem|\*/.test(action)),
        name,
      ).toBe(false);
  });

  it('gives each consumer the URL of every queue it sends to, and the sender its longer timeout', () => {
    webhooks.hasResourceProperties('AWS::Lambda::Function', {
      Description: consumers['webhook-sender'].summary,
      Timeout: 30,
      Environment: { Variables: Match.objectLike({ WEBHOOK_QUEUE_URL: Match.anyValue() }) },
    });
    webhooks.hasResourceProperties('AWS::Lambda::Function', {
      Description: consumers['webhook-router'].summary,
      Timeout: 10,
      Environment: { Variables: Match.objectLike({ WEBHOOK_QUEUE_URL: Match.anyValue() }) },
    });
    // Six times the sender's timeout: a message is not handed out again while it is being sent.
    webhooks.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 180 });
  });

  it("derives a new consumer's grants and filter from its entry alone: a read-only stream consumer gets no write and no queue", () => {
    const probe = synthesize({ functionsDir, consumers: { 'webhook-router': { source: { stream: 'table', entities: ['TAG'] }, access: 'read', sendsTo: [], summary: 'probe' } } });
    const template = Template.fromStack(probe.stacks.webhooks);
    expect(filteredEntities(template)).toEqual(['TAG']);
    expect(tableActionsOf('webhook-router', probe.stacks.webhooks)).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DescribeStream',
      'dynamodb:GetItem',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
      'dynamodb:Query',
    ]);
    // Its one queue right is its stream's dead-letter queue, where a failing batch goes.
    const queueStatements = policyOf(probe.stacks.webhooks, 'webhook-router').filter((statement) => JSON.stringify(statement.Action).includes('sqs:'));
    expect(queueStatements.map((statement) => JSON.stringify(statement.Resource))).toEqual([expect.stringContaining('DeadLetters')]);
  });

  it('keeps the construct ids the router, the sender and the stream mapping had before the consumer table', () => {
    const ids = Object.keys(resourcesOf(webhooks));
    for (const prefix of ['RouterFunction', 'SenderFunction', 'TableStream', 'Deliveries', 'DeadLetters'])
      expect(
        ids.some((id) => id.startsWith(prefix)),
        prefix,
      ).toBe(true);
  });

  it('deploys after the data stack whose table and stream it imports', () => {
    expect(synthesized.stacks.webhooks.dependencies).toEqual([synthesized.stacks.data]);
  });
});
