import { Stack, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import {
  CREDENTIAL_PK_PREFIX,
  CREDENTIAL_USE_ATTRIBUTE,
  credentialUseTableActions,
  IDEMPOTENCY_PK_PREFIX,
  idempotencyTableActions,
  LIST_COUNT_PK_PREFIX,
  listCountTableActions,
} from '#lib/db/table.ts';
import { notesCredentialUse, takesIdempotencyKey, writesCountPartitions, type RouteSpec } from '#lib/http/route.ts';
import { bundleDirOf, EndpointFunction } from '#infra/constructs/endpoint-function.ts';
import { FunctionGroupAlarms } from '#infra/constructs/function-group-alarms.ts';
import type { DataExports } from '#infra/stacks/data-stack.ts';
import { removalPolicyOf, type StageStackProps } from '#infra/stacks/stage.ts';
import { tableAccessStatement } from '#infra/stacks/table-grant.ts';

export interface AreaStackProps extends StageStackProps {
  /** The area's name: its functions' group in the request metrics and alarms. */
  area: string;
  /** The routes of one area file of lib/routes, keyed by function name. */
  routes: Readonly<Record<string, RouteSpec>>;
  /** Output of infra/build.ts: one `<function name>/index.mjs` per route. */
  functionsDir: string;
  data: DataExports;
  apiIds: Record<RouteSpec['api'], string>;
  /** The stage's alarm topic (exported by the HTTP stack). */
  alarmTopicArn: string;
  /** CloudWatch namespace of the request metrics. */
  metricsNamespace: string;
  /** Sender of the mails; its address or domain must be a verified SES identity. */
  mailFrom?: string;
  /** The stage offers the TEST payment gateway (context `testGateway=true`; section 13). */
  testGateway?: boolean;
}

export const toPascalCase = (name: string) => name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, letter: string) => letter.toUpperCase());

const AUTHORIZATION_IN_FUNCTIONS =
  'Every route authenticates in its function (API token, API key, buyer access token or session cookie, looked up in the table, per the spec); public routes are public by design.';

/**
 * One area of the route table: a Lambda per route, attached to its HTTP API, with the permissions
 * its route entry states (access, uses), and the alarms of the area as one group of functions.
 * 7 resources a route (function, role, policy, log group, integration, route, permission), plus
 * the alarms (FunctionGroupAlarms).
 */
export class AreaStack extends Stack {
  readonly functions = new Map<string, EndpointFunction>();
  private readonly importedApis = new Map<RouteSpec['api'], apigwv2.IHttpApi>();

