import { ArnFormat, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { RouteSpec } from '#lib/http/route.ts';
import type { StageStackProps } from '#infra/stacks/stage.ts';

/** Custom domains of the store API: a store's login, verify, logout and handoff answer on its own domain. */
export interface StoreDomainSettings {
  /** `shop.example.com`, or a wildcard (`*.stores.example.com`) for every store under it. */
  domainNames: string[];
  /** ACM certificate in the stack's region covering every name. */
  certificateArn: string;
}

export interface StoreHttpStackProps extends StageStackProps {
  storeDomain?: StoreDomainSettings;
}

/**
 * The two HTTP APIs (/v1, and the stores' own domains) and the store domains, with no route and no
 * stage: each area stack attaches its routes, and the stage stack (api-stage-stack.ts), deployed
 * after them, their stage. Their URLs are what clients and the stores' DNS point to, so they live
 * apart from the areas, whose stacks come and go with the route table. Also the stage's alarm
 * topic, which the areas' alarms notify and which people subscribe to once.
 */
export class StoreHttpStack extends Stack {
  readonly apis: Record<RouteSpec['api'], apigwv2.HttpApi>;
  /** The API ids as exports, imported by the area stacks to attach their routes. */
  readonly apiIds: Record<RouteSpec['api'], string>;
  readonly alarmTopic: sns.Topic;
  /** The alarm topic's ARN as an export, imported by the area stacks' alarms. */
  readonly alarmTopicArn: string;

  constructor(scope: Construct, id: string, props: StoreHttpStackProps) {
    super(scope, id, props);
    const httpApi = (id: string, description: string) => new apigwv2.HttpApi(this, id, { apiName: `${this.stackName}-${id}`, description, createDefaultStage: false });
    this.apis = { api: httpApi('Api', 'Store API /v1'), store: httpApi('StoreDomainApi', "Store API on the stores' own domains") };
    this.apiIds = {
      api: this.exportValue(this.apis.api.apiId, { name: `${this.stackName}-ApiId` }),
      store: this.exportValue(this.apis.store.apiId, { name: `${this.stackName}-StoreDomainApiId` }),
    };
    this.alarmTopic = this.createAlarmTopic();
    this.alarmTopicArn = this.exportValue(this.alarmTopic.topicArn, { name: `${this.stackName}-AlarmTopicArn` });
    if (props.storeDomain) this.createStoreDomains(props.storeDomain);

    new CfnOutput(this, 'ApiUrl', { value: `${this.apis.api.apiEndpoint}/v1`, description: 'Base URL of the /v1 API' });
    new CfnOutput(this, 'StoreDomainApiUrl', {
      value: this.apis.store.apiEndpoint,
      description: "Origin the stores' own domains point to (store-domain routes)",
    });
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
      reason:
        'Alarm notifications carry alarm names and states, no data; CloudWatch cannot publish to a topic under the AWS-managed SNS key, and a customer key for them is not worth its cost.',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn, description: 'Subscribe to it (e-mail, chat, paging) to hear of every alarm of the stage' });
    return topic;
  }

  /** The stores' DNS points at each domain's regional name (output); the stage stack maps each to the store API's $default stage. */
  private createStoreDomains({ domainNames, certificateArn }: StoreDomainSettings): void {
    const certificate = acm.Certificate.fromCertificateArn(this, 'StoreDomainCertificate', certificateArn);
    domainNames.forEach((domainName, index) => {
      const id = `StoreDomain${index + 1}`;
      const domain = new apigwv2.DomainName(this, id, { domainName, certificate, securityPolicy: apigwv2.SecurityPolicy.TLS_1_2 });
      new CfnOutput(this, `${id}Target`, { value: domain.regionalDomainName, description: `CNAME target of ${domainName}` });
    });
  }
}
