import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions, LAMBDA_NODE_TARGET } from '#infra/build.ts';
import { FUNCTION_RUNTIME } from '#infra/constructs/endpoint-function.ts';
import { IMAGE_CONTENT_SECURITY_POLICY, StoreApiStack, type StoreApiStackProps } from '#infra/stack.ts';
import { tableKeys } from '#lib/db/table.ts';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeEntries } from '#lib/routes/index.ts';

/**
 * The real stack is synthesized from the real bundles, built once for this file into a temp dir.
 * The route table need not hold every kind of route (an 'images' user, a read route on the store
 * domain...), so a second stack of probe routes (stub bundles) exercises every kind of grant.
 */
type Routes = readonly (readonly [string, RouteSpec])[];
type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

const probe = (method: RouteSpec['method'], path: string, api: RouteSpec['api'], access: RouteSpec['access'], uses?: RouteSpec['uses']): RouteSpec => ({
  method, path, api, access, uses, credential: 'operator', summary: 'probe', tag: 'Probe',
});
const probeRoutes: Routes = [
  ['probe-read', probe('GET', '/v1/app/probe', 'api', 'read')],
  ['probe-write', probe('POST', '/v1/app/probe', 'api', 'write')],
  ['probe-images', probe('POST', '/v1/app/probe/{probeId}/image', 'api', 'write', ['images'])],
  ['probe-mail', probe('POST', '/auth/probe', 'store', 'write', ['mail'])],
  ['probe-store-read', probe('GET', '/probe', 'store', 'read')],
  ['probe-no-table', probe('GET', '/v1/probe.json', 'api', 'none')],
];

