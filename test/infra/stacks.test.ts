import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_NODE_TARGET } from '#infra/build.ts';
import { FUNCTION_RUNTIME } from '#infra/constructs/endpoint-function.ts';
import type { AreaStack } from '#infra/stacks/area-stack.ts';
import { IMAGE_CONTENT_SECURITY_POLICY, StoreDataStack } from '#infra/stacks/data-stack.ts';
import { tableKeys } from '#lib/db/table.ts';
import { notesCredentialUse, type RouteSpec, takesIdempotencyKey, writesCountPartitions } from '#lib/http/route.ts';
import { routeAreas, routeEntries } from '#lib/routes/index.ts';
import { jobEntries } from '#lib/routes/jobs.ts';
import { addStoreApiStacks } from '#infra/store-api.ts';
import { resourcesOf, stubBundles, synthesize, type Areas } from './synthesize.ts';

/**
 * The stacks of the route table, and of probe routes: the route table need not hold every kind
 * of route (an 'images' user, a read route on the store domain...), so a probe area exercises
 * every kind of grant.
 */
type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: Record<string, Record<string, string[]>> };

const probe = (method: RouteSpec['method'], path: string, api: RouteSpec['api'], access: RouteSpec['access'], uses?: RouteSpec['uses']): RouteSpec => ({
  method,
  path,
  api,
  access,
  uses,
  credential: 'operator',
  summary: 'probe',
  tag: 'Probe',
});
const probeAreas: Areas = {
  probe: {
    'probe-read': probe('GET', '/v1/app/probe', 'api', 'read'),
    'probe-read-post': probe('POST', '/v1/app/probe/quote', 'api', 'read'),
    'probe-write': probe('POST', '/v1/app/probe', 'api', 'write'),
    'probe-images': probe('POST', '/v1/app/probe/{probeId}/image', 'api', 'write', ['images']),
    'probe-mail': probe('POST', '/auth/probe', 'store', 'write', ['mail']),
    'probe-secret': probe('GET', '/v1/app/probe/secret', 'api', 'read', ['secret']),
    'probe-seal': probe('PUT', '/v1/app/probe/provider', 'api', 'write', ['provider-secrets-seal']),
    'probe-open': probe('POST', '/v1/app/probe/provider/call', 'api', 'write', ['provider-secrets-open']),
    'probe-store-read': probe('GET', '/probe', 'store', 'read'),
    'probe-no-table': probe('GET', '/v1/probe.json', 'api', 'none'),
  },
};

