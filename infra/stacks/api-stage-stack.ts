import { Stack } from 'aws-cdk-lib';
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

export interface ThrottleSettings {
  /** Steady requests a second, per route. */
  rateLimit: number;
  /** Requests above the rate a route may take at once. */
  burstLimit: number;
}

export interface StageThrottle extends Record<RouteSpec['api'], ThrottleSettings> {
  /** Each public route of the storefront (`isPublicStorefrontRoute`): lower than the /v1 API's default. */
  storefrontPublic: ThrottleSettings;
}

const UNAUTHENTICATED: ReadonlySet<RouteSpec['credential']> = new Set(['public', 'buyerStore', 'buyerOptional']);

/**
 * The storefront's routes that anyone may call with no credential at all (the catalog, quote,
 * guest checkout, login codes, visits, CORS preflights): what a script can run without limit
 * and without an account, so each has a throttle of its own, lower than the API's default.
 */
export const isPublicStorefrontRoute = (spec: Pick<RouteSpec, 'api' | 'path' | 'credential'>) =>
  spec.api === 'api' && (spec.path === '/v1/webstore' || spec.path.startsWith('/v1/webstore/')) && UNAUTHENTICATED.has(spec.credential);

/**
 * A payment provider's notifications: no credential either (the key in the path costs a table read
 * to check), so they get the same low throttle of their own.
 */
export const isPaymentNotifyRoute = (spec: Pick<RouteSpec, 'api' | 'path'>) => spec.api === 'api' && spec.path.startsWith('/v1/payment/notify/');

/** The routes that get the low per-route throttle (`storefrontPublic`) instead of the API's default. */
export const hasLowThrottle = (spec: Pick<RouteSpec, 'api' | 'path' | 'credential'>) => isPublicStorefrontRoute(spec) || isPaymentNotifyRoute(spec);

export const routeKeyOf = (spec: Pick<RouteSpec, 'method' | 'path'>) => `${spec.method} ${spec.path}`;

export interface ApiStageStackProps extends StageStackProps {
  /** The API ids (exported by the HTTP stack). */
  apiIds: Record<RouteSpec['api'], string>;
  throttle: StageThrottle;
  /** Every route of the app (all areas): the public storefront ones get their own throttle. */
  routes: readonly RouteSpec[];
  /** Custom domains of the store API (created by the HTTP stack), mapped to its stage here. */
  storeDomainNames?: readonly string[];
}

/**
 * The `$default` stage of both HTTP APIs, their access logs and the store domains' mappings.
 * A stage of its own, deployed after every area stack: a route's own throttle is a RouteSettings
 * entry of the stage keyed by its route key, and CloudFormation refuses one whose route does not
 * exist yet, so the stage must come after the routes (the HTTP stack, which holds the APIs, comes
 * before them). Auto-deploy publishes whatever routes the area stacks attach.
 */
export class ApiStageStack extends Stack {
  readonly stages: Record<RouteSpec['api'], apigwv2.HttpStage>;

  constructor(scope: Construct, id: string, props: ApiStageStackProps) {
    super(scope, id, props);
    const publicRoutes = props.routes.filter(hasLowThrottle);
    this.stages = {
      api: this.createStage('api', 'Api', props, publicRoutes),
      store: this.createStage('store', 'StoreDomainApi', props, []),
    };
    (props.storeDomainNames ?? []).forEach((domainName, index) => {
      const mapping = new apigwv2.CfnApiMapping(this, `StoreDomain${index + 1}Mapping`, { apiId: props.apiIds.store, domainName, stage: this.stages.store.stageName });
      mapping.addDependency(this.stages.store.node.defaultChild as apigwv2.CfnStage);
    });
  }

  private createStage(apiName: RouteSpec['api'], id: string, props: ApiStageStackProps, publicRoutes: readonly RouteSpec[]): apigwv2.HttpStage {
    const api = apigwv2.HttpApi.fromHttpApiAttributes(this, `${id}HttpApi`, { httpApiId: props.apiIds[apiName] });
    const accessLogs = new logs.LogGroup(this, `${id}AccessLogs`, { retention: LOG_RETENTION, removalPolicy: removalPolicyOf(props.stage) });
    const stage = new apigwv2.HttpStage(this, `${id}Stage`, {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new apigwv2.LogGroupLogDestination(accessLogs), format: API_ACCESS_LOG_FORMAT },
      // Every route's own limit (not a total): beyond it API Gateway answers 429 before any Lambda or table read is paid for.
      throttle: props.throttle[apiName],
    });
    if (publicRoutes.length > 0) {
      const { rateLimit, burstLimit } = props.throttle.storefrontPublic;
      // RouteSettings is a JSON property: CloudFormation's own names, as written.
      (stage.node.defaultChild as apigwv2.CfnStage).routeSettings = Object.fromEntries(
        publicRoutes.map((spec) => [routeKeyOf(spec), { ThrottlingRateLimit: rateLimit, ThrottlingBurstLimit: burstLimit }]),
      );
    }
    return stage;
  }
}
