import type { Construct } from 'constructs';
import type { RouteSpec } from '#lib/http/route.ts';
import { routeAreas } from '#lib/routes/index.ts';
import type { ConsumerSpec } from '#lib/routes/consumers.ts';
import { jobs as jobTable, type JobSpec } from '#lib/routes/jobs.ts';
import { AreaStack, toPascalCase } from '#infra/stacks/area-stack.ts';
import { StoreDataStack } from '#infra/stacks/data-stack.ts';
import { ApiStageStack, type StageThrottle } from '#infra/stacks/api-stage-stack.ts';
import { StoreDocsStack } from '#infra/stacks/docs-stack.ts';
import { StoreHttpStack, type StoreDomainSettings } from '#infra/stacks/http-stack.ts';
import { JobsStack } from '#infra/stacks/jobs-stack.ts';
import { isProduction } from '#infra/stacks/stage.ts';
import { THROTTLE_DEFAULTS } from '#infra/stage-context.ts';
import { StoreWebhookStack } from '#infra/stacks/webhook-stack.ts';

export interface StoreApiProps {
  stage: string;
  /** Output of infra/build.ts: one `<function name>/index.mjs` per route. */
  functionsDir: string;
  /** Output of infra/docs.ts: the API reference page's files. */
  docsDir: string;
  /** Sender of the mails; its address or domain must be a verified SES identity. Required on prod. */
  mailFrom?: string;
  /** CloudWatch namespace of the request metrics; `StoreApi/<stage>` by default. */
  metricsNamespace?: string;
  /** Offer the TEST payment gateway on this stage (section 13); never on prod. */
  testGateway?: boolean;
  /** Each API's throttle, applied to every one of its routes, and the public storefront routes' own; THROTTLE_DEFAULTS (cdk.json) by default. */
  throttle?: StageThrottle;
  /** Custom domains of the store API; without them the stores' DNS points at the API's own endpoint. */
  storeDomain?: StoreDomainSettings;
  /** Defaults to the route table's areas; tests pass areas of probe routes. */
  areas?: Readonly<Record<string, Readonly<Record<string, RouteSpec>>>>;
  /** Defaults to the job table (lib/routes/jobs.ts). */
  jobs?: Readonly<Record<string, JobSpec>>;
  /** Defaults to the consumer table (lib/routes/consumers.ts). */
  consumers?: Readonly<Record<string, ConsumerSpec>>;
}

export interface StoreApiStacks {
  data: StoreDataStack;
  http: StoreHttpStack;
  /** The APIs' `$default` stages, deployed after every area (`StoreApi-<stage>-Stage`). */
  apiStage: ApiStageStack;
  /** By area name (the file name in lib/routes). */
  areas: Map<string, AreaStack>;
  /** The scheduled jobs (`StoreApi-<stage>-Jobs`). */
  jobs: JobsStack;
  webhooks: StoreWebhookStack;
  /** The API reference page, deployed to the images bucket's `docs/` (`StoreApi-<stage>-Docs`). */
  docs: StoreDocsStack;
}

/**
 * The store API of one stage as separate stacks, so that the route table can grow without
 * meeting CloudFormation's 500 resources a stack:
 * - `StoreApi-<stage>`: the data (table, images bucket, CDN). It keeps the name and the logical
 *   ids of the single stack it was carved from, so a stage deployed before keeps its table.
 * - `StoreApi-<stage>-Http`: the two HTTP APIs, whose URLs outlive any route.
 * - `StoreApi-<stage>-Stage`: their `$default` stages, after every area: the public storefront
 *   routes' throttles are stage settings keyed by route, which need their routes to exist.
 * - `StoreApi-<stage>-Webhooks`: the consumers of lib/routes/consumers.ts: webhook delivery (stream router, queue, sender, alarm).
 * - `StoreApi-<stage>-<Area>`: one per area of lib/routes (about 7 resources a route); a new
 *   area file gets its stack from its line in `routeAreas`.
 * - `StoreApi-<stage>-Jobs`: the scheduled jobs of lib/routes/jobs.ts (EventBridge rules).
 * - `StoreApi-<stage>-Docs`: the API reference page's static files, served by the CDN at `/docs`.
 * Top-level stacks rather than nested ones: an area deploys, diffs and rolls back alone
 * (`cdk deploy StoreApi-prod-Order`), its template is a plain file in cdk.out, and the data
 * stack cannot be deleted while a function still imports the table or the bucket. The price,
 * cross-stack exports that cannot change while imported, stays small: ten values, named in
 * DataExports, StoreHttpStack.apiIds and StoreHttpStack.alarmTopicArn.
 */