/** What lib/db sends, spelled out here so that a widened grant (Scan, BatchWriteItem) fails this test. */
const TABLE_READ_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const TABLE_ACTIONS: Record<RouteSpec['access'], string[]> = {
  none: [],
  read: TABLE_READ_ACTIONS,
  write: [...TABLE_READ_ACTIONS, 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
};

let workDir: string;
let functionsDir: string;
let probeFunctionsDir: string;

/** Without CDK's built-in template linter (seconds to start, and not what these tests check); the last test keeps it, as app.ts does. */
function synthesize(routes?: Routes, extra: Partial<StoreApiStackProps> = {}) {
  const app = new App({ builtinCloudFormationValidation: false });
  const stack = new StoreApiStack(app, 'StoreApi-test', {
    stage: 'test',
    functionsDir: routes ? probeFunctionsDir : functionsDir,
    ...(routes && { routes }),
    ...extra,
  });
  return { app, stack, template: Template.fromStack(stack) };
}

type Synthesized = ReturnType<typeof synthesize>;

const logicalIdOf = (stack: Stack, construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resourcesOf = (template: Template, type: string) => template.findResources(type) as Record<string, Resource>;
const functionIdOf = ({ stack }: Synthesized, name: string) => logicalIdOf(stack, stack.functions.get(name)!.function);
const functionOf = (synthesized: Synthesized, name: string) => resourcesOf(synthesized.template, 'AWS::Lambda::Function')[functionIdOf(synthesized, name)]!;

function statementsOf(synthesized: Synthesized, name: string): Statement[] {
  const { stack, template } = synthesized;
  const roleId = logicalIdOf(stack, stack.functions.get(name)!.role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}
const actionsOf = (synthesized: Synthesized, name: string) => statementsOf(synthesized, name).flatMap((statement) => [statement.Action].flat());

/** Least privilege as the route table states it, checked for every function of a stack. */
function expectGrantsFollowRoutes(synthesized: Synthesized, routes: Routes) {
  const imagesBucketId = logicalIdOf(synthesized.stack, synthesized.stack.imagesBucket);
  for (const [name, spec] of routes) {
    const actions = actionsOf(synthesized, name);
    const statements = JSON.stringify(statementsOf(synthesized, name));
    const environment = functionOf(synthesized, name).Properties.Environment.Variables;
    expect(actions.filter((action) => action.startsWith('dynamodb:')).sort(), name).toEqual([...TABLE_ACTIONS[spec.access]].sort());
    // Queries on the GSIs are authorized on the index ARNs, not on the table's.
    expect(statements.includes('/index/*'), name).toBe(spec.access !== 'none');
    const usesImages = spec.uses?.includes('images') ?? false;
    expect(actions.some((action) => action.startsWith('s3:')), name).toBe(usesImages);
    expect(statements.includes(imagesBucketId), name).toBe(usesImages);
    expect('IMAGES_BUCKET' in environment, name).toBe(usesImages);
    const usesMail = spec.uses?.includes('mail') ?? false;
    expect(actions.some((action) => action.startsWith('ses:')), name).toBe(usesMail);
    expect(environment.MAILER === 'ses', name).toBe(usesMail);
    expect(actions.filter((action) => action.includes('*')), name).toEqual([]);
  }
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'store-api-infra-'));
  functionsDir = join(workDir, 'functions');
  probeFunctionsDir = join(workDir, 'probes');
  await buildFunctions(functionsDir);
  for (const [name] of probeRoutes) {
    mkdirSync(join(probeFunctionsDir, name), { recursive: true });
    writeFileSync(join(probeFunctionsDir, name, 'index.mjs'), 'export const handler = async () => ({ statusCode: 200 });\n');
  }
});

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('StoreApi stack from the route table', () => {
  let synthesized: Synthesized;
  let template: Template;
  const routes = routeEntries();
  beforeAll(() => {
    synthesized = synthesize();
    template = synthesized.template;
  });

  it('builds the table from lib/db/table.ts: keys, GSIs, TTL, PITR, on demand, no fixed name', () => {
    const attributes = [tableKeys.partitionKey, tableKeys.sortKey, ...tableKeys.indexes.flatMap((index) => [index.partitionKey, index.sortKey])];
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
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
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    const prod = synthesize(undefined, { stage: 'prod' });
    prod.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ DeletionProtectionEnabled: true }) });
  });

  it('keeps the images bucket private, encrypted, TLS-only and readable by CloudFront alone', () => {
    const bucketId = logicalIdOf(synthesized.stack, synthesized.stack.imagesBucket);
    const distributionId = logicalIdOf(synthesized.stack, synthesized.stack.imagesCdn);
    const bucket = resourcesOf(template, 'AWS::S3::Bucket')[bucketId]!;
    expect(bucket.Properties.BucketName).toBeUndefined();
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
    expect(bucket.Properties.LoggingConfiguration.DestinationBucketName).toBeDefined();
    // Only the presigned POST of browsers crosses origins; nothing else is allowed.
    expect(bucket.Properties.CorsConfiguration.CorsRules.map((rule: { AllowedMethods: string[] }) => rule.AllowedMethods)).toEqual([['POST']]);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
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
    expect(JSON.stringify(template.findResources('AWS::S3::BucketPolicy'))).toContain(distributionId);
  });

  it('serves images through CloudFront with origin access control and headers that stop script', () => {
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: {
          ContentSecurityPolicy: { ContentSecurityPolicy: IMAGE_CONTENT_SECURITY_POLICY, Override: true },
          ContentTypeOptions: { Override: true },
        },
      }),
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: [Match.objectLike({ OriginAccessControlId: Match.anyValue() })],
        DefaultCacheBehavior: Match.objectLike({ ResponseHeadersPolicyId: Match.anyValue(), ViewerProtocolPolicy: 'redirect-to-https' }),
      }),
    });
    expect(IMAGE_CONTENT_SECURITY_POLICY).toBe("default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
  });

  it('has exactly one Lambda per route, ARM64 on the chosen runtime, each with its own log group', () => {
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    const logGroups = resourcesOf(template, 'AWS::Logs::LogGroup');
    expect(Object.keys(functions)).toHaveLength(routes.length);
    for (const [name] of routes) {
      const { Properties: fn } = functionOf(synthesized, name);
      expect(fn.FunctionName, name).toBeUndefined();
      expect(fn.Architectures, name).toEqual(['arm64']);
      expect(fn.Runtime, name).toBe(FUNCTION_RUNTIME.name);
      expect(fn.Handler, name).toBe('index.handler');
      expect(fn.Environment.Variables.NODE_OPTIONS, name).toBe('--enable-source-maps');
      expect(fn.Environment.Variables.TABLE_NAME, name).toEqual({ Ref: logicalIdOf(synthesized.stack, synthesized.stack.table) });
      const logGroupId = fn.LoggingConfig.LogGroup.Ref as string;
      expect(logGroups[logGroupId]?.Properties.RetentionInDays, name).toBeGreaterThan(0);
    }
    // The bundles are compiled for the runtime the functions run on.
    expect(FUNCTION_RUNTIME.name).toBe(`${LAMBDA_NODE_TARGET.replace('node', 'nodejs')}.x`);
  });

  it('routes each entry (method + path) to its own function on the right HTTP API', () => {
    const apiIds = {
      api: logicalIdOf(synthesized.stack, synthesized.stack.apis.api),
      store: logicalIdOf(synthesized.stack, synthesized.stack.apis.store),
    };
    const apiRoutes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route'));
    const integrations = resourcesOf(template, 'AWS::ApiGatewayV2::Integration');
    expect(apiRoutes).toHaveLength(routes.length);
    for (const [name, spec] of routes) {
      const matching = apiRoutes.filter((route) => route.Properties.RouteKey === `${spec.method} ${spec.path}`);
      expect(matching, name).toHaveLength(1);
      const { ApiId, Target } = matching[0]!.Properties;
      expect(ApiId, name).toEqual({ Ref: apiIds[spec.api] });
      const integrationId = (Target['Fn::Join'][1] as unknown[]).find((part): part is { Ref: string } => typeof part === 'object')!.Ref;
      expect(integrations[integrationId]!.Properties.IntegrationUri, name).toEqual({ 'Fn::GetAtt': [functionIdOf(synthesized, name), 'Arn'] });
    }
  });

  it('logs the access of both APIs to a log group', () => {
    const stages = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Stage'));
    expect(stages).toHaveLength(2);
    for (const stage of stages) {
      expect(stage.Properties.StageName).toBe('$default');
      expect(stage.Properties.AccessLogSettings.DestinationArn['Fn::GetAtt'][1]).toBe('Arn');
      expect(stage.Properties.AccessLogSettings.Format).toContain('$context.requestId');
    }
  });

  it('grants each function only what its route entry says', () => {
    expectGrantsFollowRoutes(synthesized, routes);
  });

  it('outputs the API URLs, the images URL and the table name', () => {
    for (const output of ['ApiUrl', 'StoreDomainApiUrl', 'ImagesUrl', 'TableName']) template.hasOutput(output, { Value: Match.anyValue() });
    expect(JSON.stringify(template.findOutputs('ApiUrl'))).toContain('/v1');
  });
});