/** What lib/db sends, spelled out here so that a widened grant (Scan, BatchWriteItem) fails this test. */
const TABLE_READ_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const TABLE_ACTIONS: Record<RouteSpec['access'], string[]> = {
  none: [],
  read: TABLE_READ_ACTIONS,
  write: [...TABLE_READ_ACTIONS, 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
};

let functionsDir: string;
beforeAll(() => {
  functionsDir = stubBundles([...routeEntries().map(([name]) => name), ...Object.keys(probeAreas.probe!)]);
});
afterAll(() => rmSync(functionsDir, { recursive: true, force: true }));

type Synthesized = ReturnType<typeof synthesize>;

const logicalIdOf = (stack: Stack, construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
/** How a value imported from the data or HTTP stack appears in an area template. */
const importOf = (area: AreaStack, importedValue: string) => area.resolve(importedValue) as { 'Fn::ImportValue': string };

/** The area stack holding a function, with its template. */
function areaOf({ stacks }: Synthesized, name: string) {
  const stack = [...stacks.areas.values()].find((area) => area.functions.has(name))!;
  return { stack, template: Template.fromStack(stack), endpoint: stack.functions.get(name)! };
}
function functionOf(synthesized: Synthesized, name: string) {
  const { stack, template, endpoint } = areaOf(synthesized, name);
  return resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack, endpoint.function)]!;
}
function statementsOf(synthesized: Synthesized, name: string): Statement[] {
  const { stack, template, endpoint } = areaOf(synthesized, name);
  const roleId = logicalIdOf(stack, endpoint.role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** Least privilege as the route table states it, checked for every function of the given areas. */
function expectGrantsFollowRoutes(synthesized: Synthesized, areas: Areas) {
  const { data } = synthesized.stacks;
  for (const [name, spec] of Object.values(areas).flatMap((routes) => Object.entries(routes))) {
    const area = areaOf(synthesized, name).stack;
    // The one conditioned grant: a POST that only reads may still write its Idempotency-Key record, on those partitions only.
    const unconditioned = statementsOf(synthesized, name).filter((statement) => !statement.Condition);
    const actions = unconditioned.flatMap((statement) => [statement.Action].flat());
    const statements = JSON.stringify(unconditioned);
    const conditioned = statementsOf(synthesized, name).filter((statement) => statement.Condition);
    const onPartitions = (prefix: string) => conditioned.filter((statement) => JSON.stringify(statement.Condition).includes(`"${prefix}*"`));
    const idempotency = onPartitions('IDEMPOTENCY#');
    if (takesIdempotencyKey(spec) && spec.access !== 'write') {
      expect(idempotency, name).toHaveLength(1);
      expect([idempotency[0]!.Action].flat().sort(), name).toEqual(['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
      expect(idempotency[0]!.Condition, name).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['IDEMPOTENCY#*'] } });
    } else {
      expect(idempotency, name).toEqual([]);
    }
    // A page-mode list or package read that only reads may write a list's first count (lib/db/list-count.ts) or the first apply-all tag ids (lib/db/tag.ts), on the counters' partitions only.
    const listCounts = onPartitions('COUNT#');
    if (writesCountPartitions(spec)) {
      expect(listCounts, name).toHaveLength(1);
      expect([listCounts[0]!.Action].flat(), name).toEqual(['dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem']);
      expect(listCounts[0]!.Condition, name).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['COUNT#*'] } });
    } else {
      expect(listCounts, name).toEqual([]);
    }
    // The one-package reads show tags: a store older than the apply-all tag ids derives them there (lib/db/tag.ts).
    if (spec.method === 'GET' && ['/v1/app/package/{packageId}', '/v1/webstore/package/{packageId}'].includes(spec.path)) expect(listCounts, name).toHaveLength(1);
    // A route of an API token or key that only reads may move its credential's "last used" mark (lib/db/credential.ts): that attribute, on the credentials' partitions only.
    const credentialUses = onPartitions('CRED#');
    if (notesCredentialUse(spec) && spec.access !== 'write') {
      expect(credentialUses, name).toHaveLength(1);
      expect([credentialUses[0]!.Action].flat(), name).toEqual(['dynamodb:UpdateItem']);
      expect(credentialUses[0]!.Condition, name).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CRED#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'last_used_at'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      });
    } else {
      expect(credentialUses, name).toEqual([]);
    }
    expect(conditioned.length, name).toBe(idempotency.length + listCounts.length + credentialUses.length);
    const environment = functionOf(synthesized, name).Properties.Environment.Variables;
    expect(actions.filter((action) => action.startsWith('dynamodb:')).sort(), name).toEqual([...TABLE_ACTIONS[spec.access]].sort());
    expect(statements.includes(importOf(area, data.exports.tableArn)['Fn::ImportValue']), name).toBe(spec.access !== 'none');
    // Queries on the GSIs are authorized on the index ARNs, each by name.
    for (const index of tableKeys.indexes) expect(statements.includes(`/index/${index.name}"`), name).toBe(spec.access !== 'none');
    const usesImages = spec.uses?.includes('images') ?? false;
    expect(
      actions.some((action) => action.startsWith('s3:')),
      name,
    ).toBe(usesImages);
    expect(statements.includes(importOf(area, data.exports.imagesBucketArn)['Fn::ImportValue']), name).toBe(usesImages);
    expect('IMAGES_BUCKET' in environment, name).toBe(usesImages);
    const usesMail = spec.uses?.includes('mail') ?? false;
    expect(
      actions.some((action) => action.startsWith('ses:')),
      name,
    ).toBe(usesMail);
    expect(environment.MAILER === 'ses', name).toBe(usesMail);
    const usesSecret = spec.uses?.includes('secret') ?? false;
    const secretGrants = unconditioned.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('secretsmanager:')));
    expect(secretGrants.length, name).toBe(usesSecret ? 1 : 0);
    if (usesSecret) {
      expect(secretGrants[0]!.Action, name).toBe('secretsmanager:GetSecretValue');
      expect(secretGrants[0]!.Resource, name).toEqual(importOf(area, data.exports.serverSecretArn));
      expect(environment.SERVER_SECRET_ARN, name).toEqual(importOf(area, data.exports.serverSecretArn));
    } else {
      expect('SERVER_SECRET_ARN' in environment, name).toBe(false);
    }
    // The payment secrets key: Encrypt only where the route seals provider secrets, Decrypt only where it opens them, on that key alone.
    const seals = spec.uses?.includes('provider-secrets-seal') ?? false;
    const opens = spec.uses?.includes('provider-secrets-open') ?? false;
    const keyGrants = unconditioned.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:')));
    const keyActions = [...(seals ? ['kms:Encrypt'] : []), ...(opens ? ['kms:Decrypt'] : [])];
    expect(keyGrants.length, name).toBe(keyActions.length > 0 ? 1 : 0);
    if (keyActions.length > 0) {
      expect([keyGrants[0]!.Action].flat(), name).toEqual(keyActions);
      expect(keyGrants[0]!.Resource, name).toEqual(importOf(area, data.exports.paymentSecretsKeyArn));
      expect(environment.PAYMENT_SECRETS_KEY_ID, name).toEqual(importOf(area, data.exports.paymentSecretsKeyArn));
    } else {
      expect('PAYMENT_SECRETS_KEY_ID' in environment, name).toBe(false);
    }
    // A deployed function calls the providers' own hosts and never has a local keyring or the TEST gateway by default.
    for (const local of ['MERCADOPAGO_API_URL', 'STRIPE_API_URL', 'PAYPAL_API_URL', 'PAYPAL_TRUSTED_ROOTS_FILE', 'PAYMENT_SECRETS_KEY_FILE', 'API_BASE_URL', 'TEST_GATEWAY'])
      expect(local in environment, `${name} ${local}`).toBe(false);
    expect(
      actions.filter((action) => action.includes('*')),
      name,
    ).toEqual([]);
  }
}

