import { rmSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeEntries } from '#lib/routes/index.ts';
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

const policyOf = (fn: 'router' | 'sender') => {
  const stack = synthesized.stacks.webhooks;
  const roleId = stack.getLogicalId(synthesized.stacks.webhooks[fn].role.node.defaultChild as never);
  return Object.values(resourcesOf(webhooks, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
};
const actionsOf = (fn: 'router' | 'sender') => policyOf(fn).flatMap((statement) => [statement.Action].flat()).sort();

describe('webhook stack', () => {
  it('gives the table a stream of both images', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('runs the router on the stream, filtered to the entities that can be events, failures to the dead-letter queue', () => {
    const mappings = Object.values(resourcesOf(webhooks, 'AWS::Lambda::EventSourceMapping'));
    const stream = mappings.find((mapping) => mapping.Properties.StartingPosition === 'TRIM_HORIZON')!;
    expect(stream.Properties.BisectBatchOnFunctionError).toBe(true);
    expect(JSON.stringify(stream.Properties.FilterCriteria)).toContain('WEBHOOK_REDELIVERY');
    expect(JSON.stringify(stream.Properties.DestinationConfig.OnFailure)).toContain('DeadLetters');
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

  it('grants the router and the sender only the table, stream and queue actions their code sends', () => {
    expect(actionsOf('router').filter((action) => action.startsWith('dynamodb:'))).toEqual([
      'dynamodb:BatchGetItem', 'dynamodb:DescribeStream', 'dynamodb:GetItem', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams', 'dynamodb:PutItem', 'dynamodb:Query',
    ]);
    expect(actionsOf('sender').filter((action) => action.startsWith('dynamodb:'))).toEqual(['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(actionsOf('router')).toContain('sqs:SendMessage');
    expect(actionsOf('sender')).toContain('sqs:ReceiveMessage');
    for (const fn of ['router', 'sender'] as const) expect(actionsOf(fn).some((action) => /Scan|DeleteItem|\*/.test(action)), fn).toBe(false);
  });

  it('deploys after the data stack whose table and stream it imports', () => {
    expect(synthesized.stacks.webhooks.dependencies).toEqual([synthesized.stacks.data]);
  });
});
