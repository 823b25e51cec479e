import { readFileSync, rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alarmCountOf, METRICS_PER_ALARM } from '#infra/constructs/function-group-alarms.ts';
import { addStoreApiStacks } from '#infra/store-api.ts';
import { stageFromContext, THROTTLE_DEFAULTS } from '#infra/stage-context.ts';
import { routeAreas, routeEntries } from '#lib/routes/index.ts';
import { resourcesOf, stubBundles, stubDocs, synthesize } from './synthesize.ts';

/**
 * What tells the team something is wrong (JSON logs, metrics, alarms to one topic, tracing), what
 * bounds a script's spending (stage throttles), the stores' own domains, and the prod stage's
 * refusal to run without a mail sender.
 */
let functionsDir: string;
beforeAll(() => {
  functionsDir = stubBundles(routeEntries().map(([name]) => name));
});
afterAll(() => rmSync(functionsDir, { recursive: true, force: true }));

/** The stacks of a stage as `cdk synth -c ...` builds them from the context. */
const fromContext = (context: Record<string, string>) => {
  const app = new App({ builtinCloudFormationValidation: false, context });
  return addStoreApiStacks(app, { ...stageFromContext(app), functionsDir, docsDir: stubDocs() });
};

describe('observability', () => {
  let synthesized: ReturnType<typeof synthesize>;
  beforeAll(() => {
    synthesized = synthesize({ functionsDir });
  });

  it('has one alarm topic for the stage, its ARN an output, which every alarm of every area notifies on ALARM and OK', () => {
    const http = Template.fromStack(synthesized.stacks.http);
    http.resourceCountIs('AWS::SNS::Topic', 1);
    http.hasOutput('AlarmTopicArn', { Value: { Ref: Match.anyValue() } });
    // CloudWatch may publish: the enforce-SSL policy replaced SNS's default one.
    http.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'cloudwatch.amazonaws.com' } })]) },
    });
    const topicImport = synthesized.stacks.areas.values().next().value!.resolve(synthesized.stacks.http.alarmTopicArn);
    for (const [area, stack] of synthesized.stacks.areas) {
      const alarms = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
      expect(alarms, area).toHaveLength(alarmCountOf(stack.functions.size));
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions, area).toEqual([topicImport]);
        expect(alarm.Properties.OKActions, area).toEqual([topicImport]);
        expect(alarm.Properties.TreatMissingData, area).toBe('notBreaching');
      }
    }
  });

  it('alarms per area on its 5xx rate and p99 latency (request metrics) and on Lambda errors and throttles of each of its functions', () => {
    for (const [area, stack] of synthesized.stacks.areas) {
      const alarms = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
      const metricsOf = (alarm: (typeof alarms)[number]) =>
        (alarm.Properties.Metrics ?? []) as {
          Expression?: string;
          MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] } };
        }[];
      const rate = alarms.find((alarm) => metricsOf(alarm).some((metric) => metric.Expression?.includes('serverErrors')));
      expect(rate, area).toBeDefined();
      expect(metricsOf(rate!).flatMap((metric) => metric.MetricStat?.Metric.Dimensions ?? [])).toContainEqual({ Name: 'function_group', Value: area });
      expect(metricsOf(rate!).every((metric) => !metric.MetricStat || metric.MetricStat.Metric.Namespace === 'StoreApi/test')).toBe(true);
      const p99 = alarms.find((alarm) => alarm.Properties.ExtendedStatistic === 'p99');
      expect(p99?.Properties.MetricName, area).toBe('latency_ms');
      expect(p99?.Properties.Dimensions, area).toEqual([{ Name: 'function_group', Value: area }]);
      for (const lambdaMetric of ['Errors', 'Throttles']) {
        const watched = alarms.flatMap((alarm) =>
          metricsOf(alarm).filter((metric) => metric.MetricStat?.Metric.Namespace === 'AWS/Lambda' && metric.MetricStat.Metric.MetricName === lambdaMetric),
        );
        // Every function of the area, once, at most 10 in one alarm (CloudWatch's limit).
        expect(watched, `${area} ${lambdaMetric}`).toHaveLength(stack.functions.size);
        for (const alarm of alarms) expect(metricsOf(alarm).filter((metric) => metric.MetricStat).length).toBeLessThanOrEqual(METRICS_PER_ALARM);
      }
    }
  });

  it('alarms on the Lambda errors and throttles of every scheduled job, to the same topic (the jobs serve no request: no 5xx or latency alarm)', () => {
    const { jobs, http } = synthesized.stacks;
    const template = Template.fromStack(jobs);
    const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(alarmCountOf(jobs.functions.size, false));
    const topicImport = jobs.resolve(http.alarmTopicArn);
    type Stat = { MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] } } };
    for (const lambdaMetric of ['Errors', 'Throttles']) {
      const watched = alarms
        .filter((alarm) => alarm.Properties.AlarmDescription.startsWith('Lambda '))
        .flatMap((alarm) => (alarm.Properties.Metrics as Stat[]).filter((metric) => metric.MetricStat?.Metric.MetricName === lambdaMetric))
        .map((metric) => metric.MetricStat!.Metric.Dimensions);
      const jobFunctions = [...jobs.functions.values()].map((job) => [{ Name: 'FunctionName', Value: { Ref: jobs.getLogicalId(job.function.node.defaultChild as never) } }]);
      expect(watched, lambdaMetric).toEqual(expect.arrayContaining(jobFunctions));
      expect(watched, lambdaMetric).toHaveLength(jobs.functions.size);
    }
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([topicImport]);
      expect(alarm.Properties.OKActions).toEqual([topicImport]);
      expect(JSON.stringify(alarm.Properties)).not.toContain('StoreApi/test');
    }
    expect(jobs.dependencies).toContain(http);
  });

  it('runs the payments reconciler every 5 minutes, the one job holding kms:Decrypt on the payment secrets key (and never kms:Encrypt)', () => {
    const { jobs } = synthesized.stacks;
    const template = Template.fromStack(jobs);
    const rules = Object.values(resourcesOf(template, 'AWS::Events::Rule'));
    expect(rules.map((rule) => rule.Properties.ScheduleExpression)).toContain('rate(5 minutes)');
    const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy'));
    const kmsStatements = policies.flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:'))),
    );
    expect(kmsStatements.map((statement) => statement.Action)).toEqual(['kms:Decrypt']);
    const reconciler = jobs.functions.get('payments-reconcile')!;
    const environment = resourcesOf(template, 'AWS::Lambda::Function')[jobs.getLogicalId(reconciler.function.node.defaultChild as never)]!.Properties.Environment.Variables;
    expect(environment.PAYMENT_SECRETS_KEY_ID).toBeDefined();
  });

  it('gives every function the JSON log format, active tracing, the metrics namespace and its area as its group', () => {
    for (const [area, stack] of synthesized.stacks.areas) {
      for (const fn of Object.values(resourcesOf(Template.fromStack(stack), 'AWS::Lambda::Function'))) {
        expect(fn.Properties.LoggingConfig.LogFormat, area).toBe('JSON');
        expect(fn.Properties.TracingConfig, area).toEqual({ Mode: 'Active' });
        expect(fn.Properties.Environment.Variables, area).toMatchObject({ METRICS_NAMESPACE: 'StoreApi/test', FUNCTION_GROUP: area });
      }
    }
    expect(synthesized.stacks.areas.size).toBe(Object.keys(routeAreas).length);
  });

  it('takes the metrics namespace from the context', () => {
    const stacks = fromContext({ stage: 'staging', metricsNamespace: 'Shop/Staging' });
    const fn = Object.values(resourcesOf(Template.fromStack(stacks.areas.get('core')!), 'AWS::Lambda::Function'))[0]!;
    expect(fn.Properties.Environment.Variables.METRICS_NAMESPACE).toBe('Shop/Staging');
    expect(
      Object.values(resourcesOf(Template.fromStack(fromContext({ stage: 'staging' }).areas.get('core')!), 'AWS::Lambda::Function'))[0]!.Properties.Environment.Variables
        .METRICS_NAMESPACE,
    ).toBe('StoreApi/staging');
  });
});