export function addStoreApiStacks(scope: Construct, props: StoreApiProps): StoreApiStacks {
  const { stage } = props;
  if (isProduction(stage) && props.testGateway) throw new Error('The TEST payment gateway takes no money: it is never offered on the prod stage (drop -c testGateway=true).');
  if (isProduction(stage) && !props.mailFrom) {
    throw new Error(
      'The prod stage sends login codes through SES and has no sender: deploy it with -c mailFrom=no-reply@your.domain, an address (or domain) verified as an SES identity in this account and region.',
    );
  }
  const prefix = `StoreApi-${stage}`;
  const throttle = props.throttle ?? THROTTLE_DEFAULTS;
  const data = new StoreDataStack(scope, prefix, {
    stage,
    description: `store-api (${stage}): DynamoDB table, images bucket and CDN`,
  });
  const http = new StoreHttpStack(scope, `${prefix}-Http`, {
    stage,
    description: `store-api (${stage}): the HTTP APIs and the alarm topic`,
    storeDomain: props.storeDomain,
  });
  const areas = new Map<string, AreaStack>();
  const areaRoutes = props.areas ?? routeAreas;
  for (const [area, routes] of Object.entries(areaRoutes)) {
    const stack = new AreaStack(scope, `${prefix}-${toPascalCase(area)}`, {
      stage,
      area,
      routes,
      functionsDir: props.functionsDir,
      mailFrom: props.mailFrom,
      testGateway: props.testGateway,
      data: data.exports,
      apiIds: http.apiIds,
      alarmTopicArn: http.alarmTopicArn,
      metricsNamespace: props.metricsNamespace ?? `StoreApi/${stage}`,
      description: `store-api (${stage}): the functions and routes of lib/routes/${area}.ts`,
    });
    // Exports are imported by name, which CDK does not see as a dependency: the deploy order is stated here.
    stack.addStackDependency(data, 'imports the table, bucket and CDN exports');
    stack.addStackDependency(http, 'attaches its routes to the HTTP APIs');
    areas.set(area, stack);
  }
  const apiStage = new ApiStageStack(scope, `${prefix}-Stage`, {
    stage,
    apiIds: http.apiIds,
    throttle,
    routes: Object.values(areaRoutes).flatMap((routes) => Object.values(routes)),
    storeDomainNames: props.storeDomain?.domainNames,
    description: `store-api (${stage}): the stages of the HTTP APIs, with each route's throttle`,
  });
  apiStage.addStackDependency(http, 'deploys the stages of its APIs and maps its store domains');
  // A route's throttle names a route that must exist: every area first.
  for (const area of areas.values()) apiStage.addStackDependency(area, 'sets the throttle of its routes');
  const jobs = new JobsStack(scope, `${prefix}-Jobs`, {
    stage,
    jobs: props.jobs ?? jobTable,
    functionsDir: props.functionsDir,
    data: data.exports,
    alarmTopicArn: http.alarmTopicArn,
    description: `store-api (${stage}): the scheduled jobs of lib/routes/jobs.ts`,
  });
  jobs.addStackDependency(data, 'imports the table exports');
  jobs.addStackDependency(http, 'its alarms notify the alarm topic');
  const webhooks = new StoreWebhookStack(scope, `${prefix}-Webhooks`, {
    stage,
    functionsDir: props.functionsDir,
    data: data.exports,
    consumers: props.consumers,
    description: `store-api (${stage}): the stream and queue consumers of lib/routes/consumers.ts (webhook delivery)`,
  });
  webhooks.addStackDependency(data, 'reads the table and its stream');
  const docs = new StoreDocsStack(scope, `${prefix}-Docs`, {
    stage,
    docsDir: props.docsDir,
    data: data.exports,
    description: `store-api (${stage}): the API reference page, static files behind the CDN's /docs`,
  });
  docs.addStackDependency(data, 'writes to the images bucket and invalidates the CDN');
  return { data, http, apiStage, areas, jobs, webhooks, docs };
}
