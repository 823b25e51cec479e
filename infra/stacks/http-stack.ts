import { ArnFormat, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { RouteSpec } from '#lib/http/route.ts';
import { LOG_RETENTION } from '#infra/constructs/endpoint-function.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';

/** HTTP API variables only ($context.identity.user and friends are REST-only). */
const API_ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    domainName: '$context.domainName',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    userAgent: '$context.identity.userAgent',
  }),
);

export interface ThrottleSettings {
  /** Steady requests a second, per route. */
  rateLimit: number;
  /** Requests above the rate a route may take at once. */
  burstLimit: number;
}

/** Custom domains of the store API: a store's login, verify, logout and handoff answer on its own domain. */
export interface StoreDomainSettings {
  /** `shop.example.com`, or a wildcard (`*.stores.example.com`) for every store under it. */
  domainNames: string[];
  /** ACM certificate in the stack's region covering every name. */
  certificateArn: string;
}

export interface StoreHttpStackProps extends StageStackProps {
  /** The default route throttle of each API's stage. */
  throttle: Record<RouteSpec['api'], ThrottleSettings>;
  storeDomain?: StoreDomainSettings;
}

/**
 * The two HTTP APIs (/v1, and the stores' own domains) with their stages, and no route: each area
 * stack attaches its own. Their URLs are what clients and the stores' DNS point to, so they live
 * apart from the areas, whose stacks come and go with the route table. Also the stage's alarm
 * topic, which the areas' alarms notify and which people subscribe to once.
 */
export class StoreHttpStack extends Stack {
  readonly apis: Record<RouteSpec['api'], apigwv2.HttpApi>;
  readonly stages: Record<RouteSpec['api'], apigwv2.HttpStage>;
  /** The API ids as exports, imported by the area stacks to attach their routes. */
  readonly apiIds: Record<RouteSpec['api'], string>;
  readonly alarmTopic: sns.Topic;
  /** The alarm topic's ARN as an export, imported by the area stacks' alarms. */
  readonly alarmTopicArn: string;

  constructor(scope: Construct, id: string, props: StoreHttpStackProps) {
    super(scope, id, props);
    const api = this.createHttpApi('Api', 'Store API /v1', props.stage, props.throttle.api);
    const store = this.createHttpApi('StoreDomainApi', "Store API on the stores' own domains", props.stage, props.throttle.store);
    this.apis = { api: api.api, store: store.api };
    this.stages = { api: api.stage, store: store.stage };
    this.apiIds = {
      api: this.exportValue(this.apis.api.apiId, { name: `${this.stackName}-ApiId` }),
      store: this.exportValue(this.apis.store.apiId, { name: `${this.stackName}-StoreDomainApiId` }),
    };
    this.alarmTopic = this.createAlarmTopic();
    this.alarmTopicArn = this.exportValue(this.alarmTopic.topicArn, { name: `${this.stackName}-AlarmTopicArn` });
    if (props.storeDomain) this.mapStoreDomains(props.storeDomain);

    new CfnOutput(this, 'ApiUrl', { value: `${this.apis.api.apiEndpoint}/v1`, description: 'Base URL of the /v1 API' });
    new CfnOutput(this, 'StoreDomainApiUrl', {
      value: this.apis.store.apiEndpoint,
      description: "Origin the stores' own domains point to (store-domain routes)",
    });
  }

  private createHttpApi(id: string, description: string, stage: string, throttle: ThrottleSettings) {
    const api = new apigwv2.HttpApi(this, id, { apiName: `${this.stackName}-${id}`, description, createDefaultStage: false });
    const accessLogs = new logs.LogGroup(this, `${id}AccessLogs`, { retention: LOG_RETENTION, removalPolicy: removalPolicyOf(stage) });
    // Auto-deploy also publishes the routes the area stacks add later, whatever stack they are in.
    const httpStage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: API_ACCESS_LOG_FORMAT },
      // Every route's own limit (not a total): beyond it API Gateway answers 429 before any Lambda or table read is paid for.
      throttle,
    });
    return { api, stage: httpStage };
  }

  private createAlarmTopic(): sns.Topic {
    const topic = new sns.Topic(this, 'Alarms', { displayName: `${this.stackName} alarms`, enforceSSL: true });
    // The topic policy CDK writes for enforceSSL replaces SNS's default one: CloudWatch is allowed back in, for this account's alarms only.
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { ArnLike: { 'aws:SourceArn': this.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) } },
      }),
    );
    Validations.of(topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason: 'Alarm notifications carry alarm names and states, no data; CloudWatch cannot publish to a topic under the AWS-managed SNS key, and a customer key for them is not worth its cost.',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn, description: 'Subscribe to it (e-mail, chat, paging) to hear of every alarm of the stage' });
    return topic;
  }

  /** Each domain serves the store API's $default stage; the stores' DNS points at its regional name (output). */
  private mapStoreDomains({ domainNames, certificateArn }: StoreDomainSettings): void {
    const certificate = acm.Certificate.fromCertificateArn(this, 'StoreDomainCertificate', certificateArn);
    domainNames.forEach((domainName, index) => {
      const id = `StoreDomain${index + 1}`;
      const domain = new apigwv2.DomainName(this, id, { domainName, certificate, securityPolicy: apigwv2.SecurityPolicy.TLS_1_2 });
      new apigwv2.ApiMapping(this, `${id}Mapping`, { api: this.apis.store, domainName: domain, stage: this.stages.store });
      new CfnOutput(this, `${id}Target`, { value: domain.regionalDomainName, description: `CNAME target of ${domainName}` });
    });
  }
}