describe('StoreApi stacks from the route table', () => {
  let synthesized: Synthesized;
  let dataTemplate: Template;
  let httpTemplate: Template;
  const routes = routeEntries();
  beforeAll(() => {
    synthesized = synthesize({ functionsDir });
    dataTemplate = Template.fromStack(synthesized.stacks.data);
    httpTemplate = Template.fromStack(synthesized.stacks.http);
  });

  it('builds the table from lib/db/table.ts: keys, GSIs, TTL, PITR, on demand, no fixed name', () => {
    const attributes = [tableKeys.partitionKey, tableKeys.sortKey, ...tableKeys.indexes.flatMap((index) => [index.partitionKey, index.sortKey])];
    dataTemplate.resourceCountIs('AWS::DynamoDB::Table', 1);
    dataTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: Match.absent(),
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: tableKeys.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableKeys.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayEquals(attributes.map((name) => ({ AttributeName: name, AttributeType: 'S' }))),
      GlobalSecondaryIndexes: tableKeys.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      TimeToLiveSpecification: { AttributeName: tableKeys.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('retains the table of the prod stage only', () => {
    dataTemplate.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    const prod = Template.fromStack(new StoreDataStack(new App({ builtinCloudFormationValidation: false }), 'StoreApi-prod', { stage: 'prod' }));
    prod.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ DeletionProtectionEnabled: true }) });
  });

  it('keeps the name and logical ids of the single stack the data came from, so a stage deployed before keeps its table and buckets', () => {
    expect(synthesized.stacks.data.stackName).toBe('StoreApi-test');
    const ids = Object.entries(resourcesOf(dataTemplate))
      .filter(([, resource]) => resource.Type !== 'AWS::CDK::Metadata')
      .map(([id]) => id);
    // Pinned: a new logical id means CloudFormation replaces the resource, and a new, empty table.
    expect(ids.sort()).toEqual([
      'AccessLogs8B620ECA',
      'AccessLogsPolicyABDC4D2D',
      'DocsHeaders1EA4BF85',
      'DocsIndex12DEF3DE',
      'ImageHeaders1ABF0C54',
      'Images2D38C313',
      'ImagesCdnBC2AA66B',
      'ImagesCdnOrigin1S3OriginAccessControl216FD174',
      'ImagesPolicyC62327FF',
      'PaymentSecretsKey4ABB367E',
      'ServerSecret43E0D4DF',
      'TableCD117FA1',
    ]);
  });

  it('generates the server secret at deploy as {"current": <64 characters>}, with no fixed name and no manual step', () => {
    dataTemplate.resourceCountIs('AWS::SecretsManager::Secret', 1);
    dataTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: Match.absent(),
      GenerateSecretString: { SecretStringTemplate: '{}', GenerateStringKey: 'current', PasswordLength: 64, ExcludePunctuation: true },
    });
  });

  it('makes one customer-managed KMS key of the stage for the payment provider secrets, rotated and retained, used through IAM by the routes that name it', () => {
    dataTemplate.resourceCountIs('AWS::KMS::Key', 1);
    dataTemplate.hasResource('AWS::KMS::Key', { Properties: { EnableKeyRotation: true }, DeletionPolicy: 'Retain' });
    // The route table: the provider PUT alone seals.
    const sealing = routes.filter(([, spec]) => spec.uses?.includes('provider-secrets-seal')).map(([name]) => name);
    expect(sealing).toEqual(['payment-provider-put']);
    const put = statementsOf(synthesized, 'payment-provider-put').filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:')));
    expect(put.map((statement) => statement.Action)).toEqual(['kms:Encrypt']);
    for (const name of ['payment-provider-get', 'payment-provider-list', 'payment-provider-delete']) {
      expect(JSON.stringify(statementsOf(synthesized, name)), name).not.toContain('kms:');
    }
    // Decrypt: only the functions that call providers with the store's credentials (the settling flow's sources).
    const opening = routes.filter(([, spec]) => spec.uses?.includes('provider-secrets-open')).map(([name]) => name);
    expect(opening.sort()).toEqual([
      'order-payment-refund',
      'order-payment-sync',
      'order-refund',
      'payment-notify',
      'payment-test-action',
      'webstore-checkout',
      'webstore-order-payment',
      'webstore-order-status',
    ]);
    for (const name of opening) {
      const grants = statementsOf(synthesized, name).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:')));
      expect(
        grants.map((statement) => statement.Action),
        name,
      ).toEqual(['kms:Decrypt']);
    }
  });

  it('offers the TEST gateway only on a stage deployed with testGateway, and never on prod', () => {
    const offered = synthesize({ functionsDir, testGateway: true, areas: { payment: routeAreas.payment } });
    const environment = functionOf(offered, 'payment-provider-put').Properties.Environment.Variables;
    expect(environment.TEST_GATEWAY).toBe('1');
    expect(() => addStoreApiStacks(new App(), { stage: 'prod', mailFrom: 'no-reply@shop.example', functionsDir, docsDir: functionsDir, testGateway: true })).toThrow(
      /never offered on the prod stage/,
    );
  });

  it('keeps the images bucket private, encrypted, TLS-only and readable by CloudFront alone', () => {
    const { data } = synthesized.stacks;
    const bucketId = logicalIdOf(data, data.imagesBucket);
    const distributionId = logicalIdOf(data, data.imagesCdn);
    const bucket = resourcesOf(dataTemplate, 'AWS::S3::Bucket')[bucketId]!;
    expect(bucket.Properties.BucketName).toBeUndefined();
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.Properties.LoggingConfiguration.DestinationBucketName).toBeDefined();
    // Only the presigned POST of browsers crosses origins; nothing else is allowed.
    expect(bucket.Properties.CorsConfiguration.CorsRules.map((rule: { AllowedMethods: string[] }) => rule.AllowedMethods)).toEqual([['POST']]);
    dataTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 's3:GetObject',
            Principal: { Service: 'cloudfront.amazonaws.com' },
            Condition: { StringEquals: { 'AWS:SourceArn': Match.anyValue() } },
          }),
        ]),
      },
    });
    expect(JSON.stringify(dataTemplate.findResources('AWS::S3::BucketPolicy'))).toContain(distributionId);
  });

  it('serves images through CloudFront with origin access control and headers that stop script', () => {
    dataTemplate.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    dataTemplate.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: {
          ContentSecurityPolicy: { ContentSecurityPolicy: IMAGE_CONTENT_SECURITY_POLICY, Override: true },
          ContentTypeOptions: { Override: true },
        },
      }),
    });
    dataTemplate.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: [Match.objectLike({ OriginAccessControlId: Match.anyValue() })],
        DefaultCacheBehavior: Match.objectLike({ ResponseHeadersPolicyId: Match.anyValue(), ViewerProtocolPolicy: 'redirect-to-https' }),
      }),
    });
    expect(IMAGE_CONTENT_SECURITY_POLICY).toBe("default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
  });

  it('has exactly one Lambda per route, ARM64 on the chosen runtime, each with its own log group', () => {
    for (const [name] of routes) {
      const { stack, template } = areaOf(synthesized, name);
      const { Properties: fn } = functionOf(synthesized, name);
      expect(fn.FunctionName, name).toBeUndefined();
      expect(fn.Architectures, name).toEqual(['arm64']);
      expect(fn.Runtime, name).toBe(FUNCTION_RUNTIME.name);
      expect(fn.Handler, name).toBe('index.handler');
      expect(fn.Environment.Variables.NODE_OPTIONS, name).toBe('--enable-source-maps');
      expect(fn.Environment.Variables.TABLE_NAME, name).toEqual(importOf(stack, synthesized.stacks.data.exports.tableName));
      const logGroupId = fn.LoggingConfig.LogGroup.Ref as string;
      expect(resourcesOf(template, 'AWS::Logs::LogGroup')[logGroupId]?.Properties.RetentionInDays, name).toBeGreaterThan(0);
    }
    // The bundles are compiled for the runtime the functions run on.
    expect(FUNCTION_RUNTIME.name).toBe(`${LAMBDA_NODE_TARGET.replace('node', 'nodejs')}.x`);
  });

  it('routes each entry (method + path) to its own function on the right HTTP API', () => {
    for (const [name, spec] of routes) {
      const { stack, template, endpoint } = areaOf(synthesized, name);
      const matching = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route')).filter((route) => route.Properties.RouteKey === `${spec.method} ${spec.path}`);
      expect(matching, name).toHaveLength(1);
      const { ApiId, Target } = matching[0]!.Properties;
      expect(ApiId, name).toEqual(importOf(stack, synthesized.stacks.http.apiIds[spec.api]));
      const integrationId = (Target['Fn::Join'][1] as unknown[]).find((part): part is { Ref: string } => typeof part === 'object')!.Ref;
      const integration = resourcesOf(template, 'AWS::ApiGatewayV2::Integration')[integrationId]!;
      expect(integration.Properties.IntegrationUri, name).toEqual({ 'Fn::GetAtt': [logicalIdOf(stack, endpoint.function), 'Arn'] });
    }
  });

  it('logs the access of both APIs to a log group, and auto-deploys the routes the area stacks attach', () => {
    const stages = Object.values(resourcesOf(Template.fromStack(synthesized.stacks.apiStage), 'AWS::ApiGatewayV2::Stage'));
    expect(stages).toHaveLength(2);
    for (const stage of stages) {
      expect(stage.Properties.StageName).toBe('$default');
      expect(stage.Properties.AutoDeploy).toBe(true);
      expect(stage.Properties.AccessLogSettings.DestinationArn['Fn::GetAtt'][1]).toBe('Arn');
      expect(stage.Properties.AccessLogSettings.Format).toContain('$context.requestId');
    }
  });

  it('grants each function only what its route entry says', () => {
    expectGrantsFollowRoutes(synthesized, routeAreas);
  });

  it('outputs the API URLs, the images URL and the table name', () => {
    for (const output of ['ApiUrl', 'StoreDomainApiUrl']) httpTemplate.hasOutput(output, { Value: Match.anyValue() });
    expect(JSON.stringify(httpTemplate.findOutputs('ApiUrl'))).toContain('/v1');
    for (const output of ['ImagesUrl', 'TableName']) dataTemplate.hasOutput(output, { Value: Match.anyValue() });
  });

  it('deploys every area after the data and HTTP stacks it imports from', () => {
    const { data, http, areas } = synthesized.stacks;
    for (const area of areas.values()) expect(area.dependencies, area.stackName).toEqual([data, http]);
  });

  it('runs every scheduled job of lib/routes/jobs.ts by an EventBridge rule on its schedule, with its table access only', () => {
    const { jobs, data, http } = synthesized.stacks;
    const template = Template.fromStack(jobs);
    const rules = Object.values(resourcesOf(template, 'AWS::Events::Rule'));
    expect(rules.map((rule) => rule.Properties.ScheduleExpression).sort()).toEqual(
      jobEntries()
        .map(([, job]) => job.schedule)
        .sort(),
    );
    expect(Object.keys(resourcesOf(template, 'AWS::Lambda::Function'))).toHaveLength(jobEntries().length);
    for (const [name, job] of jobEntries()) {
      const role = jobs.getLogicalId(jobs.functions.get(name)!.role.node.defaultChild as CfnElement);
      const actions = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
        .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(role))
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
        .flatMap((statement) => [statement.Action].flat())
        .filter((action) => action.startsWith('dynamodb:'));
      expect(actions.sort(), name).toEqual([...TABLE_ACTIONS[job.access]].sort());
    }
    // The table, and the alarm topic its alarms notify.
    expect(jobs.dependencies).toEqual([data, http]);
  });
});

