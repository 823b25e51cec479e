import { CfnOutput, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as logs from 'aws-cdk-lib/aws-logs';
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

/**
 * The two HTTP APIs (/v1, and the stores' own domains) with their stages, and no route: each area
 * stack attaches its own. Their URLs are what clients and the stores' DNS point to, so they live
 * apart from the areas, whose stacks come and go with the route table.
 */
export class StoreHttpStack extends Stack {
  readonly apis: Record<RouteSpec['api'], apigwv2.HttpApi>;
  /** The API ids as exports, imported by the area stacks to attach their routes. */
  readonly apiIds: Record<RouteSpec['api'], string>;

  constructor(scope: Construct, id: string, props: StageStackProps) {
    super(scope, id, props);
    this.apis = {
      api: this.createHttpApi('Api', 'Store API /v1', props.stage),
      store: this.createHttpApi('StoreDomainApi', "Store API on the stores' own domains", props.stage),
    };
    this.apiIds = {
      api: this.exportValue(this.apis.api.apiId, { name: `${this.stackName}-ApiId` }),
      store: this.exportValue(this.apis.store.apiId, { name: `${this.stackName}-StoreDomainApiId` }),
    };

    new CfnOutput(this, 'ApiUrl', { value: `${this.apis.api.apiEndpoint}/v1`, description: 'Base URL of the /v1 API' });
    new CfnOutput(this, 'StoreDomainApiUrl', {
      value: this.apis.store.apiEndpoint,
      description: "Origin the stores' own domains point to (store-domain routes)",
    });
  }

  private createHttpApi(id: string, description: string, stage: string): apigwv2.HttpApi {
    const api = new apigwv2.HttpApi(this, id, { apiName: `${this.stackName}-${id}`, description, createDefaultStage: false });
    const accessLogs = new logs.LogGroup(this, `${id}AccessLogs`, { retention: LOG_RETENTION, removalPolicy: removalPolicyOf(stage) });
    // Auto-deploy also publishes the routes the area stacks add later, whatever stack they are in.
    api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: API_ACCESS_LOG_FORMAT },
    });
    return api;
  }
}