describe('stage throttling', () => {
  const stageOf = (stacks: ReturnType<typeof fromContext>, api: 'api' | 'store') => {
    const template = Template.fromStack(stacks.apiStage);
    return resourcesOf(template, 'AWS::ApiGatewayV2::Stage')[stacks.apiStage.getLogicalId(stacks.apiStage.stages[api].node.defaultChild as never)]!;
  };
  /** Every route a client may call with no credential at all on /v1/webstore (the storefront's public surface), and the payment providers' notifications. */
  const publicStorefrontRoutes = routeEntries().filter(
    ([, spec]) => (spec.path.startsWith('/v1/webstore') && ['public', 'buyerStore', 'buyerOptional'].includes(spec.credential)) || spec.path.startsWith('/v1/payment/notify/'),
  );

  it('puts the documented defaults on every route of both APIs', () => {
    const stacks = fromContext({});
    expect(stageOf(stacks, 'api').Properties.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: THROTTLE_DEFAULTS.api.rateLimit,
      ThrottlingBurstLimit: THROTTLE_DEFAULTS.api.burstLimit,
    });
    expect(stageOf(stacks, 'store').Properties.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: THROTTLE_DEFAULTS.store.rateLimit,
      ThrottlingBurstLimit: THROTTLE_DEFAULTS.store.burstLimit,
    });
  });

  it('takes the values of the context (strings, as -c gives them)', () => {
    const stacks = fromContext({ apiThrottleRate: '250', apiThrottleBurst: '500', storeThrottleRate: '30', storeThrottleBurst: '60' });
    expect(stageOf(stacks, 'api').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 250, ThrottlingBurstLimit: 500 });
    expect(stageOf(stacks, 'store').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 30, ThrottlingBurstLimit: 60 });
  });

  it('refuses a value that is not a positive number', () => {
    expect(() => fromContext({ apiThrottleRate: 'lots' })).toThrow('apiThrottleRate must be a positive number: lots');
    expect(() => fromContext({ storefrontPublicThrottleBurst: '0' })).toThrow('storefrontPublicThrottleBurst must be a positive number: 0');
  });

  it("reads its values from cdk.json's context, as the CDK CLI does, and keeps the public storefront's lower than the API's", () => {
    const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, number> };
    for (const name of ['api', 'store', 'storefrontPublic'] as const) {
      expect(THROTTLE_DEFAULTS[name], name).toEqual({ rateLimit: context[`${name}ThrottleRate`], burstLimit: context[`${name}ThrottleBurst`] });
    }
    expect(THROTTLE_DEFAULTS.storefrontPublic.rateLimit).toBeLessThan(THROTTLE_DEFAULTS.api.rateLimit);
    expect(THROTTLE_DEFAULTS.storefrontPublic.burstLimit).toBeLessThan(THROTTLE_DEFAULTS.api.burstLimit);
  });

  it('gives every public storefront route of the table its own lower throttle, and no authenticated route one', () => {
    expect(publicStorefrontRoutes.map(([name]) => name)).toEqual(
      expect.arrayContaining(['webstore-package-list', 'webstore-checkout', 'auth-login', 'webstore-preflight', 'payment-notify']),
    );
    const settings = stageOf(fromContext({}), 'api').Properties.RouteSettings as Record<string, unknown>;
    const expected = { ThrottlingRateLimit: THROTTLE_DEFAULTS.storefrontPublic.rateLimit, ThrottlingBurstLimit: THROTTLE_DEFAULTS.storefrontPublic.burstLimit };
    expect(settings).toEqual(Object.fromEntries(publicStorefrontRoutes.map(([, spec]) => [`${spec.method} ${spec.path}`, expected])));
    expect(stageOf(fromContext({}), 'store').Properties.RouteSettings).toBeUndefined();
  });

  it('takes the public storefront throttle from the context too', () => {
    const settings = stageOf(fromContext({ storefrontPublicThrottleRate: '5', storefrontPublicThrottleBurst: '9' }), 'api').Properties.RouteSettings as Record<string, unknown>;
    expect(settings['GET /v1/webstore/package']).toEqual({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 9 });
    expect(Object.keys(settings)).toHaveLength(publicStorefrontRoutes.length);
  });

  it('puts the stages in a stack deployed after every area stack (a route setting needs its route) and after the HTTP stack', () => {
    const stacks = fromContext({});
    expect(new Set(stacks.apiStage.dependencies)).toEqual(new Set([stacks.http, ...stacks.areas.values()]));
    Template.fromStack(stacks.http).resourceCountIs('AWS::ApiGatewayV2::Stage', 0);
    for (const api of ['api', 'store'] as const) expect(stageOf(stacks, api).Properties.ApiId).toEqual(stacks.apiStage.resolve(stacks.http.apiIds[api]));
  });
});