describe('grants derived from probe routes of every kind', () => {
  it('gives the table to routes that use it, writes to write routes only, the bucket to images users only, SES to mail users only', () => {
    const synthesized = synthesize({ functionsDir, areas: probeAreas });
    expectGrantsFollowRoutes(synthesized, probeAreas);
    const imageStatements = statementsOf(synthesized, 'probe-images').filter((statement) => [statement.Action].flat().some((action) => action.startsWith('s3:')));
    expect(imageStatements.flatMap((statement) => [statement.Action].flat()).sort()).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
  });

  it('scopes ses:SendEmail to the identities of mailFrom when it is given', () => {
    const synthesized = synthesize({ functionsDir, areas: probeAreas, mailFrom: 'no-reply@shop.example' });
    const sesStatement = statementsOf(synthesized, 'probe-mail').find((statement) => statement.Action === 'ses:SendEmail')!;
    const resources = JSON.stringify(sesStatement.Resource);
    expect(resources).toContain(':identity/no-reply@shop.example');
    expect(resources).toContain(':identity/shop.example');
    expect(resources).not.toContain('identity/*');
    expect(functionOf(synthesized, 'probe-mail').Properties.Environment.Variables.MAIL_FROM).toBe('no-reply@shop.example');
  });
});

describe('cdk-nag AwsSolutions and the CloudFormation linter', () => {
  // cdk-nag 3 is a CDK policy-validation plugin, not an Aspect: findings are not annotations but
  // the plugin's report, and any finding (error or warning) fails the synthesis.
  it.each([
    ['the route table', undefined],
    ['the probe routes', probeAreas],
  ])('finds nothing unacknowledged in the stacks of %s', (_label, areas) => {
    const { app } = synthesize({ functionsDir, areas });
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources[0]?.constructPath}`)).toEqual([]);
  });

  // infra/app.ts leaves CDK's built-in linter out of `cdk synth` for speed; it only warns there
  // anyway. Here it runs on every stack, and any finding fails.
  it('lets synthesis pass with cdk-nag registered as in infra/app.ts, and the built-in CloudFormation linter finds nothing', () => {
    const { app } = synthesize({ functionsDir }, new App());
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; description: string }[] }[];
    };
    expect(report.pluginReports.map((plugin) => plugin.pluginName)).toContain('CloudFormation Validate');
    expect(report.pluginReports.flatMap((plugin) => plugin.violations.map((violation) => `${plugin.pluginName} ${violation.ruleName}: ${violation.description}`))).toEqual([]);
  });
});
