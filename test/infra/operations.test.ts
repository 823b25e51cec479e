import { rmSync } from 'node:fs';
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
      const metricsOf = (alarm: (typeof alarms)[number]) => (alarm.Properties.Metrics ?? []) as { Expression?: string; MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] } } }[];
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
    expect(Object.values(resourcesOf(Template.fromStack(fromContext({ stage: 'staging' }).areas.get('core')!), 'AWS::Lambda::Function'))[0]!.Properties.Environment.Variables.METRICS_NAMESPACE).toBe('StoreApi/staging');
  });
});

describe('stage throttling', () => {
  const stageOf = (stacks: ReturnType<typeof fromContext>, api: 'api' | 'store') => {
    const template = Template.fromStack(stacks.http);
    const apiId = stacks.http.getLogicalId(stacks.http.apis[api].node.defaultChild as never);
    return Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Stage')).find((stage) => stage.Properties.ApiId.Ref === apiId)!;
  };

  it('puts the documented defaults on every route of both APIs', () => {
    const stacks = fromContext({});
    expect(stageOf(stacks, 'api').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: THROTTLE_DEFAULTS.api.rateLimit, ThrottlingBurstLimit: THROTTLE_DEFAULTS.api.burstLimit });
    expect(stageOf(stacks, 'store').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: THROTTLE_DEFAULTS.store.rateLimit, ThrottlingBurstLimit: THROTTLE_DEFAULTS.store.burstLimit });
  });

  it('takes the values of the context (strings, as -c gives them)', () => {
    const stacks = fromContext({ apiThrottleRate: '250', apiThrottleBurst: '500', storeThrottleRate: '30', storeThrottleBurst: '60' });
    expect(stageOf(stacks, 'api').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 250, ThrottlingBurstLimit: 500 });
    expect(stageOf(stacks, 'store').Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 30, ThrottlingBurstLimit: 60 });
  });

  it('refuses a value that is not a positive number', () => {
    expect(() => fromContext({ apiThrottleRate: 'lots' })).toThrow('apiThrottleRate must be a positive number: lots');
  });
});

describe("the stores' own domains", () => {
  const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';

  it('are not in the stack without their context', () => {
    const http = Template.fromStack(fromContext({}).http);
    http.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    http.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
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
    const storeApiId = stacks.http.getLogicalId(stacks.http.apis.store.node.defaultChild as never);
    const mappings = Object.values(resourcesOf(http, 'AWS::ApiGatewayV2::ApiMapping'));
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) expect(mapping.Properties.ApiId).toEqual({ Ref: storeApiId });
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