  constructor(
    scope: Construct,
    id: string,
    private readonly props: AreaStackProps,
  ) {
    super(scope, id, props);
    for (const [name, spec] of Object.entries(props.routes)) {
      const codeDir = bundleDirOf(props.functionsDir, name);
      const uses = new Set(spec.uses ?? []);
      const endpoint = new EndpointFunction(this, toPascalCase(name), {
        codeDir,
        description: `${spec.method} ${spec.path}`,
        logRemovalPolicy: removalPolicyOf(props.stage),
        environment: {
          TABLE_NAME: props.data.tableName,
          METRICS_NAMESPACE: props.metricsNamespace,
          FUNCTION_GROUP: props.area,
          // Not a permission, only a URL prefix: any function may render a package's image.
          IMAGES_BASE_URL: props.data.imagesBaseUrl,
          ...(uses.has('images') && { IMAGES_BUCKET: props.data.imagesBucketName }),
          ...(uses.has('mail') && { MAILER: 'ses', ...(props.mailFrom && { MAIL_FROM: props.mailFrom }) }),
          ...(uses.has('secret') && { SERVER_SECRET_ARN: props.data.serverSecretArn }),
          // Only where the route table grants the key: any other function has no keyring at all (lib/payments/secrets.ts fails naming it).
          ...((uses.has('provider-secrets-seal') || uses.has('provider-secrets-open')) && { PAYMENT_SECRETS_KEY_ID: props.data.paymentSecretsKeyArn }),
          ...(props.testGateway && { TEST_GATEWAY: '1' }),
        },
      });
      this.grantRouteAccess(endpoint, spec);
      new apigwv2.HttpRoute(endpoint, 'Route', {
        httpApi: this.apiOf(spec.api),
        routeKey: apigwv2.HttpRouteKey.with(spec.path, apigwv2.HttpMethod[spec.method]),
        integration: new HttpLambdaIntegration('Integration', endpoint.function),
      });
      Validations.of(endpoint).acknowledge({ id: 'AwsSolutions-APIG4', reason: AUTHORIZATION_IN_FUNCTIONS });
      this.functions.set(name, endpoint);
    }
    new FunctionGroupAlarms(this, 'Alarms', {
      group: props.area,
      functions: [...this.functions.values()].map((endpoint) => endpoint.function),
      metricsNamespace: props.metricsNamespace,
      topic: sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn),
    });
  }

  /** Imported once per stack, and only for the APIs this area serves. */
  private apiOf(api: RouteSpec['api']): apigwv2.IHttpApi {
    let imported = this.importedApis.get(api);
    if (!imported) {
      imported = apigwv2.HttpApi.fromHttpApiAttributes(this, `${toPascalCase(api)}HttpApi`, { httpApiId: this.props.apiIds[api] });
      this.importedApis.set(api, imported);
    }
    return imported;
  }

  /**
   * Least privilege from the route entry: the table actions of its access (table-grant.ts);
   * bucket, SES and the server secret only for their users.
   */
  private grantRouteAccess(endpoint: EndpointFunction, spec: RouteSpec): void {
    const { data, mailFrom } = this.props;
    const tableAccess = tableAccessStatement(spec.access, data.tableArn);
    if (tableAccess) endpoint.role.addToPrincipalPolicy(tableAccess);
    // A POST that only reads still keeps its Idempotency-Key answer: exactly those writes, on those partitions only.
    if (takesIdempotencyKey(spec) && spec.access !== 'write') {
      endpoint.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: idempotencyTableActions.map((action) => `dynamodb:${action}`),
          resources: [data.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${IDEMPOTENCY_PK_PREFIX}*`] } },
        }),
      );
    }
    // A page-mode list (or a package read) that only reads may still write a list's first count or the first apply-all tag ids, on the counters' partitions only.
    if (writesCountPartitions(spec)) {
      endpoint.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: listCountTableActions.map((action) => `dynamodb:${action}`),
          resources: [data.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${LIST_COUNT_PK_PREFIX}*`] } },
        }),
      );
    }
    // A route of an API token or key that only reads may still move its credential's "last used" mark: that attribute, on the credentials' partitions only.
    if (notesCredentialUse(spec) && spec.access !== 'write') {
      endpoint.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: credentialUseTableActions.map((action) => `dynamodb:${action}`),
          resources: [data.tableArn],
          conditions: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${CREDENTIAL_PK_PREFIX}*`] },
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', CREDENTIAL_USE_ATTRIBUTE] },
            StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
          },
        }),
      );
    }

    const uses = new Set(spec.uses ?? []);
    if (uses.has('images')) {
      // Object level only: upload (also what a presigned POST is checked against), replace, delete.
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], resources: [`${data.imagesBucketArn}/*`] }));
      // Without ListBucket, S3 answers 403 instead of 404 for a key that is not there (yet).
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [data.imagesBucketArn] }));
      Validations.of(endpoint).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${this.exportNameOf(data.imagesBucketArn)}/*]`,
        reason: 'Image objects get a new random key per upload, so the keys are not known in advance.',
      });
    }
    if (uses.has('secret')) {
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [data.serverSecretArn] }));
    }
    // The payment secrets key: Encrypt for the one route that writes provider secrets, Decrypt for those that call providers with them.
    const keyActions = [...(uses.has('provider-secrets-seal') ? ['kms:Encrypt'] : []), ...(uses.has('provider-secrets-open') ? ['kms:Decrypt'] : [])];
    if (keyActions.length > 0) {
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: keyActions, resources: [data.paymentSecretsKeyArn] }));
    }
    if (uses.has('mail')) {
      endpoint.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ses:SendEmail'], resources: this.mailIdentityArns(mailFrom) }));
      if (!mailFrom) {
        Validations.of(endpoint).acknowledge({
          id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
          reason: 'No mailFrom in the CDK context: any verified identity of this account and region. Pass -c mailFrom=... to scope it.',
        });
      }
    }
  }

  /** cdk-nag writes an imported value as the name of its export. */
  private exportNameOf(importedValue: string): string {
    return (this.resolve(importedValue) as { 'Fn::ImportValue': string })['Fn::ImportValue'];
  }

  /** SES authorizes a send against the sender's address identity or its domain identity, whichever is verified. */
  private mailIdentityArns(mailFrom: string | undefined): string[] {
    const identityArn = (identity: string) => this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity });
    if (!mailFrom) return [identityArn('*')];
    const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
    return [identityArn(mailFrom), identityArn(domain)];
  }
}