describe("the stores' own domains", () => {
  const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';

  it('are not in the stack without their context', () => {
    const stacks = fromContext({});
    Template.fromStack(stacks.http).resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    Template.fromStack(stacks.apiStage).resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
  });

  it('map each domain (a wildcard too) to the store API with the given certificate, and output the CNAME target', () => {
    const stacks = fromContext({ storeDomains: '*.stores.example.com, shop.example.com', storeDomainCertificateArn: certificateArn });
    const http = Template.fromStack(stacks.http);
    for (const domainName of ['*.stores.example.com', 'shop.example.com']) {
      http.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
        DomainName: domainName,
        DomainNameConfigurations: [Match.objectLike({ CertificateArn: certificateArn, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
      });
    }
    // Mapped in the stage stack (a mapping names its stage), which deploys after the HTTP stack that creates the domains.
    const stageStack = stacks.apiStage;
    const mappings = resourcesOf(Template.fromStack(stageStack), 'AWS::ApiGatewayV2::ApiMapping');
    expect(
      Object.values(mappings)
        .map((mapping) => mapping.Properties.DomainName)
        .sort(),
    ).toEqual(['*.stores.example.com', 'shop.example.com']);
    const storeStage = stageStack.getLogicalId(stageStack.stages.store.node.defaultChild as never);
    for (const mapping of Object.values(mappings)) {
      expect(mapping.Properties.ApiId).toEqual(stageStack.resolve(stacks.http.apiIds.store));
      expect(mapping.Properties.Stage).toBe('$default');
      expect((mapping as unknown as { DependsOn: string[] }).DependsOn).toContain(storeStage);
    }
    expect(stageStack.dependencies).toContain(stacks.http);
    expect(Object.keys(http.findOutputs('*')).filter((name) => name.startsWith('StoreDomain') && name.endsWith('Target'))).toHaveLength(2);
  });

  it('refuses domains without a certificate, and a certificate without domains', () => {
    expect(() => fromContext({ storeDomains: 'shop.example.com' })).toThrow(/storeDomains and storeDomainCertificateArn go together/);
    expect(() => fromContext({ storeDomainCertificateArn: certificateArn })).toThrow(/storeDomains and storeDomainCertificateArn go together/);
  });
});

describe('the prod stage', () => {
  it('refuses to synthesize without mailFrom, and says how to fix it', () => {
    expect(() => fromContext({ stage: 'prod' })).toThrow(
      'The prod stage sends login codes through SES and has no sender: deploy it with -c mailFrom=no-reply@your.domain, an address (or domain) verified as an SES identity in this account and region.',
    );
  });

  it('synthesizes with mailFrom', () => {
    const stacks = fromContext({ stage: 'prod', mailFrom: 'no-reply@shop.example' });
    expect(stacks.data.stackName).toBe('StoreApi-prod');
  });
});