describe('grants derived from probe routes of every kind', () => {
  it('gives the table to routes that use it, writes to write routes only, the bucket to images users only, SES to mail users only', () => {
    const synthesized = synthesize(probeRoutes);
    expectGrantsFollowRoutes(synthesized, probeRoutes);
    const imageStatements = statementsOf(synthesized, 'probe-images').filter((statement) => [statement.Action].flat().some((action) => action.startsWith('s3:')));
    expect(imageStatements.flatMap((statement) => [statement.Action].flat()).sort()).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
  });

  it('scopes ses:SendEmail to the identities of mailFrom when it is given', () => {
    const synthesized = synthesize(probeRoutes, { mailFrom: 'no-reply@shop.example' });
    const sesStatement = statementsOf(synthesized, 'probe-mail').find((statement) => statement.Action === 'ses:SendEmail')!;
    const resources = JSON.stringify(sesStatement.Resource);
    expect(resources).toContain(':identity/no-reply@shop.example');
    expect(resources).toContain(':identity/shop.example');
    expect(resources).not.toContain('identity/*');
    expect(functionOf(synthesized, 'probe-mail').Properties.Environment.Variables.MAIL_FROM).toBe('no-reply@shop.example');
  });
});

describe('cdk-nag AwsSolutions', () => {
  // cdk-nag 3 is a CDK policy-validation plugin, not an Aspect: findings are not annotations but
  // the plugin's report, and any finding (error or warning) fails the synthesis.
  it.each([
    ['the route table', undefined],
    ['the probe routes', probeRoutes],
  ])('finds nothing unacknowledged in the stack of %s', (_label, routes) => {
    const { app } = synthesize(routes);
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(report.violations.map((violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources[0]?.constructPath}`)).toEqual([]);
  });

  it('lets synthesis pass with the plugin registered as in infra/app.ts', () => {
    const app = new App();
    new StoreApiStack(app, 'StoreApi-test', { stage: 'test', functionsDir });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });
});
